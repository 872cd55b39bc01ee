// The Workers adapter refuses at module load what would otherwise fail every request: settings
// everest refuses, and a database whose driver the bundle lacks. In a Worker bundle only a
// registered mongodb driver loads (src/drivers/registry.ts), and this file registers none, as a
// Worker entry without `import "everest-api/mongodb"` does not.
import { describe, expect, it } from "vitest";
import { createWorker } from "../../adapters/workers.ts";
import type { Settings } from "../../src/settings/types.ts";

const domain: Settings["DOMAIN"] = { notes: { schema: { title: { type: "string" } } } };

describe("createWorker at module load", () => {
  it("throws on a setting everest does not know", () => {
    expect(() => createWorker({ DOMAIN: domain, PAGINATON_LIMIT: 5 } as Settings)).toThrow(/PAGINATON_LIMIT/);
  });

  it("throws on a schema rule everest does not know", () => {
    expect(() => createWorker({ DOMAIN: { notes: { schema: { title: { type: "string", uniqe: true } } } } } as Settings)).toThrow(/uniqe/);
  });

  it("throws when the settings name MongoDB and the entry did not import everest-api/mongodb", () => {
    expect(() => createWorker({ DOMAIN: domain, DB_URI: "mongodb://127.0.0.1:1/db" })).toThrow(/the mongodb driver is not in this bundle.*import "everest-api\/mongodb"/);
    expect(() => createWorker({ DOMAIN: domain, MONGO_HOST: "db.example", MONGO_DBNAME: "app" })).toThrow(/the mongodb driver is not in this bundle/);
  });

  it("throws for a db_prefix whose database is MongoDB", () => {
    const settings: Settings = { DOMAIN: { notes: { db_prefix: "OTHER", schema: {} } }, OTHER_DB_URI: "mongodb://127.0.0.1:1/other" };
    expect(() => createWorker(settings)).toThrow(/the mongodb driver is not in this bundle/);
  });

  it("throws when bindings given at load (adapters/workerd.ts passes cloudflare:workers' env) select MongoDB", () => {
    expect(() => createWorker({ DOMAIN: domain }, { env: { DB_URI: "mongodb://127.0.0.1:1/db" } })).toThrow(/the mongodb driver is not in this bundle/);
  });

  it("with a binding that selects MongoDB only at the first request, refuses it and every later one with the same error, serving none", async () => {
    const worker = createWorker({ DOMAIN: domain });
    const env = { DB_URI: "mongodb://127.0.0.1:1/db" };
    await expect(worker.fetch(new Request("https://api.example/notes"), env)).rejects.toThrow(/the mongodb driver is not in this bundle/);
    await expect(worker.fetch(new Request("https://api.example/notes"), env)).rejects.toThrow(/the mongodb driver is not in this bundle/);
  });

  it("starts with the embedded store and serves", async () => {
    const worker = createWorker({ DOMAIN: domain });
    const response = await worker.fetch(new Request("https://api.example/notes"));
    expect(response.status).toBe(200);
  });
});
