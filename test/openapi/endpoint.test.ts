// GET /openapi.json and the explorer at /docs, over HTTP: where they are served, to whom, and
// that the page's files come from the installed UI package and nowhere else.
import { describe, expect, it } from "vitest";
import { BasicAuth } from "../../src/auth/auth.ts";
import { buildOpenApi } from "../../src/openapi/index.ts";
import { normalizeSettings } from "../../src/settings/normalize.ts";
import { SettingsError } from "../../src/settings/validate.ts";
import type { Settings } from "../../src/settings/types.ts";
import { testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

const auth = { AUTH: new BasicAuth({ users: { admin: { password: "secret" } } }) };
const admin = { Authorization: `Basic ${btoa("admin:secret")}` };

describe("GET /openapi.json", () => {
  it("serves the document of the settings, pretty on request", async () => {
    const settings = peopleSettings();
    const api = testApi(settings);
    const response = await api.get("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApi(normalizeSettings(settings)))));
    expect(await (await api.get("/openapi.json?pretty")).text()).toContain('\n    "openapi": "3.1.0"');
    expect((await api.post("/openapi.json", {})).status).toBe(405);
  });

  it("sits under URL_PREFIX/API_VERSION at OPENAPI_ENDPOINT", async () => {
    const api = testApi(peopleSettings({ URL_PREFIX: "api", API_VERSION: "v1", OPENAPI_ENDPOINT: "spec.json" }));
    expect((await api.get("/openapi.json")).status).toBe(404);
    const response = await api.get("/api/v1/spec.json");
    expect(response.status).toBe(200);
    expect((await response.json()).servers).toEqual([{ url: "/api/v1" }]);
  });

  it("is off with OPENAPI false, and by default where the home endpoint needs credentials", async () => {
    expect((await testApi(peopleSettings({ OPENAPI: false })).get("/openapi.json")).status).toBe(404);
    expect((await testApi(peopleSettings(auth)).get("/openapi.json")).status).toBe(404);
    expect((await testApi(peopleSettings({ ...auth, PUBLIC_METHODS: ["GET"] })).get("/openapi.json")).status).toBe(200);
  });

  it("OPENAPI true behind auth: as protected as the home endpoint", async () => {
    const api = testApi(peopleSettings({ ...auth, OPENAPI: true }));
    expect((await api.get("/openapi.json")).status).toBe(401);
    expect((await api.get("/openapi.json", admin)).status).toBe(200);
  });

  it("a resource at the same URL keeps it", async () => {
    const settings = peopleSettings();
    settings.DOMAIN!.docs = { schema: { title: { type: "string" } } };
    const api = testApi(settings);
    expect(await (await api.get("/docs")).json()).toMatchObject({ _items: [] });
  });

  it("the settings check refuses bad values", () => {
    const bad: Settings[] = [{ OPENAPI: "yes" as never }, { OPENAPI_ENDPOINT: null as never }, { DOCS_ENDPOINT: 3 as never }];
    for (const settings of bad) expect(() => testApi(settings), JSON.stringify(settings)).toThrow(SettingsError);
    // @ts-expect-error a description is a string, at compile time too
    expect(() => testApi({ DOMAIN: { people: { schema: { name: { type: "string", description: 1 } } } } })).toThrow(/description.*must be a string/);
    expect(() => testApi({ DOMAIN: { people: { description: "who", schema: { name: { type: "string", description: "their name" } } } } })).not.toThrow();
  });
});

describe("GET /docs", () => {
  it("the page loads the UI from everest itself, and starts it on the document", async () => {
    const api = testApi(peopleSettings({ URL_PREFIX: "api" }));
    const page = await api.get("/api/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources).toEqual(["/api/docs/favicon-32x32.png", "/api/docs/swagger-ui.css", "/api/docs/swagger-ui-bundle.js", "/api/docs/explorer.js"]);
    for (const source of sources) {
      const response = await api.get(source!);
      expect(response.status, source).toBe(200);
      expect((await response.arrayBuffer()).byteLength, source).toBeGreaterThan(100);
    }
    expect(await (await api.get("/api/docs/explorer.js")).text()).toContain('"url":"/api/openapi.json"');
    expect((await api.get("/api/docs/swagger-ui.css")).headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("serves the UI package's files only", async () => {
    const api = testApi(peopleSettings());
    for (const path of ["/docs/package.json", "/docs/index.html", "/docs/..%2Fpackage.json", "/docs/constructor"]) {
      expect((await api.get(path)).status, path).toBe(404);
    }
  });

  it("off with DOCS_ENDPOINT null or without the document; at DOCS_ENDPOINT otherwise", async () => {
    expect((await testApi(peopleSettings({ DOCS_ENDPOINT: null })).get("/docs")).status).toBe(404);
    expect((await testApi(peopleSettings({ OPENAPI: false })).get("/docs")).status).toBe(404);
    expect((await testApi(peopleSettings({ DOCS_ENDPOINT: "explorer" })).get("/explorer")).status).toBe(200);
  });

  it("without the package's files (Workers), the page's files are 404, not an error", async () => {
    const api = testApi(peopleSettings(), { services: { explorerFiles: async () => null } });
    expect((await api.get("/docs/swagger-ui-bundle.js")).status).toBe(404);
  });
});
