// The Workers adapter in-process: bindings named in ENV_SETTINGS override the bundled settings,
// so a deployment's DB_URI and DATA_API_KEY put it on the data-api driver, whose data outlives
// the isolate; other bindings leave the settings alone.
import { afterAll, describe, expect, it } from "vitest";
import { createWorker } from "../../adapters/workers.ts";
import { createDataApiHandler } from "../../src/gateway/index.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { createLogger } from "../../src/logging.ts";
import type { Settings } from "../../src/settings/types.ts";
import { inProcessFetch } from "../support/drivers.ts";
// Registers the native driver, as a Worker entry with nodejs_compat does.
import "../../src/drivers/mongodb/index.ts";

const settings: Settings = { RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { title: { type: "string" } } } } };
const backing = await MemoryDriver.open({ databaseName: "everest" });
const gateway = inProcessFetch(createDataApiHandler(backing, { apiKeys: ["right-key"] }));
afterAll(() => backing.close());

const env = (key: string) => ({ DB_URI: "https://gateway.test/app/everest/endpoint/data/v1", DATA_API_KEY: key, UNRELATED: "x" });
const post = (title: string) =>
  new Request("https://api.example/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title }) });
const titles = async (response: Response) => ((await response.json()) as { _items: Array<{ title: string }> })._items.map((n) => n.title);

describe("createWorker", () => {
  it("keeps data in the database DB_URI and DATA_API_KEY name, seen by every isolate", async () => {
    const first = createWorker(settings, { services: { fetch: gateway } });
    expect((await first.fetch(post("kept"), env("right-key"))).status).toBe(201);
    const second = createWorker(settings, { services: { fetch: gateway } });
    expect(await titles(await second.fetch(new Request("https://api.example/notes"), env("right-key")))).toEqual(["kept"]);
  });

  it("sends DATA_API_KEY to the gateway, which refuses a wrong one", async () => {
    const worker = createWorker(settings, { services: { fetch: gateway }, logger: createLogger(() => undefined) });
    expect((await worker.fetch(new Request("https://api.example/notes"), env("wrong-key"))).status).toBe(503);
  });

  it("without bindings, keeps each isolate's data in its own memory", async () => {
    const first = createWorker(settings);
    expect((await first.fetch(post("mine"))).status).toBe(201);
    expect(await titles(await first.fetch(new Request("https://api.example/notes")))).toEqual(["mine"]);
    expect(await titles(await createWorker(settings).fetch(new Request("https://api.example/notes")))).toEqual([]);
  });
});

// A Worker's TCP connection belongs to the request that opened it, so with the native driver each
// request gets its own client, closed once its response is sent (adapters/workers.ts); wrangler's
// own workerd proves the rest (scripts/test-package.sh).
describe.skipIf(!process.env.MONGODB_URI)("createWorker on the mongodb driver", () => {
  const mongoSettings = (database: string): Settings => ({ ...settings, DB_URI: process.env.MONGODB_URI, DB_NAME: database, RATE_LIMIT_GET: [2, 60] });
  const context = () => {
    const pending: Promise<unknown>[] = [];
    return { pending, ctx: { waitUntil: (promise: Promise<unknown>) => void pending.push(promise) } };
  };

  it("opens and closes a client per request, data kept in MongoDB, rate limits counted across them", async () => {
    const worker = createWorker(mongoSettings(`worker_${Date.now()}`));
    const first = context();
    const posted = await worker.fetch(post("stored"), {}, first.ctx);
    expect(posted.status).toBe(201);
    await posted.text();
    expect(first.pending).toHaveLength(1);
    await Promise.all(first.pending);
    const second = context();
    expect(await titles(await worker.fetch(new Request("https://api.example/notes"), {}, second.ctx))).toEqual(["stored"]);
    await Promise.all(second.pending);
    expect(second.pending).toHaveLength(1);
    await worker.fetch(new Request("https://api.example/notes"));
    expect((await worker.fetch(new Request("https://api.example/notes"))).status).toBe(429);
  });
});
