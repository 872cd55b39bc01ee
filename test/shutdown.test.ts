// App.close(), in-process: the order of docs/contracts.md §7 — open streams end first with
// their final event and no new one starts, requests in flight finish within SHUTDOWN_TIMEOUT,
// then the databases close (the journal flushed, its lock given up) and the rate-limit store lets
// go; readiness answers 503 meanwhile, and a request after the end gets 503. What the adapters
// do with it on SIGTERM is test/runtimes/shutdown.test.ts.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFileAccess } from "../adapters/node-files.ts";
import { createLogger, type LogRecord } from "../src/logging.ts";
import { createHandler } from "../src/handler.ts";
import { MemoryRateLimitStore } from "../src/ratelimit/index.ts";
import type { Settings } from "../src/settings/types.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const settings: Settings = { HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } };

/** A hook that holds GETs until released, so a request stays in flight as long as a test wants. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const arrived = new Promise<void>((resolve) => (entered = resolve));
  return { hook: async () => (entered(), await opened), open, arrived };
}

const get = (handler: (request: Request) => Promise<Response>, path: string) => handler(new Request(`http://everest.test${path}`));

describe("App.close()", () => {
  it("ends open streams first, lets the request in flight finish, then closes; readiness says so meanwhile", async () => {
    const held = gate();
    const handler = createHandler(settings, { hooks: { on_pre_GET_people: held.hook } });
    const order: string[] = [];
    const stream = { end: () => void order.push("stream ended") };
    expect(handler.app.operations.streams.add(stream)).toBe(true);
    expect(await (await get(handler, "/metrics")).text()).toContain("everest_open_streams 1\n");

    const inFlight = get(handler, "/people").then((response) => void order.push(`request answered ${response.status}`));
    await held.arrived;
    const closing = handler.app.close().then(() => void order.push("closed"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual(["stream ended"]);
    const ready = await get(handler, "/health/ready");
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "shutting down", checks: {} });
    expect((await get(handler, "/health")).status).toBe(200);
    expect(handler.app.operations.streams.add({ end: () => undefined })).toBe(false);

    held.open();
    await Promise.all([inFlight, closing]);
    expect(order).toEqual(["stream ended", "request answered 200", "closed"]);
    const after = await get(handler, "/people");
    expect(after.status).toBe(503);
    expect(await after.json()).toEqual({ _status: "ERR", _error: { code: 503, message: "The service has shut down." } });
    // Asked again, close() is the same shutdown.
    await handler.app.close();
  });

  it("closes the databases after SHUTDOWN_TIMEOUT even if a request never finishes, and says so", async () => {
    const records: LogRecord[] = [];
    const held = gate();
    const handler = createHandler({ ...settings, SHUTDOWN_TIMEOUT: 0.2 }, { hooks: { on_pre_GET_people: held.hook }, logger: createLogger((record) => records.push(record)) });
    void get(handler, "/people");
    await held.arrived;
    const started = performance.now();
    await handler.app.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(records.map((record) => record.message)).toContain("shutdown: SHUTDOWN_TIMEOUT (0.2 s) passed with 1 request(s) in flight; closing the databases");
    held.open();
  });

  it("takes no stream from the moment it begins, and waits for one that cannot end no longer than the bound", async () => {
    const handler = createHandler({ ...settings, SHUTDOWN_TIMEOUT: 0.2 }, { logger: createLogger(() => undefined) });
    handler.app.operations.streams.add({ end: () => new Promise<void>(() => undefined) });
    const closing = handler.app.close();
    expect(handler.app.operations.streams.add({ end: () => undefined })).toBe(false);
    await closing;
    expect(handler.app.operations.streams.size).toBe(0);
  });

  it("waits for the adapter's connections too, within the same bound", async () => {
    const handler = createHandler(settings);
    let closeConnections!: () => void;
    const connections = new Promise<void>((resolve) => (closeConnections = resolve));
    let closed = false;
    const closing = handler.app.close(connections).then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    closeConnections();
    await closing;
  });

  it("flushes the journal and gives up its lock, and closes the rate-limit store", async () => {
    const dir = await mkdtemp(join(tmpdir(), "everest-shutdown-"));
    dirs.push(dir);
    const journal = join(dir, "journal.jsonl");
    const store = new MemoryRateLimitStore();
    let storeClosed = false;
    const options = { services: { files: new NodeFileAccess() }, rateLimitStore: Object.assign(store, { close: async () => void (storeClosed = true) }) };
    const handler = createHandler({ ...settings, DB_URI: `file:${journal}` }, options);
    await handler.app.open();
    const posts = Array.from({ length: 20 }, (_, i) => handler(new Request("http://everest.test/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: `p${i}` }) })));
    await handler.app.close();
    expect((await Promise.all(posts)).map((response) => response.status)).toEqual(Array(20).fill(201));
    expect(await readFile(`${journal}.lock`, "utf8")).toBe("");
    expect(storeClosed).toBe(true);
    const reopened = createHandler({ ...settings, DB_URI: `file:${journal}` }, { services: { files: new NodeFileAccess() } });
    const body = (await (await get(reopened, "/people?max_results=50")).json()) as { _items: unknown[] };
    expect(body._items).toHaveLength(20);
    await reopened.app.close();
  });
});
