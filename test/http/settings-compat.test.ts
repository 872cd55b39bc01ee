// Settings Eve 2.3.1 acts on, and request details answered as Eve answers them (Eve's tests named
// where they exist: tests/response.py, renders.py, endpoints.py, methods/get.py and post.py).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { createHandler } from "../../src/handler.ts";
import { EVEREST_VERSION } from "../../src/version.ts";
import type { Settings } from "../../src/settings/types.ts";
import packageJson from "../../package.json" with { type: "json" };

const contacts = (overrides: Partial<Settings> = {}): Settings => ({
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: { contacts: { schema: { ref: { type: "string" }, prog: { type: "integer" }, tags: { type: "list", schema: { type: "string" } } } } },
  ...overrides,
});

describe("INFO (test_get_no_hateoas_homepage_reply)", () => {
  it("adds the server, its version and API_VERSION to the home reply, also without HATEOAS", async () => {
    const plain = testApi(contacts({ HATEOAS: false }));
    expect(await json(await plain.get("/"))).toEqual({});
    await plain.close();
    const info = testApi(contacts({ HATEOAS: false, INFO: "_info" }));
    expect(await json(await info.get("/"))).toEqual({ _info: { server: "everest", version: EVEREST_VERSION } });
    await info.close();
    const versioned = testApi(contacts({ INFO: "_info", API_VERSION: "v1" }));
    const body = await json(await versioned.get("/v1"));
    expect(body._info).toEqual({ server: "everest", version: EVEREST_VERSION, api_version: "v1" });
    expect(body._links.child).toEqual([{ href: "contacts", title: "contacts" }]);
    await versioned.close();
  });

  it("reports the version package.json declares", () => {
    expect(EVEREST_VERSION).toBe(packageJson.version);
  });
});

describe("JSON_SORT_KEYS (test_json_keys_sorted)", () => {
  const api = testApi(contacts({ JSON_SORT_KEYS: true }));
  afterAll(() => api.close());

  it("writes every object's keys in sorted order", async () => {
    expect((await api.post("/contacts", { ref: "x", prog: 1 })).status).toBe(201);
    const text = await (await api.get("/contacts", { Accept: "application/json" })).text();
    // JSON.parse keeps the order keys were written in.
    const unsorted: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (!value || typeof value !== "object") return;
      const keys = Object.keys(value);
      if (keys.join() !== [...keys].sort().join()) unsorted.push(keys.join());
      Object.values(value).forEach(walk);
    };
    walk(JSON.parse(text));
    expect(unsorted).toEqual([]);
    expect(text.indexOf('"_items"')).toBeLessThan(text.indexOf('"_links"'));
    expect(text.indexOf('"_links"')).toBeLessThan(text.indexOf('"_meta"'));
  });
});

describe("JSON_REQUEST_CONTENT_TYPES and AUTO_COLLAPSE_MULTI_KEYS (test_post_custom_json_content_type, test_post_auto_collapse_multiple_keys)", () => {
  it("reads the listed content types as JSON, and only those", async () => {
    const plain = testApi(contacts());
    expect((await plain.post("/contacts", { ref: "1234" }, { "Content-Type": "application/csp-report" })).status).toBe(400);
    await plain.close();
    const custom = testApi(contacts({ JSON_REQUEST_CONTENT_TYPES: ["application/json", "application/csp-report"] }));
    const created = await custom.post("/contacts", { ref: "1234" }, { "Content-Type": "application/csp-report" });
    expect(created.status).toBe(201);
    expect((await json(await custom.get(`/contacts/${(await json(created))._id}`))).ref).toBe("1234");
    await custom.close();
  });

  it("compares media types case-insensitively", async () => {
    const custom = testApi(contacts({ JSON_REQUEST_CONTENT_TYPES: ["application/json", "Application/CSP-Report"] }));
    expect((await custom.post("/contacts", { ref: "1" }, { "Content-Type": "application/csp-report" })).status).toBe(201);
    expect((await custom.post("/contacts", { ref: "2" }, { "Content-Type": "APPLICATION/CSP-REPORT; charset=utf-8" })).status).toBe(201);
    await custom.close();
  });

  it("collapses a repeated form key into a list, in form-urlencoded and multipart bodies", async () => {
    const api = testApi(contacts({ AUTO_COLLAPSE_MULTI_KEYS: true }));
    const form = await api.fetch("/contacts", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "tags=a&tags=b&ref=r" });
    expect(form.status).toBe(201);
    expect(await json(await api.get(`/contacts/${(await json(form))._id}`))).toMatchObject({ ref: "r", tags: ["a", "b"] });
    const data = new FormData();
    data.append("tags", "c");
    data.append("tags", "d");
    const multipart = await api.fetch("/contacts", { method: "POST", body: data });
    expect(multipart.status).toBe(201);
    expect((await json(await api.get(`/contacts/${(await json(multipart))._id}`))).tags).toEqual(["c", "d"]);
    await api.close();
  });

  it("keeps the first value of a repeated key without it (a list field then refuses the string)", async () => {
    const api = testApi(contacts());
    const response = await api.fetch("/contacts", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "tags=a&tags=b" });
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ tags: "must be of list type" });
    await api.close();
  });
});

describe("QUERY_PAGE and QUERY_MAX_RESULTS (test_get_custom_page)", () => {
  const api = testApi(contacts({ QUERY_PAGE: "custom", QUERY_MAX_RESULTS: "size", PAGINATION_DEFAULT: 2 }));
  beforeAll(async () => {
    expect((await api.post("/contacts", [1, 2, 3, 4, 5].map((prog) => ({ prog })))).status).toBe(201);
  });
  afterAll(() => api.close());

  it("reads the renamed parameters and names the _meta keys after them", async () => {
    const body = await json(await api.get("/contacts?custom=2"));
    expect(body._meta).toEqual({ custom: 2, size: 2, total: 5 });
    expect(body._links.next.href).toBe("contacts?custom=3");
    expect(body._links.prev.href).toBe("contacts");
    expect(body._links.last.href).toBe("contacts?custom=3");
    expect((await json(await api.get("/contacts?size=1")))._meta).toEqual({ custom: 1, size: 1, total: 5 });
  });
});

describe("content negotiation as Eve's _best_mime", () => {
  it("answers a browser's text/html (or anything unknown) with the first renderer, JSON", async () => {
    const api = testApi(contacts());
    for (const accept of ["text/html", "text/csv", "image/png;q=0.5"]) {
      const response = await api.get("/contacts", { Accept: accept });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get("content-type"), accept).toBe("application/json");
      expect((await json(response))._items, accept).toEqual([]);
    }
    await api.close();
  });

  // createHandler itself, as test/http/startup.test.ts does: a server on another runtime would refuse to start instead.
  it("refuses an empty RENDERERS at start-up: no format would be left to answer in", () => {
    expect(() => createHandler(contacts({ RENDERERS: [] }))).toThrow(/Setting 'RENDERERS' must list at least one renderer/);
  });
});
