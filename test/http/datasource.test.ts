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
