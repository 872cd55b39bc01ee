// The parent-with-children pattern of examples/parent-children over HTTP.
import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import settings, { install } from "../../examples/parent-children/settings.ts";

describe("parent with children", () => {
  const api = testApi(settings);
  install(api.handler.app);
  afterAll(() => api.close());

  const createList = async (title: string) => (await json(await api.post("/lists", { title })))._id as string;

  it("stores items under their list, refusing a list that does not exist", async () => {
    const groceries = await createList("groceries");
    const created = await api.post(`/lists/${groceries}/items`, [{ name: "milk" }, { name: "bread" }]);
    expect(created.status).toBe(201);
    const missing = await api.post(`/lists/${"0".repeat(24)}/items`, { name: "ghost" });
    expect(missing.status).toBe(422);
    expect((await json(missing))._issues.list_id).toMatch(/value '0{24}' must exist in resource 'lists', field '_id'/);
  });

  it("serves a list with its items inside, and only its own", async () => {
    const chores = await createList("chores");
    const todo = await createList("todo");
    await api.post(`/lists/${chores}/items`, [{ name: "dishes" }, { name: "laundry" }]);
    await api.post(`/lists/${todo}/items`, { name: "call mom" });

    const list = await json(await api.get(`/lists/${chores}`));
    expect(list.title).toBe("chores");
    expect(list.items.map((i: any) => i.name).sort()).toEqual(["dishes", "laundry"]);
    expect(list.items[0]).toMatchObject({ list_id: chores });
    expect(list.items[0]._links.self.href).toBe(`lists/${chores}/items/${list.items[0]._id}`);
    expect((await json(await api.get(`/lists/${todo}`))).items.map((i: any) => i.name)).toEqual(["call mom"]);
    expect((await json(await api.get(`/lists/${await createList("empty")}`))).items).toEqual([]);
  });

  it("deletes a list's items with it, and a list without items too", async () => {
    const doomed = await createList("doomed");
    const kept = await createList("kept");
    await api.post(`/lists/${doomed}/items`, [{ name: "a" }, { name: "b" }]);
    await api.post(`/lists/${kept}/items`, { name: "c" });
    const etag = (await json(await api.get(`/lists/${doomed}`)))._etag;
    expect((await api.delete(`/lists/${doomed}`, { "If-Match": etag })).status).toBe(204);
    expect((await api.get(`/lists/${doomed}`)).status).toBe(404);
    expect((await json(await api.get(`/lists/${doomed}/items`)))._items).toEqual([]);
    expect((await json(await api.get(`/lists/${kept}/items`)))._items.map((i: any) => i.name)).toEqual(["c"]);

    const bare = await createList("bare");
    const bareEtag = (await json(await api.get(`/lists/${bare}`)))._etag;
    expect((await api.delete(`/lists/${bare}`, { "If-Match": bareEtag })).status).toBe(204);
  });
});
