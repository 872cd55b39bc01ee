import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  SOFT_DELETE: true,
  DOMAIN: {
    items: {
      additional_lookup: { url: 'regex("[a-z][\\w,-]*")', field: "code" },
      schema: {
        name: { type: "string" },
        code: { type: "string", unique: true },
        owner: { type: "objectid", data_relation: { resource: "owners", embeddable: true } },
      },
    },
    owners: { schema: { name: { type: "string" } } },
    notes: { versioning: true, schema: { title: { type: "string" } } },
    pins: {
      schema: {
        note: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "notes", embeddable: true, version: true },
        },
      },
    },
    plain: { soft_delete: false, schema: { name: { type: "string" } } },
    counters: { resource_methods: ["GET", "POST", "PATCH"], update_operators: ["$inc", "$set"], patch_by_filter: true, schema: { name: { type: "string", unique: true }, n: { type: "integer" }, meta: { type: "dict", schema: { code: { type: "string", unique: true }, note: { type: "string" } } } } },
  },
};

const NOT_FOUND = { code: 404, message: "The requested URL was not found on this server." };

describe("soft delete", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  async function created(path: string, document: Record<string, unknown>) {
    const response = await api.post(path, document);
    expect(response.status, await response.clone().text()).toBe(201);
    return json(response);
  }

  async function removed(path: string, etag: string) {
    expect((await api.delete(path, { "If-Match": etag })).status).toBe(204);
  }

  it("answers a deleted item 404 with the document, its self link only, ETag and Last-Modified", async () => {
    const owner = await created("/owners", { name: "o" });
    const item = await created("/items", { name: "gone", owner: owner._id });
    await removed(`/items/${item._id}`, item._etag);

    for (const query of ["", "?show_deleted", `?embedded={"owner":1}`]) {
      const response = await api.get(`/items/${item._id}${query}`);
      expect(response.status, query).toBe(404);
      const body = await json(response);
      expect(body).toMatchObject({ name: "gone", owner: owner._id, _deleted: true, _status: ["ERR"], _error: NOT_FOUND });
      expect(body._links.self).toEqual({ title: "Item", href: `items/${item._id}` });
      expect(body._links).not.toHaveProperty("parent");
      expect(response.headers.get("etag")).toBe(`"${body._etag}"`);
      expect(response.headers.get("last-modified")).toBeTruthy();
    }
    // Deleted again: 204 and nothing changes (tests/methods/delete.py test_multiple_softdelete).
    const flagged = await api.get(`/items/${item._id}`);
    const etag = flagged.headers.get("etag")!;
    expect((await api.delete(`/items/${item._id}`, { "If-Match": "0".repeat(40) })).status).toBe(412);
    expect((await api.delete(`/items/${item._id}`, { "If-Match": etag })).status).toBe(204);
    expect((await api.delete(`/items/${item._id}`, { "If-Match": "*" })).status).toBe(204);
    const after = await api.get(`/items/${item._id}`);
    expect(after.status).toBe(404);
    expect(after.headers.get("etag")).toBe(etag);
  });

  it("hides deleted documents from collections unless show_deleted or a where on the flag asks", async () => {
    const item = await created("/items", { name: "hidden" });
    await removed(`/items/${item._id}`, item._etag);
    const names = async (query: string) => (await json(await api.get(`/items${query}`)))._items.map((d: { name: string }) => d.name);
    expect(await names("")).not.toContain("hidden");
    expect(await names("?show_deleted")).toContain("hidden");
    expect(await names(`?where={"_deleted":true}`)).toContain("hidden");
  });

  it("restores with an empty PATCH (as it was) or with PUT", async () => {
    const item = await created("/items", { name: "back", code: "restore" });
    await removed(`/items/${item._id}`, item._etag);
    const deleted = await json(await api.get(`/items/${item._id}`));

    const patched = await api.patch(`/items/${item._id}`, {}, { "If-Match": deleted._etag });
    expect(patched.status).toBe(200);
    const restored = await json(await api.get(`/items/${item._id}`));
    expect(restored).toMatchObject({ name: "back", code: "restore", _deleted: false });

    await removed(`/items/${item._id}`, restored._etag);
    const again = await json(await api.get(`/items/${item._id}`));
    expect((await api.put(`/items/${item._id}`, { name: "replaced" }, { "If-Match": again._etag })).status).toBe(200);
    expect(await json(await api.get(`/items/${item._id}`))).toMatchObject({ name: "replaced", _deleted: false });
  });

  it("does not let a client write the flag", async () => {
    expect((await api.post("/items", { name: "x", _deleted: true })).status).toBe(422);
    const item = await created("/items", { name: "flag" });
    expect((await api.patch(`/items/${item._id}`, { _deleted: true }, { "If-Match": item._etag })).status).toBe(422);
    expect((await json(await api.get(`/items/${item._id}`)))._deleted).toBe(false);
  });

  it("lets a unique value of a deleted document be used again", async () => {
    const first = await created("/items", { code: "again" });
    expect((await api.post("/items", { code: "again" })).status).toBe(422);
    await removed(`/items/${first._id}`, first._etag);
    expect((await api.post("/items", { code: "again" })).status).toBe(201);
    // The first one cannot come back holding it, by PATCH as by PUT; with another value it can.
    const deleted = await json(await api.get(`/items/${first._id}`));
    const patched = await api.patch(`/items/${first._id}`, {}, { "If-Match": deleted._etag });
    expect(patched.status).toBe(422);
    expect(await json(patched)).toEqual({ _status: "ERR", _issues: { code: "value 'again' is not unique" } });
    expect((await api.put(`/items/${first._id}`, { code: "again" }, { "If-Match": deleted._etag })).status).toBe(422);
    expect((await json(await api.get(`/items?where=${encodeURIComponent('{"code": "again"}')}`)))._items).toHaveLength(1);
    expect((await api.patch(`/items/${first._id}`, { code: "again, restored" }, { "If-Match": deleted._etag })).status).toBe(200);
  });

  it("finds the live document by another lookup field where a deleted one shares its value", async () => {
    const old = await created("/items", { name: "old", code: "shadow" });
    await removed(`/items/${old._id}`, old._etag);
    expect((await api.get("/items/shadow")).status).toBe(404);
    const live = await created("/items", { name: "new", code: "shadow" });
    const found = await api.get("/items/shadow");
    expect(found.status).toBe(200);
    expect(await json(found)).toMatchObject({ _id: live._id, name: "new" });
  });

  it("refuses a restore by update operators or by filter that would bring back a unique value another document took", async () => {
    const first = await created("/counters", { name: "taken", n: 1 });
    await removed(`/counters/${first._id}`, first._etag);
    const second = await created("/counters", { name: "taken", n: 2 });
    const deleted = await json(await api.get(`/counters/${first._id}`));
    const operated = await api.patch(`/counters/${first._id}`, { $inc: { n: 1 } }, { "If-Match": deleted._etag });
    expect(operated.status).toBe(422);
    expect(await json(operated)).toEqual({ _status: "ERR", _issues: { name: "value 'taken' is not unique" } });
    const where = encodeURIComponent(JSON.stringify({ _deleted: true, n: 1 }));
    const byFilter = await api.patch(`/counters?where=${where}`, {});
    expect(byFilter.status).toBe(422);
    expect(await json(byFilter)).toMatchObject({ _status: "ERR", _items: [{ _id: first._id, _status: "ERR", _issues: { name: "value 'taken' is not unique" } }] });
    const live = await json(await api.get(`/counters?where=${encodeURIComponent('{"name": "taken"}')}`));
    expect(live._items.map((item: { _id: string }) => item._id)).toEqual([second._id]);
    // Sending another value for it, the document comes back.
    const renamed = await api.patch(`/counters/${first._id}`, { name: "taken before", $inc: { n: 1 } }, { "If-Match": deleted._etag });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
  });

  it("refuses a restore that would bring back a unique value inside a sub-document, merged or not", async () => {
    const first = await created("/counters", { name: "nested one", n: 7, meta: { code: "K", note: "a" } });
    await removed(`/counters/${first._id}`, first._etag);
    await created("/counters", { name: "nested two", meta: { code: "K" } });
    const deleted = await json(await api.get(`/counters/${first._id}`));
    const refusal = { _status: "ERR", _issues: { meta: { code: "value 'K' is not unique" } } };
    for (const body of [{}, { $inc: { n: 1 } }, { meta: { note: "merged, code kept" } }]) {
      const patched = await api.patch(`/counters/${first._id}`, body, { "If-Match": deleted._etag });
      expect(patched.status, JSON.stringify(body)).toBe(422);
      expect(await json(patched)).toEqual(refusal);
    }
    const byFilter = await api.patch(`/counters?where=${encodeURIComponent(JSON.stringify({ _deleted: true, n: 7 }))}`, { n: 8 });
    expect(byFilter.status).toBe(422);
    expect((await api.get(`/counters/${first._id}`)).status).toBe(404);
    // A new code for it: the document comes back.
    expect((await api.patch(`/counters/${first._id}`, { meta: { code: "L" } }, { "If-Match": deleted._etag })).status).toBe(200);
  });

  it("refuses references to deleted documents and embeds them as null", async () => {
    const owner = await created("/owners", { name: "left" });
    const item = await created("/items", { name: "owned", owner: owner._id });
    await removed(`/owners/${owner._id}`, owner._etag);
    const refused = await json(await api.post("/items", { owner: owner._id }));
    expect(refused._issues).toEqual({ owner: `value '${owner._id}' must exist in resource 'owners', field '_id'.` });
    expect((await json(await api.get(`/items/${item._id}?embedded={"owner":1}`))).owner).toBeNull();
  });

  it("DELETE on the collection soft-deletes every live document, and 204 with nothing done once none is left", async () => {
    await created("/owners", { name: "a" });
    await created("/owners", { name: "b" });
    expect((await api.delete("/owners")).status).toBe(204);
    expect((await json(await api.get("/owners")))._items).toEqual([]);
    const kept = (await json(await api.get("/owners?show_deleted")))._items;
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.every((d: { _deleted: boolean }) => d._deleted)).toBe(true);
    const etags = kept.map((d: { _etag: string }) => d._etag);
    expect((await api.delete("/owners")).status).toBe(204);
    const after = (await json(await api.get("/owners?show_deleted")))._items;
    expect(after.map((d: { _etag: string }) => d._etag)).toEqual(etags);
  });

  it("reads documents stored without the flag as live, and a resource can opt out", async () => {
    const app = api.handler.app;
    const id = new ObjectId();
    await app.data.insert(null, app.config.DOMAIN.items!, [{ _id: id, name: "legacy" }]);
    expect(await json(await api.get(`/items/${id}`))).toMatchObject({ name: "legacy", _deleted: false });

    const plain = await created("/plain", { name: "p" });
    expect(plain).not.toHaveProperty("_deleted");
    await removed(`/plain/${plain._id}`, plain._etag);
    expect((await json(await api.get(`/plain/${plain._id}`)))._status).toBe("ERR");
    expect((await api.get(`/plain?show_deleted`)).headers.get("x-total-count")).toBe("0");
  });

  it("with versioning, deleting and restoring are versions; the deleted version answers 404", async () => {
    const note = await created("/notes", { title: "v1" });
    const patched = await json(await api.patch(`/notes/${note._id}`, { title: "v2" }, { "If-Match": note._etag }));
    await removed(`/notes/${note._id}`, patched._etag);

    const deleted = await api.get(`/notes/${note._id}`);
    expect(deleted.status).toBe(404);
    const body = await json(deleted);
    expect(body).toMatchObject({ title: "v2", _deleted: true, _version: 3, _latest_version: 3 });
    expect(deleted.headers.get("etag")).toBe(`"${body._etag}3"`);

    const third = await api.get(`/notes/${note._id}?version=3`);
    expect(third.status).toBe(404);
    expect(await json(third)).toMatchObject({ _deleted: true, _status: ["ERR"], _links: { self: { href: `notes/${note._id}?version=3` } } });
    expect((await api.get(`/notes/${note._id}?version=2`)).status).toBe(200);
    const all = await json(await api.get(`/notes/${note._id}?version=all`));
    expect(all._items.map((v: { _deleted: boolean }) => v._deleted)).toEqual([false, false, true]);
    const diffs = await json(await api.get(`/notes/${note._id}?version=diffs`));
    expect(diffs._items[2]).toMatchObject({ _deleted: true, _version: 3 });

    expect((await api.post("/pins", { note: { _id: note._id, _version: 3 } })).status).toBe(422);
    const pinned = await created("/pins", { note: { _id: note._id, _version: 2 } });
    expect((await json(await api.get(`/pins/${pinned._id}?embedded={"note":1}`))).note).toMatchObject({ title: "v2", _version: 2, _deleted: false });
    const app = api.handler.app;
    const stale = new ObjectId();
    await app.data.insert(null, app.config.DOMAIN.pins!, [{ _id: stale, note: { _id: new ObjectId(note._id), _version: 3 } }]);
    expect((await json(await api.get(`/pins/${stale}?embedded={"note":1}`))).note).toBeNull();

    const restored = await json(await api.patch(`/notes/${note._id}`, {}, { "If-Match": body._etag }));
    expect(restored).toMatchObject({ _version: 4, _deleted: false });
    expect((await api.get(`/notes/${note._id}`)).status).toBe(200);
    expect((await api.post("/pins", { note: { _id: note._id, _version: 4 } })).status).toBe(201);
  });
});

describe("unique values over a collection several resources share", () => {
  // An index belongs to the collection (src/data/layer.ts uniqueIndexFields): one built for a
  // resource that sees every document refused what Eve's lookups let the others write, as in
  // Eve's own test settings (`exclusion`, soft-deleted, over `contacts`).
  const shared = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "DELETE"],
    DOMAIN: {
      tags: { soft_delete: true, schema: { code: { type: "string", unique: true } } },
      alltags: { datasource: { source: "tags" }, schema: { code: { type: "string", unique: true } } },
      red: { datasource: { source: "things", filter: { color: "red" } }, schema: { color: { type: "string" }, code: { type: "string", unique_within_resource: true } } },
      blue: { datasource: { source: "things", filter: { color: "blue" } }, schema: { color: { type: "string" }, code: { type: "string", unique_within_resource: true } } },
      things: { schema: { color: { type: "string" }, code: { type: "string", unique: true } } },
    },
  });
  afterAll(() => shared.close());

  // Each resource's indexes are built on its first use (or at start-up, `everest serve`).
  beforeAll(async () => {
    for (const name of ["alltags", "things"]) expect((await shared.get(`/${name}`)).status).toBe(200);
  });

  it("lets a soft-deleted document's value be used again beside a resource that sees it", async () => {
    const first = await json(await shared.post("/tags", { code: "X" }));
    expect((await shared.post("/tags", { code: "X" })).status).toBe(422);
    expect((await shared.delete(`/tags/${first._id}`, { "If-Match": first._etag })).status).toBe(204);
    expect((await shared.post("/tags", { code: "X" })).status).toBe(201);
    // The resource that sees the deleted one still refuses the value, as Eve's lookup there does.
    const refused = await shared.post("/alltags", { code: "X" });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ code: "value 'X' is not unique" });
  });

  it("lets filtered resources hold one value each beside one that keeps it unique everywhere", async () => {
    expect((await shared.post("/red", { color: "red", code: "Y" })).status).toBe(201);
    expect((await shared.post("/blue", { color: "blue", code: "Y" })).status).toBe(201);
    expect((await shared.post("/red", { color: "red", code: "Y" })).status).toBe(422);
    expect((await shared.post("/things", { color: "green", code: "Y" })).status).toBe(422);
  });
});
