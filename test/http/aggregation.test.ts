// Aggregation endpoints: placeholders from `aggregate`, pruning, paging by $facet, hooks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import type { Settings } from "../../src/settings/types.ts";

const PEOPLE = [
  { name: "Ada", city: "Rome", age: 36 },
  { name: "Bob", city: "Rome", age: 20 },
  { name: "Cy", city: "Oslo", age: 50 },
  { name: "Di", city: "Lima", age: 41 },
  { name: "Ed", city: "Oslo", age: 33 },
];

const PIPELINE = [
  // Placeholders must not spell a field path (`$city`): every equal value is replaced.
  { $match: { city: "$town", age: { $gte: "$min" } } },
  { $group: { _id: "$city", people: { $sum: 1 } } },
  { $sort: { _id: 1 } },
];

function settings(overrides: Partial<Settings> = {}): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      people: { schema: { name: { type: "string" }, city: { type: "string" }, age: { type: "integer" } } },
      cities: { datasource: { source: "people", aggregation: { pipeline: PIPELINE } } },
      southern: { datasource: { source: "people", filter: { city: { $ne: "Oslo" } }, aggregation: { pipeline: PIPELINE } } },
    },
    ...overrides,
  };
}

const aggregate = (value: unknown) => `aggregate=${encodeURIComponent(JSON.stringify(value))}`;
const ALL = aggregate({ $town: {}, $min: {} });

describe("aggregation endpoints", () => {
  const pipelines: unknown[] = [];
  const api = testApi(settings({ PAGINATION_DEFAULT: 2 }), {
    hooks: {
      before_aggregation: (endpoint: string, pipeline: unknown[]) => pipelines.push([endpoint, structuredClone(pipeline)]),
    },
  });
  beforeAll(async () => {
    expect((await api.post("/people", PEOPLE)).status).toBe(201);
  });
  afterAll(() => api.close());

  it("fills placeholders from the aggregate parameter", async () => {
    const response = await api.get(`/cities?${aggregate({ $town: "Rome", $min: 30 })}`);
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body._items).toEqual([{ _id: "Rome", people: 1 }]);
    expect(body._meta).toEqual({ page: 1, max_results: 2, total: 1 });
  });

  it("drops keys given {} and skips a stage left empty", async () => {
    pipelines.length = 0;
    const body = await json(await api.get(`/cities?${ALL}`));
    expect(body._items).toEqual([{ _id: "Lima", people: 1 }, { _id: "Oslo", people: 2 }]);
    // The hook saw the pruned pipeline, without the paging stages.
    expect(pipelines).toEqual([["cities", [{ $group: { _id: "$city", people: { $sum: 1 } } }, { $sort: { _id: 1 } }]]]);
    const partly = await json(await api.get(`/cities?${aggregate({ $town: {}, $min: 40 })}`));
    expect(partly._items).toEqual([{ _id: "Lima", people: 1 }, { _id: "Oslo", people: 1 }]);
  });

  it("pages with skip/limit, counting the whole result", async () => {
    const body = await json(await api.get(`/cities?${ALL}&page=2`));
    expect(body._items).toEqual([{ _id: "Rome", people: 2 }]);
    expect(body._meta).toEqual({ page: 2, max_results: 2, total: 3 });
    expect(body._links.prev.href).toContain("cities?");
    expect(body._links).not.toHaveProperty("next");
    const empty = await json(await api.get(`/cities?${aggregate({ $town: "Nowhere", $min: {} })}`));
    expect(empty).toMatchObject({ _items: [], _meta: { total: 0 } });
  });

  it("ANDs the datasource filter ahead of the pipeline", async () => {
    const body = await json(await api.get(`/southern?${ALL}`));
    expect(body._items.map((d: any) => d._id)).toEqual(["Lima", "Rome"]);
  });

  it("ignores sort and where as Eve does: the pipeline's own stages order and filter", async () => {
    const plain = await json(await api.get(`/cities?${ALL}`));
    const where = encodeURIComponent('{"city": "Rome"}');
    for (const query of [`${ALL}&sort=-_id`, `${ALL}&where=${where}`]) {
      const response = await api.get(`/cities?${query}`);
      expect(response.status, query).toBe(200);
      expect((await json(response))._items, query).toEqual(plain._items);
    }
  });

  it("refuses unparseable parameters and smuggled operators", async () => {
    expect((await api.get("/cities?aggregate={bad")).status).toBe(400);
    expect((await api.get(`/cities?${aggregate(["$town"])}`)).status).toBe(400);
    // Refused before any driver sees them (the memory driver would refuse some itself).
    // And expressions without a bound ($range of 10^8 ran the process out of heap), or naming a
    // field by a plain string.
    for (const operator of ["$where", "$function", "$lookup", "$unionWith", "$out", "$range", "$reduce", "$let", "$map", "$replaceAll", "$getField", "$setField", "$unsetField"]) {
      const response = await api.get(`/cities?${aggregate({ $town: { $in: [{ [operator]: "x" }] }, $min: {} })}`);
      expect(response.status, operator).toBe(400);
      expect((await json(response))._error.message).toBe(`operator ${operator} is not allowed in an aggregation parameter`);
    }
  });

  it("refuses an operand of the wrong shape as a bad query, on every store as MongoDB refuses it", async () => {
    const shaped = testApi({
      RESOURCE_METHODS: ["GET", "POST"],
      DOMAIN: {
        people: { schema: { name: { type: "string" }, age: { type: "integer" }, tags: { type: "list" } } },
        unwound: { datasource: { source: "people", aggregation: { pipeline: [{ $unwind: "$u" }] } } },
        buckets: { datasource: { source: "people", aggregation: { pipeline: [{ $bucket: { groupBy: "$age", boundaries: "$b", default: "other" } }] } } },
        matched: { datasource: { source: "people", aggregation: { pipeline: [{ $match: "$m" }] } } },
      },
    });
    expect((await shaped.post("/people", [{ name: "a", age: 3, tags: ["x"] }, { name: "b", age: 30 }])).status).toBe(201);
    for (const query of [
      `/unwound?${aggregate({ $u: 5 })}`,
      `/buckets?${aggregate({ $b: 5 })}`,
      `/matched?${aggregate({ $m: { name: { $in: 5 } } })}`,
      `/matched?${aggregate({ $m: { $expr: { $add: "x" } } })}`,
    ]) {
      const response = await shaped.get(query);
      expect(response.status, query).toBe(400);
      expect((await json(response))._status, query).toBe("ERR");
    }
    await shaped.close();
  });

  it("is read-only and has no item endpoint", async () => {
    expect((await api.post("/cities", {})).status).toBe(405);
    expect((await api.get("/cities/0123456789abcdef01234567")).status).toBe(404);
  });
});

describe("aggregation hooks and pagination off", () => {
  const api = testApi(settings({ PAGINATION: false }));
  const app = api.handler.app;
  app.on("before_aggregation", (_endpoint: string, pipeline: any[]) => {
    pipeline.unshift({ $match: { age: { $lt: 45 } } });
  });
  app.on("after_aggregation", (_endpoint: string, documents: any[]) => {
    for (const document of documents) document.checked = true;
  });
  beforeAll(async () => {
    await api.post("/people", PEOPLE);
  });
  afterAll(() => api.close());

  it("returns every result without _meta; callbacks change the pipeline and the documents", async () => {
    const body = await json(await api.get(`/cities?${ALL}`));
    expect(body).not.toHaveProperty("_meta");
    expect(body._items).toEqual([
      { _id: "Lima", people: 1, checked: true },
      { _id: "Oslo", people: 1, checked: true },
      { _id: "Rome", people: 2, checked: true },
    ]);
  });
});

describe("aggregation placeholders that are dates (Eve's test_get_aggregation_parsing)", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      events: { schema: { x: { type: "integer" }, date: { type: "datetime" } } },
      since: { datasource: { source: "events", aggregation: { pipeline: [{ $match: { date: { $gte: "$date" } } }, { $sort: { x: 1 } }] } } },
    },
  });
  const today = "Mon, 23 Nov 2026 10:00:00 GMT";
  const yesterday = "Sun, 22 Nov 2026 10:00:00 GMT";
  beforeAll(async () => {
    const events = [1, 2, 3].map((x) => ({ x, date: today })).concat([{ x: 4, date: yesterday }]);
    expect((await api.post("/events", events)).status).toBe(201);
  });
  afterAll(() => api.close());

  it("turns an RFC 1123 value into a datetime before substituting it", async () => {
    const fromToday = await json(await api.get(`/since?${aggregate({ $date: today })}`));
    expect(fromToday._items.map((d: any) => d.x)).toEqual([1, 2, 3]);
    const fromYesterday = await json(await api.get(`/since?${aggregate({ $date: yesterday })}`));
    expect(fromYesterday._items.map((d: any) => d.x)).toEqual([1, 2, 3, 4]);
  });
});
