import { ObjectId } from "bson";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const person = { type: "objectid", data_relation: { resource: "people", embeddable: true } } as const;

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { soft_delete: true, schema: { name: { type: "string" } } },
    works: {
      embedded_fields: ["owner"],
      schema: {
        title: { type: "string" },
        owner: person,
        editors: { type: "list", schema: person },
        meta: { type: "dict", schema: { reviewer: person } },
        notes: { type: "list", schema: { type: "dict", schema: { by: person } } },
        private: { type: "objectid", data_relation: { resource: "people", embeddable: false } },
      },
    },
  },
};

describe("embedding", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  async function created(path: string, document: Record<string, unknown>): Promise<{ _id: string; _etag: string }> {
    const response = await api.post(path, document);
    expect(response.status, await response.clone().text()).toBe(201);
    return json(response);
  }

  it("embeds the resource's embedded_fields by default, unless the client says 0", async () => {
    const ada = await created("/people", { name: "Ada" });
    const work = await created("/works", { title: "default", owner: ada._id });
    expect((await json(await api.get(`/works/${work._id}`))).owner).toMatchObject({ _id: ada._id, name: "Ada" });
    expect((await json(await api.get(`/works/${work._id}?embedded={"owner":0}`))).owner).toBe(ada._id);
  });

  it("follows lists of references, dotted paths into dicts and lists of dicts; never a non-embeddable field", async () => {
    const [a, b, c] = [await created("/people", { name: "A" }), await created("/people", { name: "B" }), await created("/people", { name: "C" })];
    const work = await created("/works", {
      title: "paths",
      editors: [a._id, b._id],
      meta: { reviewer: c._id },
      notes: [{ by: a._id }, { by: c._id }],
      private: b._id,
    });
    const body = await json(await api.get(`/works/${work._id}?embedded={"editors":1,"meta.reviewer":1,"notes.by":1,"private":1}`));
    expect(body.editors.map((p: { name: string }) => p.name)).toEqual(["A", "B"]);
    expect(body.meta.reviewer.name).toBe("C");
    expect(body.notes.map((n: { by: { name: string } }) => n.by.name)).toEqual(["A", "C"]);
    expect(body.private).toBe(b._id);
  });

  it("resolves missing and soft-deleted targets to null", async () => {
    const gone = await created("/people", { name: "Gone" });
    const work = await created("/works", { title: "dangling", owner: gone._id, editors: [gone._id] });
    expect((await api.delete(`/people/${gone._id}`, { "If-Match": gone._etag })).status).toBe(204);
    const app = api.handler.app;
    const id = new ObjectId();
    await app.data.insert(null, app.config.DOMAIN.works!, [{ _id: id, title: "never there", owner: new ObjectId() }]);

    const deleted = await json(await api.get(`/works/${work._id}?embedded={"editors":1}`));
    expect(deleted.owner).toBeNull();
    expect(deleted.editors).toEqual([null]);
    expect((await json(await api.get(`/works/${id}`))).owner).toBeNull();
  });

  it("looks a referenced resource up once per response, however many documents and fields", async () => {
    const people = [];
    for (const name of ["P1", "P2", "P3", "P4"]) people.push(await created("/people", { name }));
    for (let i = 0; i < 4; i++) {
      await created("/works", { title: "batch", owner: people[i]!._id, editors: [people[(i + 1) % 4]!._id], meta: { reviewer: people[(i + 2) % 4]!._id } });
    }
    // Every read of a resource goes through the data layer's find (one driver query each).
    const finds = vi.spyOn(api.handler.app.data, "find");
    const body = await json(await api.get(`/works?where={"title":"batch"}&embedded={"editors":1,"meta.reviewer":1}`));
    const peopleFinds = finds.mock.calls.filter(([, resource]) => resource.name === "people").length;
    finds.mockRestore();
    expect(body._items).toHaveLength(4);
    expect(body._items.every((w: { owner: { name: string }; editors: Array<{ name: string }>; meta: { reviewer: { name: string } } }) =>
      [w.owner.name, w.editors[0]!.name, w.meta.reviewer.name].every((n) => /^P\d$/.test(n)),
    )).toBe(true);
    expect(peopleFinds).toBe(1);
  });
});
