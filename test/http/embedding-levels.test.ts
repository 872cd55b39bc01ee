// Embedding through an embedded document: `embedded={"components.cpu":1,"components.cpu.brand":1}`
// embeds the cpu, then the cpu's brand, as Eve resolves a dotted field through the resource a
// reference points to (eve/methods/common.py field_definition). Each level is one batch for all
// the documents of the response.
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET"],
  DOMAIN: {
    brands: { schema: { name: { type: "string" } } },
    cpus: { schema: { model: { type: "string" }, brand: { type: "objectid", data_relation: { resource: "brands", embeddable: true } } } },
    computers: {
      schema: {
        name: { type: "string" },
        components: { type: "dict", schema: { cpu: { type: "objectid", data_relation: { resource: "cpus", embeddable: true } } } },
      },
    },
  },
};

describe("embedding through an embedded document", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  const id = async (path: string, body: Record<string, unknown>) => (await json(await api.post(path, body)))._id as string;

  it("embeds each level, for an item and for every item of a page", async () => {
    const intel = await id("/brands", { name: "intel" });
    const amd = await id("/brands", { name: "amd" });
    const i7 = await id("/cpus", { model: "i7", brand: intel });
    const ryzen = await id("/cpus", { model: "ryzen", brand: amd });
    const a = await id("/computers", { name: "a", components: { cpu: i7 } });
    await id("/computers", { name: "b", components: { cpu: ryzen } });
    await id("/computers", { name: "c", components: { cpu: i7 } });

    const embedded = '?embedded={"components.cpu":1,"components.cpu.brand":1}';
    const item = await json(await api.get(`/computers/${a}${embedded}`));
    expect(item.components).toMatchObject({ cpu: { _id: i7, model: "i7", brand: { _id: intel, name: "intel" } } });

    // Every read of a resource goes through the data layer's find (one driver query each).
    const finds = vi.spyOn(api.handler.app.data, "find");
    const page = await json(await api.get(`/computers${embedded}&sort=name`));
    const lookups = finds.mock.calls.map(([, resource]) => resource.name).filter((name) => name !== "computers");
    finds.mockRestore();
    expect(lookups.sort()).toEqual(["brands", "cpus"]);
    const cpus = (page._items as Array<{ components: { cpu: { model: string; brand: { name: string } } } }>).map((c) => [c.components.cpu.model, c.components.cpu.brand.name]);
    expect(cpus).toEqual([["i7", "intel"], ["ryzen", "amd"], ["i7", "intel"]]);
  });

  it("embeds only the level asked for", async () => {
    const brand = await id("/brands", { name: "arm" });
    const cpu = await id("/cpus", { model: "m1", brand });
    const computer = await id("/computers", { name: "d", components: { cpu } });
    const item = await json(await api.get(`/computers/${computer}?embedded={"components.cpu":1}`));
    expect(item.components).toMatchObject({ cpu: { model: "m1", brand } });
  });
});
