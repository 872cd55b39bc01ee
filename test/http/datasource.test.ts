// datasource: several endpoints over one collection, a filter ANDed with every operation,
// a default projection the client can override, a default sort.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import type { Schema, Settings } from "../../src/settings/types.ts";

const schema = {
  name: { type: "string" },
  role: { type: "string" },
  age: { type: "integer" },
  notes: { type: "string" },
} satisfies Schema;

function settings(): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: { schema, datasource: { default_sort: [["name", 1]] } },
      admins: {
        schema,
        datasource: { source: "people", filter: { role: "admin" }, projection: { notes: 0 }, default_sort: [["age", -1]] },
      },
    },
  };
}

const PEOPLE = [
  { name: "Ada", role: "admin", age: 36, notes: "a" },
  { name: "Bob", role: "user", age: 20, notes: "b" },
  { name: "Cy", role: "admin", age: 50, notes: "c" },
  { name: "Di", role: "user", age: 41, notes: "d" },
];

describe("datasource", () => {
  const api = testApi(settings());
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const body = await json(await api.post("/people", PEOPLE));
    PEOPLE.forEach((p, i) => (ids[p.name] = body._items[i]._id));
  });
  afterAll(() => api.close());

  const names = async (path: string) => (await json(await api.get(path)))._items.map((d: any) => d.name);

  it("serves one collection from several endpoints, the filter narrowing one of them", async () => {
    expect(await names("/people")).toEqual(["Ada", "Bob", "Cy", "Di"]);
    expect(await names("/admins")).toEqual(["Cy", "Ada"]);
    expect((await json(await api.get("/admins")))._meta.total).toBe(2);
  });

  it("ANDs the filter with where, so where cannot widen it", async () => {
    expect(await names(`/admins?where=${encodeURIComponent('{"age": {"$lt": 40}}')}`)).toEqual(["Ada"]);
    expect(await names(`/admins?where=${encodeURIComponent('{"role": "user"}')}`)).toEqual([]);
    expect(await names(`/admins?where=${encodeURIComponent('{"$or": [{"role": "user"}, {"name": "Bob"}]}')}`)).toEqual([]);
  });

  it("applies the filter to item reads and writes", async () => {
    expect((await api.get(`/admins/${ids.Bob}`)).status).toBe(404);
    const bob = await json(await api.get(`/people/${ids.Bob}`));
    expect((await api.patch(`/admins/${ids.Bob}`, { age: 21 }, { "If-Match": bob._etag })).status).toBe(404);
    // Outside the filter, PUT would create (upsert) at an id that is taken: refused.
    expect((await api.put(`/admins/${ids.Bob}`, { name: "Bob" }, { "If-Match": bob._etag })).status).toBeGreaterThanOrEqual(400);
    expect((await api.delete(`/admins/${ids.Bob}`, { "If-Match": bob._etag })).status).toBe(404);
    expect(await json(await api.get(`/people/${ids.Bob}`))).toMatchObject({ name: "Bob", age: 20 });
  });

  it("hides excluded fields by default; the client can ask for them", async () => {
    const ada = await json(await api.get(`/admins/${ids.Ada}`));
    expect(ada).not.toHaveProperty("notes");
    expect(ada).toMatchObject({ name: "Ada", role: "admin" });
    const asked = await json(await api.get(`/admins/${ids.Ada}?projection=${encodeURIComponent('{"notes": 1}')}`));
    expect(asked.notes).toBe("a");
    expect((await json(await api.get(`/people/${ids.Ada}`))).notes).toBe("a");
  });

  it("sorts by default_sort unless the client sorts", async () => {
    expect(await names("/admins?sort=name")).toEqual(["Ada", "Cy"]);
    expect(await names("/people?sort=-age")).toEqual(["Cy", "Di", "Ada", "Bob"]);
  });

  it("DELETE of the filtered collection removes only what the filter matches", async () => {
    expect((await api.delete("/admins")).status).toBe(204);
    expect(await names("/admins")).toEqual([]);
    expect(await names("/people")).toEqual(["Bob", "Di"]);
  });
});

// A resource that serves unknown fields cannot list what it serves: its datasource projection
// only excludes, and must still hide, with every meta field kept when the client asks for more.
describe("a datasource projection that only excludes, on a resource serving unknown fields", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: { notes: { allow_unknown: true, datasource: { projection: { secret: 0 } }, schema: { text: { type: "string" } } } },
  });
  afterAll(() => api.close());
  const projected = (path: string, projection: object) => api.get(`${path}?projection=${encodeURIComponent(JSON.stringify(projection))}`);

  it("hides the field by default, shows it when asked, and keeps the other exclusions a client adds", async () => {
    const created = await json(await api.post("/notes", { text: "t", extra: { deep: [3] }, secret: "s" }));
    const url = `/notes/${created._id}`;
    const item = await json(await api.get(url));
    expect(item).toMatchObject({ text: "t", extra: { deep: [3] }, _etag: created._etag, _updated: created._updated });
    expect(item).not.toHaveProperty("secret");
    expect((await json(await api.get("/notes")))._items[0]).not.toHaveProperty("secret");

    const asked = await json(await projected(url, { secret: 1 }));
    expect(asked).toEqual({ secret: "s", _id: created._id, _created: created._created, _updated: created._updated, _etag: created._etag, _links: asked._links });
    expect((await json(await projected("/notes", { secret: 1 })))._items[0]).toMatchObject({ secret: "s", _etag: created._etag, _created: created._created });

    const excluded = await json(await projected(url, { extra: 0 }));
    expect(excluded).toMatchObject({ text: "t", _etag: created._etag });
    expect(excluded).not.toHaveProperty("extra");
    expect(excluded).not.toHaveProperty("secret");
    // Writes check If-Match against the same view the reads tag.
    expect((await api.patch(url, { text: "u" }, { "If-Match": created._etag })).status).toBe(200);
  });
});

describe("a datasource projection on a resource with field rules", () => {
  // Such a resource reads whole documents and projects them after: the hidden field was never read.
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { a: { datasource: { projection: { secret: 0 } }, schema: { name: { type: "string" }, secret: { type: "string" }, ruled: { type: "string", allowed_read_roles: ["x"] } } } },
  });
  afterAll(() => api.close());

  it("still shows the field a client asks for, as Eve does", async () => {
    const created = await json(await api.post("/a", { name: "n", secret: "s" }));
    const asked = encodeURIComponent('{"secret": 1}');
    expect(await json(await api.get(`/a/${created._id}?projection=${asked}`))).toMatchObject({ secret: "s", _id: created._id });
    expect((await json(await api.get(`/a?projection=${asked}`)))._items[0]).toMatchObject({ secret: "s" });
    expect(await json(await api.get(`/a/${created._id}`))).not.toHaveProperty("secret");
  });
});

describe("a projection of dotted paths", () => {
  const api = testApi({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" }, addr: { type: "dict", schema: { city: { type: "string" }, zip: { type: "string" } } }, items: { type: "list", schema: { type: "dict", schema: { k: { type: "string" }, v: { type: "integer" } } } } } } } });
  afterAll(() => api.close());
  const projected = (path: string, projection: object) => api.get(`${path}?projection=${encodeURIComponent(JSON.stringify(projection))}`);

  it("keeps the fields in the order of the whole document, as MongoDB does", async () => {
    const created = await json(await api.post("/people", { name: "alice", addr: { city: "Rome", zip: "001" }, items: [{ k: "x", v: 1 }] }));
    const url = `/people/${created._id}`;
    const whole = await json(await api.get(url));
    for (const projection of [{ "addr.city": 1 }, { "items.k": 1 }, { "addr.zip": 0 }]) {
      const item = await json(await projected(url, projection));
      expect(Object.keys(item), JSON.stringify(projection)).toEqual(Object.keys(whole).filter((key) => key in item));
      const page = (await json(await projected("/people", projection)))._items[0];
      expect(Object.keys(page)).toEqual(Object.keys(item));
    }
    expect(await json(await projected(url, { "addr.city": 1 }))).toMatchObject({ addr: { city: "Rome" } });
    expect((await json(await projected(url, { "addr.city": 1 }))).addr).toEqual({ city: "Rome" });
    expect((await json(await projected(url, { "items.k": 1 }))).items).toEqual([{ k: "x" }]);
    // A nested exclusion is dropped on a schema resource, as Eve drops it.
    expect((await json(await projected(url, { "addr.zip": 0 }))).addr).toEqual({ city: "Rome", zip: "001" });
    expect(await json(await api.get(url))).toEqual(whole);
  });
});
