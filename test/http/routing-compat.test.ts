// Routing and request handling as Eve (Werkzeug) does it: rule precedence, integer lookups,
// CORS on unknown paths, method override, GeoJSON positions with an altitude.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";

function settings(overrides: Partial<Settings> = {}): Settings {
  const schema = { username: { type: "string" }, prog: { type: "integer" }, ref: { type: "string" } } as const;
  return {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      users: { schema, additional_lookup: { url: 'regex("[\\w]+")', field: "username" } },
      users_overseas: { url: "users/overseas", datasource: { source: "users" }, schema },
      contacts: { schema, additional_lookup: { field: "prog" } },
    },
    ...overrides,
  };
}

describe("rule precedence and integer lookups", () => {
  const api = testApi(settings());
  beforeAll(async () => {
    expect((await api.post("/users", [{ username: "ann", prog: 1 }, { username: "overseas", prog: 2 }])).status).toBe(201);
    expect((await api.post("/contacts", [0, 1, 2].map((prog) => ({ prog, ref: `r${prog}` })))).status).toBe(201);
  });
  afterAll(() => api.close());

  it("serves a static URL before another resource's additional_lookup (test_nested_endpoint)", async () => {
    const response = await api.get("/users/overseas");
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body._items.map((d: any) => d.username).sort()).toEqual(["ann", "overseas"]);
    expect(body._links.self).toEqual({ title: "users/overseas", href: "users/overseas" });
    expect((await json(await api.get("/users/ann"))).username).toBe("ann");
  });

  it("routes an integer additional_lookup without a url as digits (test_getitem_by_integer)", async () => {
    const item = await api.get("/contacts/1");
    expect(item.status).toBe(200);
    expect((await json(item)).ref).toBe("r1");
    expect((await api.get("/contacts/3")).status).toBe(404);
    expect((await api.get("/contacts/abc")).status).toBe(404);
  });

  it("refuses at start-up an additional_lookup without a url on a field that is not an integer", () => {
    const bad = settings();
    bad.DOMAIN!.users!.additional_lookup = { field: "username" };
    expect(() => createHandler(bad)).toThrow(/additional_lookup needs a 'url' unless its field is an integer/);
  });
});

describe("CORS on an unknown path", () => {
  const api = testApi(settings({ X_DOMAINS: ["https://good.example"] }));
  afterAll(() => api.close());

  it("sends the CORS headers with the 404 to an allowed origin, and none to another", async () => {
    const response = await api.get("/nowhere", { Origin: "https://good.example" });
    expect(response.status).toBe(404);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://good.example");
    expect((await json(response))._error.code).toBe(404);
    const other = await api.get("/nowhere", { Origin: "https://evil.example" });
    expect(other.status).toBe(404);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("X-HTTP-Method-Override", () => {
  const api = testApi(settings());
  afterAll(() => api.close());

  it("answers an override naming a method the endpoint does not know with 405, storing nothing", async () => {
    for (const method of ["FOO", "TRACE", "PUT"]) {
      const response = await api.post("/users", { username: `x${method}` }, { "X-HTTP-Method-Override": method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow"), method).toBe("GET, HEAD, OPTIONS, POST");
      expect((await json(response))._error.code, method).toBe(405);
    }
    expect((await json(await api.get("/users")))._items).toEqual([]);
  });

  it("still applies a known one", async () => {
    const created = await json(await api.post("/users", { username: "bo" }));
    const patched = await api.post(`/users/${created._id}`, { prog: 7 }, { "X-HTTP-Method-Override": "patch", "If-Match": created._etag });
    expect(patched.status).toBe(200);
    expect((await json(await api.get("/users/bo"))).prog).toBe(7);
  });
});

describe("GeoJSON positions", () => {
  const api = testApi({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { places: { schema: { location: { type: "point" } } } } });
  afterAll(() => api.close());

  it("accepts a Point with an altitude and refuses four coordinates", async () => {
    const created = await api.post("/places", { location: { type: "Point", coordinates: [12.49, 41.89, 35] } });
    expect(created.status).toBe(201);
    expect((await json(await api.get(`/places/${(await json(created))._id}`))).location.coordinates).toEqual([12.49, 41.89, 35]);
    expect((await api.post("/places", { location: { type: "Point", coordinates: [1, 2, 3, 4] } })).status).toBe(422);
  });
});
