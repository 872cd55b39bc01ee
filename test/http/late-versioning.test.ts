// Versioning switched on over existing data, and the fields versioning owns. Documents stored
// before versioning (no _version, no copies) count as version 1: for `?version=1`, for a
// versioned data_relation, and when they are first changed (Eve's tests/versioning.py
// TestLateVersioning). A client cannot set _version or _latest_version (test_automatic_fields).
// A versioned relation on a field other than the id embeds the version it names, looking the value
// up where Eve does: in the copies for a versioned field, in the current document for an
// unversioned one (tests/versioning.py TestVersionedDataRelationCustomField and
// TestVersionedDataRelationUnversionedField, test_referential_integrity).
import { ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    docs: { versioning: true, schema: { title: { type: "string" }, code: { type: "string", unique: true } } },
    refs: {
      schema: {
        byId: { type: "dict", schema: { _id: { type: "objectid" }, _version: { type: "integer" } }, data_relation: { resource: "docs", version: true, embeddable: true } },
        byCode: { type: "dict", schema: { code: { type: "string" }, _version: { type: "integer" } }, data_relation: { resource: "docs", field: "code", version: true, embeddable: true } },
      },
    },
    // Eve's tests/versioning.py: contacts with a versioned `ref` and an unversioned `prog`.
    contacts: { versioning: true, item_methods: ["GET", "PUT"], schema: { ref: { type: "string", unique: true }, prog: { type: "integer", versioned: false } } },
    invoices: {
      versioning: true,
      schema: {
        byRef: { type: "dict", schema: { ref: { type: "string" }, _version: { type: "integer" } }, data_relation: { resource: "contacts", field: "ref", version: true, embeddable: true } },
        byProg: { type: "dict", schema: { prog: { type: "integer" }, _version: { type: "integer" } }, data_relation: { resource: "contacts", field: "prog", version: true, embeddable: true } },
      },
    },
  },
};

describe("versioning over documents stored before it", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  /** Stores a document as it was before versioning: no _version, no copies. */
  async function legacy(fields: Record<string, unknown>): Promise<string> {
    const app = api.handler.app;
    const id = new ObjectId();
    await app.data.insert(null, app.config.DOMAIN.docs!, [{ _id: id, ...fields }]);
    return id.toHexString();
  }

  it("refuses _version and _latest_version from clients", async () => {
    for (const field of ["_version", "_latest_version"]) {
      const response = await api.post("/docs", { title: "x", [field]: 1 });
      expect(response.status).toBe(422);
      expect((await json(response))._issues).toEqual({ [field]: "unknown field" });
    }
  });

  it("shows such a document as version 1, also when asked for ?version=1", async () => {
    const id = await legacy({ title: "old" });
    expect(await json(await api.get(`/docs/${id}`))).toMatchObject({ title: "old", _version: 1, _latest_version: 1 });
    const first = await api.get(`/docs/${id}?version=1`);
    expect(first.status).toBe(200);
    expect(await json(first)).toMatchObject({ title: "old", _version: 1 });
    expect((await api.get(`/docs/${id}?version=2`)).status).toBe(404);
  });

  it("keeps version 1 when it is first changed, which becomes version 2", async () => {
    const id = await legacy({ title: "before" });
    const etag = (await json(await api.get(`/docs/${id}`)))._etag as string;
    const patched = await api.patch(`/docs/${id}`, { title: "after" }, { "If-Match": etag });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ _version: 2, _latest_version: 2 });
    expect(await json(await api.get(`/docs/${id}?version=1`))).toMatchObject({ title: "before", _version: 1, _latest_version: 2 });
    expect(await json(await api.get(`/docs/${id}?version=2`))).toMatchObject({ title: "after", _version: 2 });
  });

  it("lets a versioned data_relation name it at version 1, and embeds it", async () => {
    const id = await legacy({ title: "cited" });
    expect((await api.post("/refs", { byId: { _id: id, _version: 2 } })).status).toBe(422);
    const created = await api.post("/refs", { byId: { _id: id, _version: 1 } });
    expect(created.status).toBe(201);
    const ref = (await json(created))._id as string;
    expect((await json(await api.get(`/refs/${ref}?embedded={"byId":1}`))).byId).toMatchObject({ _id: id, title: "cited", _version: 1 });
  });
});

describe("a versioned data_relation on a field other than the id", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  it("embeds the version it names", async () => {
    const doc = await json(await api.post("/docs", { title: "first", code: "C1" }));
    expect((await api.patch(`/docs/${doc._id as string}`, { title: "second" }, { "If-Match": doc._etag as string })).status).toBe(200);
    for (const [version, title] of [[1, "first"], [2, "second"]] as const) {
      const created = await api.post("/refs", { byCode: { code: "C1", _version: version } });
      expect(created.status).toBe(201);
      const ref = await json(await api.get(`/refs/${(await json(created))._id as string}?embedded={"byCode":1}`));
      expect(ref.byCode).toMatchObject({ code: "C1", title, _version: version, _latest_version: 2 });
    }
    expect((await api.post("/refs", { byCode: { code: "C1", _version: 3 } })).status).toBe(422);
  });

  // A contact whose versioned `ref` and unversioned `prog` change from version 1 to version 2.
  async function changedContact(refs: [string, string], progs: [number, number]): Promise<string> {
    const created = await json(await api.post("/contacts", { ref: refs[0], prog: progs[0] }));
    const put = await api.put(`/contacts/${created._id as string}`, { ref: refs[1], prog: progs[1] }, { "If-Match": created._etag as string });
    expect(put.status).toBe(200);
    return created._id as string;
  }

  async function embedded(response: Response, field: string): Promise<Record<string, unknown>> {
    expect(response.status).toBe(201);
    const id = (await json(response))._id as string;
    return (await json(await api.get(`/invoices/${id}?embedded={"${field}":1}`)))[field];
  }

  it("finds a versioned field's value in the version that held it (TestVersionedDataRelationCustomField)", async () => {
    const id = await changedContact(["ref value 1", "ref value 2"], [123, 456]);
    const refused = await api.post("/invoices", { byRef: { ref: "ref value 1", _version: 2 } });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ byRef: "value 'ref value 1' must exist in resource 'contacts', field 'ref' at version '2'." });
    const first = await embedded(await api.post("/invoices", { byRef: { ref: "ref value 1", _version: 1 } }), "byRef");
    expect(first).toMatchObject({ _id: id, ref: "ref value 1", _version: 1, _latest_version: 2 });
    expect(await embedded(await api.post("/invoices", { byRef: { ref: "ref value 2", _version: 2 } }), "byRef")).toMatchObject({ _id: id, ref: "ref value 2", _version: 2 });
  });

  it("finds an unversioned field's value in the current document, at any of its versions (TestVersionedDataRelationUnversionedField)", async () => {
    const id = await changedContact(["ref value 3", "ref value 4"], [789, 1011]);
    // `prog` is not kept per version: the current value names every version of the document.
    const first = await embedded(await api.post("/invoices", { byProg: { prog: 1011, _version: 1 } }), "byProg");
    expect(first).toMatchObject({ _id: id, ref: "ref value 3", prog: 1011, _version: 1, _latest_version: 2 });
    const refused = await api.post("/invoices", { byProg: { prog: 789, _version: 1 } });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ byProg: "value '789' must exist in resource 'contacts', field 'prog' at version '1'." });
    expect((await api.post("/invoices", { byProg: { prog: 1011, _version: 3 } })).status).toBe(422);
  });
});
