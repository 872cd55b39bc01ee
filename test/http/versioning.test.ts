import { ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import { shadowResource } from "../../src/features/shadow.ts";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const settings = (extra: Settings = {}): Settings => ({
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  ...extra,
  DOMAIN: {
    notes: {
      versioning: true,
      schema: {
        title: { type: "string" },
        body: { type: "string" },
        tag: { type: "string", versioned: false },
        code: { type: "string", unique: true },
      },
    },
    refs: {
      schema: {
        note: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "notes", embeddable: true, version: true },
        },
      },
    },
  },
});

interface Written {
  id: string;
  etags: string[];
}

/** A note written three times: POST, PATCH, PUT; one ETag per version. */
async function threeVersions(api: TestApi, code: string): Promise<Written> {
  const created = await json(await api.post("/notes", { title: "t1", body: "b1", tag: "x", code }));
  const patched = await json(await api.patch(`/notes/${created._id}`, { body: "b2" }, { "If-Match": created._etag }));
  const put = await json(await api.put(`/notes/${created._id}`, { title: "t3", body: "b3", tag: "y", code }, { "If-Match": patched._etag }));
  return { id: created._id, etags: [created._etag, patched._etag, put._etag] };
}

/** The app's data layer, to reach what HTTP does not show (the shadow collection, legacy documents). */
function data(api: TestApi) {
  const app = api.handler.app;
  const notes = app.config.DOMAIN.notes!;
  return { app, notes, shadow: shadowResource(app.config, notes) };
}

describe("document versioning", () => {
  const api = testApi(settings());
  afterAll(() => api.close());

  it("numbers versions on POST, PATCH and PUT and reports the latest one", async () => {
    const created = await json(await api.post("/notes", { title: "t1", code: "numbering" }));
    expect(created).toMatchObject({ _version: 1, _latest_version: 1 });
    const patched = await json(await api.patch(`/notes/${created._id}`, { body: "b" }, { "If-Match": created._etag }));
    expect(patched).toMatchObject({ _version: 2, _latest_version: 2 });
    const put = await api.put(`/notes/${created._id}`, { title: "t3", code: "numbering" }, { "If-Match": patched._etag });
    expect(await json(put)).toMatchObject({ _version: 3, _latest_version: 3 });
    const list = await json(await api.get("/notes?where={\"code\":\"numbering\"}"));
    expect(list._items[0]).toMatchObject({ _version: 3, _latest_version: 3 });
  });

  it("answers a version with its own fields, the latest unversioned ones and the primary's Last-Modified", async () => {
    const { id, etags } = await threeVersions(api, "one-version");
    const latest = await api.get(`/notes/${id}`);
    expect(latest.headers.get("etag")).toBe(`"${etags[2]}3"`);
    const response = await api.get(`/notes/${id}?version=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe(`"${etags[0]}3"`);
    expect(response.headers.get("last-modified")).toBe(latest.headers.get("last-modified"));
    const body = await json(response);
    expect(body).toMatchObject({ _id: id, title: "t1", body: "b1", tag: "y", _version: 1, _latest_version: 3, _etag: etags[0] });
    expect(body._links).toEqual({
      self: { title: "Note", href: `notes/${id}?version=1` },
      parent: { title: "Note", href: `notes/${id}` },
      collection: { title: "notes", href: `notes/${id}?version=all` },
    });
  });

  it("refuses a version that is not a positive integer (400) and answers 404 for one never written", async () => {
    const { id } = await threeVersions(api, "bad-version");
    for (const version of ["abc", "0", "-1", "1.5", ""]) {
      expect((await api.get(`/notes/${id}?version=${version}`)).status, version).toBe(400);
    }
    expect((await api.get(`/notes/${id}?version=4`)).status).toBe(404);
    expect((await api.get(`/notes/${id}?version=+2`)).status).toBe(200);
    expect((await api.get(`/notes/${new ObjectId().toHexString()}?version=abc`)).status).toBe(404);
  });

  it("lists every version, paginated, sortable and projected", async () => {
    const { id, etags } = await threeVersions(api, "all");
    const all = await json(await api.get(`/notes/${id}?version=all`));
    expect(all._items.map((v: { _version: number }) => v._version)).toEqual([1, 2, 3]);
    expect(all._items.map((v: { _etag: string }) => v._etag)).toEqual(etags);
    expect(all._items.every((v: { _latest_version: number }) => v._latest_version === 3)).toBe(true);
    expect(all._meta).toEqual({ page: 1, max_results: 25, total: 3 });

    const page = await json(await api.get(`/notes/${id}?version=all&max_results=2&page=2`));
    expect(page._items.map((v: { body: string }) => v.body)).toEqual(["b3"]);
    expect(page._links.prev).toEqual({ title: "previous page", href: `notes/${id}?max_results=2&version=all` });
    expect(page._links.self).toEqual({ title: "Note", href: `notes/${id}?max_results=2&version=all&page=2` });

    const sorted = await json(await api.get(`/notes/${id}?version=all&sort=-_version`));
    expect(sorted._items.map((v: { _version: number }) => v._version)).toEqual([3, 2, 1]);

    const projected = await json(await api.get(`/notes/${id}?version=all&projection={"title":1}`));
    expect(projected._items[0].title).toBe("t1");
    expect(projected._items[0]).not.toHaveProperty("body");
  });

  it("narrows the versions listed by the client's where, as Eve does", async () => {
    const { id } = await threeVersions(api, "where");
    const found = await json(await api.get(`/notes/${id}?version=all&where={"body":{"$in":["b1","b3"]}}`));
    expect(found._items.map((v: { _version: number }) => v._version)).toEqual([1, 3]);
    expect(found._meta.total).toBe(2);
    const byVersion = await json(await api.get(`/notes/${id}?version=all&where={"_version":{"$gte":2}}`));
    expect(byVersion._items.map((v: { body: string }) => v.body)).toEqual(["b2", "b3"]);
    const diffs = await json(await api.get(`/notes/${id}?version=diffs&where={"title":"t1"}`));
    expect(diffs._items.map((v: { _version: number }) => v._version)).toEqual([1, 2]);
    // Eve's quirk, kept: no stored copy matching lists the current document alone, as for one
    // written before versioning was turned on.
    const none = await json(await api.get(`/notes/${id}?version=all&where={"title":"never"}`));
    expect(none._items.map((v: { _version: number }) => v._version)).toEqual([3]);
    // Built as Eve's build_response_document builds it: its self link only.
    expect(none._items[0]._links).toEqual({ self: { title: "Note", href: `notes/${id}?version=3` } });
    const bad = await api.get(`/notes/${id}?version=all&where={"title":`);
    expect(bad.status).toBe(400);
    expect((await json(bad))._status).toBe("ERR");
  });

  it("lists diffs: each page's first version whole, then what changed; sorting refused", async () => {
    const { id, etags } = await threeVersions(api, "diffs");
    const diffs = await json(await api.get(`/notes/${id}?version=diffs`));
    expect(diffs._items[0]).toMatchObject({ title: "t1", body: "b1", code: "diffs", _version: 1 });
    // `_updated` shows too when the second ticked between the writes.
    const { _updated, ...second } = diffs._items[1];
    expect(second).toEqual({ body: "b2", _version: 2, _etag: etags[1], _links: { self: { title: "Note", href: `notes/${id}?version=2` } } });
    expect(diffs._items[2]).toMatchObject({ title: "t3", body: "b3", _version: 3 });
    expect(diffs._items[2]).not.toHaveProperty("code");

    const page = await json(await api.get(`/notes/${id}?version=diffs&max_results=2&page=2`));
    expect(page._items).toHaveLength(1);
    expect(page._items[0]).toMatchObject({ title: "t3", code: "diffs", _version: 3 });

    expect((await api.get(`/notes/${id}?version=diffs&sort=-_version`)).status).toBe(400);
  });

  it("keeps the unique index of the resource off its versions", async () => {
    const created = await json(await api.post("/notes", { title: "u", code: "unique-kept" }));
    const patched = await api.patch(`/notes/${created._id}`, { title: "u2" }, { "If-Match": created._etag });
    expect(patched.status).toBe(200);
    expect((await api.post("/notes", { code: "unique-kept" })).status).toBe(422);
  });

  it("removes the versions with the document, and with the collection", async () => {
    const { id, etags } = await threeVersions(api, "hard-delete");
    const { app, shadow } = data(api);
    const count = async (filter = {}) => (await app.data.find(null, shadow, { filter })).total;
    expect(await count({ _id_document: new ObjectId(id) })).toBe(3);
    expect((await api.delete(`/notes/${id}`, { "If-Match": etags[2]! })).status).toBe(204);
    expect(await count({ _id_document: new ObjectId(id) })).toBe(0);

    const other = testApi(settings());
    try {
      await threeVersions(other, "collection");
      const { app: otherApp, shadow: otherShadow } = data(other);
      expect((await otherApp.data.find(null, otherShadow, {})).total).toBe(3);
      expect((await other.delete("/notes")).status).toBe(204);
      expect((await otherApp.data.find(null, otherShadow, {})).total).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("catches up on documents stored before versioning, and restarts numbering when the version is removed", async () => {
    const { app, notes } = data(api);
    const id = new ObjectId();
    const stamp = new Date("2020-01-01T00:00:00Z");
    await app.data.insert(null, notes, [{ _id: id, title: "legacy", _created: stamp, _updated: stamp, _etag: "0".repeat(40) }]);

    const read = await json(await api.get(`/notes/${id}`));
    expect(read).toMatchObject({ _version: 1, _latest_version: 1 });
    const before = await json(await api.get(`/notes/${id}?version=all`));
    expect(before._items.map((v: { title: string }) => v.title)).toEqual(["legacy"]);

    const patched = await json(await api.patch(`/notes/${id}`, { title: "versioned" }, { "If-Match": "0".repeat(40) }));
    expect(patched._version).toBe(2);
    const first = await api.get(`/notes/${id}?version=1`);
    expect((await json(first)).title).toBe("legacy");
    expect(first.headers.get("last-modified")).not.toBe("Wed, 01 Jan 2020 00:00:00 GMT");

    await app.data.update(null, notes, { _id: id }, { $unset: { _version: "" } });
    const again = await json(await api.patch(`/notes/${id}`, { title: "again" }, { "If-Match": patched._etag }));
    expect(again._version).toBe(2);
    const all = await json(await api.get(`/notes/${id}?version=all`));
    expect(all._items.map((v: { _version: number }) => v._version)).toEqual([1, 1, 2, 2]);
  });

  it("validates and embeds references to a version", async () => {
    const { id } = await threeVersions(api, "referenced");
    const ok = await api.post("/refs", { note: { _id: id, _version: 1 } });
    expect(ok.status).toBe(201);
    const missing = await json(await api.post("/refs", { note: { _id: id, _version: 9 } }));
    expect(missing._issues).toEqual({ note: `value '${id}' must exist in resource 'notes', field '_id' at version '9'.` });

    const ref = await json(await api.get(`/refs/${(await json(ok))._id}?embedded={"note":1}`));
    expect(ref.note).toMatchObject({ _id: id, title: "t1", body: "b1", _version: 1, _latest_version: 3 });
    expect(ref._links.related).toEqual({ note: { title: "Note", href: `notes/${id}?version=1` } });
  });
});

describe("versioning settings", () => {
  it("VERSION_DIFF_INCLUDE puts fields in every diff", async () => {
    const api = testApi(settings({ VERSION_DIFF_INCLUDE: ["title"] }));
    try {
      const { id } = await threeVersions(api, "include");
      const diffs = await json(await api.get(`/notes/${id}?version=diffs`));
      expect(diffs._items[1]).toMatchObject({ title: "t1", body: "b2" });
    } finally {
      await api.close();
    }
  });

  it("fires on_fetched_item for each version of `all` and on_fetched_diffs once for diffs", async () => {
    const seen: string[] = [];
    const api = testApi(settings(), {
      hooks: {
        on_fetched_item_notes: (item) => void seen.push(`item ${item._version}`),
        on_fetched_diffs_notes: (items) => void seen.push(`diffs ${items.length}`),
      },
    });
    try {
      const { id } = await threeVersions(api, "hooks");
      await api.get(`/notes/${id}?version=all`);
      await api.get(`/notes/${id}?version=diffs`);
      expect(seen).toEqual(["item 1", "item 2", "item 3", "diffs 3"]);
    } finally {
      await api.close();
    }
  });
});
