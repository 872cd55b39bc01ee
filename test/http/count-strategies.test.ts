// Count strategies (PAGINATION_COUNT, docs/paging.md) over HTTP, on every driver and runtime:
// each resource's default, the client's choice by parameter or by `Prefer`, what `_meta`,
// X-Total-Count and the links say of the count the client got, and Eve's behaviour where the
// setting is not given.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schema, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const schema: Schema = { name: { type: "string" }, team: { type: "integer" } };

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "DELETE"],
  PAGINATION_DEFAULT: 4,
  DOMAIN: {
    exact: { schema, pagination_count: "exact" },
    estimated: { schema, pagination_count: "estimated", datasource: { source: "exact" } },
    uncounted: { schema, pagination_count: "none", datasource: { source: "exact" } },
    scoped: { schema, pagination_count: "estimated", datasource: { source: "exact", filter: { team: 1 } } },
    deletable: { schema, pagination_count: "estimated", soft_delete: true },
    fast: { schema, optimize_pagination_for_speed: true, pagination_count: "none", datasource: { source: "exact" } },
    eve: { schema, datasource: { source: "exact" } },
    evefast: { schema, optimize_pagination_for_speed: true, datasource: { source: "exact" } },
    cursors: { schema, pagination_cursor: true, pagination_count: "none", datasource: { source: "exact" } },
  },
};

const people = Array.from({ length: 10 }, (_, i) => ({ name: `p${i}`, team: i % 3 }));

describe("count strategies", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = testApi(settings);
    expect((await api.post("/exact", people)).status).toBe(201);
    expect((await api.post("/deletable", people)).status).toBe(201);
    const first = await json(await api.get("/deletable?max_results=1"));
    expect((await api.delete(`/deletable/${first._items[0]._id}`, { "If-Match": first._items[0]._etag })).status).toBe(204);
  });
  afterAll(() => api.close());

  const page = async (path: string, headers?: Record<string, string>) => {
    const response = await api.get(path, headers);
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    return { response, body, links: Object.keys(body._links) };
  };

  it("exact: the total, X-Total-Count and the last link, and says so", async () => {
    const { response, body, links } = await page("/exact");
    expect(body._meta).toEqual({ page: 1, max_results: 4, total: 10, count: "exact" });
    expect(response.headers.get("x-total-count")).toBe("10");
    expect(response.headers.get("vary")).toMatch(/Prefer/);
    expect(links).toEqual(["parent", "self", "next", "last"]);
    expect(body._links.last.href).toBe("exact?page=3");
  });

  it("estimated: the store's size for an unfiltered read, without the last link", async () => {
    const { response, body, links } = await page("/estimated");
    expect(body._meta).toEqual({ page: 1, max_results: 4, total: 10, count: "estimated" });
    expect(response.headers.get("x-total-count")).toBeNull();
    expect(response.headers.get("x-total-count-estimate")).toBe("10");
    expect(links).toEqual(["parent", "self", "next"]);
  });

  it("estimated: an exact count, said to be exact, wherever the read is narrowed", async () => {
    const where = await page(`/estimated?where=${encodeURIComponent('{"team": 0}')}`);
    expect(where.body._meta).toEqual({ page: 1, max_results: 4, total: 4, count: "exact" });
    expect(where.response.headers.get("x-total-count")).toBe("4");
    // A datasource filter and soft delete narrow the read too: never the whole collection's size.
    expect((await page("/scoped")).body._meta).toMatchObject({ total: 3, count: "exact" });
    expect((await page("/deletable")).body._meta).toMatchObject({ total: 9, count: "exact" });
  });

  it("none: no total, and next only while documents follow", async () => {
    const first = await page("/uncounted");
    expect(first.body._meta).toEqual({ page: 1, max_results: 4, count: "none" });
    expect(first.response.headers.get("x-total-count")).toBeNull();
    expect(first.links).toEqual(["parent", "self", "next"]);
    const last = await page("/uncounted?page=3");
    expect(last.body._items).toHaveLength(2);
    expect(last.links).toEqual(["parent", "self", "prev"]);
    const exactlyFull = await page("/uncounted?max_results=5&page=2");
    expect(exactlyFull.links).toEqual(["parent", "self", "prev"]);
  });

  it("lets the client choose per request, by parameter or by Prefer, the parameter first", async () => {
    expect((await page("/uncounted?count=exact")).body._meta).toMatchObject({ total: 10, count: "exact" });
    const preferred = await page("/exact", { Prefer: "return=minimal, count=none" });
    expect(preferred.body._meta).toEqual({ page: 1, max_results: 4, count: "none" });
    expect(preferred.response.headers.get("preference-applied")).toBe("count=none");
    const both = await page("/exact?count=estimated", { Prefer: "count=none" });
    expect(both.body._meta.count).toBe("estimated");
    expect(both.response.headers.get("preference-applied")).toBeNull();
    // The choice travels with the links.
    expect((await page("/exact?count=none")).body._links.next.href).toBe("exact?page=2&count=none");
  });

  it("refuses an unknown strategy in either place", async () => {
    for (const [path, headers] of [["/exact?count=some", {}], ["/exact?count=", {}], ["/exact", { Prefer: "count=planned" }]] as const) {
      const response = await api.get(path, headers);
      expect(response.status, path).toBe(400);
      expect((await json(response))._error.message).toMatch(/count strategy/);
    }
  });

  it("keeps OPTIMIZE_PAGINATION_FOR_SPEED's meaning: no count, next on every page", async () => {
    const last = await page("/fast?page=3");
    expect(last.body._meta).toEqual({ page: 3, max_results: 4, count: "none" });
    expect(last.links).toEqual(["parent", "self", "next", "prev"]);
    const eve = await page("/evefast?page=3");
    expect(eve.body._meta).toEqual({ page: 3, max_results: 4 });
    expect(eve.links).toEqual(["parent", "self", "next", "prev"]);
  });

  it("leaves a resource without the setting as Eve: count and Prefer mean nothing", async () => {
    const eve = await page("/eve?count=none", { Prefer: "count=none" });
    expect(eve.body._meta).toEqual({ page: 1, max_results: 4, total: 10 });
    expect(eve.response.headers.get("vary")).toBeNull();
    expect(eve.body._links.next.href).toBe("eve?page=2&count=none");
  });

  it("counts nothing on cursor pages with count=none, and still knows whether a page follows", async () => {
    const first = await page("/cursors?max_results=6");
    expect(first.body._meta).toEqual({ page: 1, max_results: 6, count: "none" });
    expect(first.links).toEqual(["parent", "self", "next"]);
    const second = await page(`/${first.body._links.next.href}`);
    expect(second.body._items).toHaveLength(4);
    expect(second.links).toEqual(["parent", "self", "prev"]);
    expect((await page(`/${first.body._links.next.href}&count=exact`)).body._meta).toEqual({ max_results: 6, total: 10, count: "exact" });
  });
});

describe("count strategies with CORS", () => {
  it("add Prefer to the Vary that CORS sets", async () => {
    const api = testApi({ X_DOMAINS: ["https://app.example"], DOMAIN: { exact: { schema, pagination_count: "exact" } } });
    try {
      const response = await api.get("/exact", { Origin: "https://app.example" });
      expect(response.status).toBe(200);
      expect(response.headers.get("vary")).toBe("Origin, Prefer");
    } finally {
      await api.close();
    }
  });
});
