// The log (docs/decisions.md §10): records carry clientip, the full URL and the method; writes
// and database errors are recorded; a 500 is logged with its stack while the client gets the
// envelope without internals.
import { afterEach, describe, expect, it } from "vitest";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { DatabaseUnavailableError, InvalidQueryError, type Driver } from "../../src/drivers/types.ts";
import { createLogger, type LogRecord } from "../../src/logging.ts";
import type { HandlerOptions } from "../../src/app.ts";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const settings: Settings = {
  DOMAIN: { notes: { resource_methods: ["GET", "POST"], item_methods: ["GET", "PATCH", "PUT"], schema: { title: { type: "string" } } } },
};

let api: TestApi;
let records: LogRecord[];
afterEach(() => api.close());

function start(options: HandlerOptions = {}, level: LogRecord["level"] = "DEBUG"): TestApi {
  records = [];
  api = testApi(settings, { ...options, logger: createLogger((record) => records.push(record), level) });
  return api;
}

const send = (path: string, init: RequestInit = {}) => api.handler(new Request("http://everest.test" + path, init), { clientIp: "192.0.2.7" });
const jsonBody = (method: string, body: unknown, headers: Record<string, string> = {}) => ({ method, headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("log records", () => {
  it("record POST, PATCH and PUT at INFO with client address, full URL and method", async () => {
    start();
    const created = await json(await send("/notes?pretty", jsonBody("POST", { title: "a" })));
    const patched = await json(await send(`/notes/${created._id}`, jsonBody("PATCH", { title: "b" }, { "If-Match": created._etag })));
    await send(`/notes/${created._id}`, jsonBody("PUT", { title: "c" }, { "If-Match": patched._etag }));
    await send("/notes?where=%7B%7D");
    expect(records.map(({ level, clientip, url, method }) => ({ level, clientip, url, method }))).toEqual([
      { level: "INFO", clientip: "192.0.2.7", url: "http://everest.test/notes?pretty", method: "POST" },
      { level: "INFO", clientip: "192.0.2.7", url: `http://everest.test/notes/${created._id}`, method: "PATCH" },
      { level: "INFO", clientip: "192.0.2.7", url: `http://everest.test/notes/${created._id}`, method: "PUT" },
    ]);
    expect(records[0]!.message).toBe("POST notes: 201");
  });

  it("drop records below the level, WARNING by default", async () => {
    records = [];
    api = testApi(settings, { logger: createLogger((record) => records.push(record)) });
    await send("/notes", jsonBody("POST", { title: "a" }));
    expect(records).toEqual([]);
  });

  it("log a 500 with its stack and send the client only the generic envelope", async () => {
    start({ hooks: { on_fetched_resource: () => { throw new Error("secret internals at db.example:27017"); } } }, "WARNING");
    const response = await send("/notes");
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("secret");
    expect(JSON.parse(text)._error.code).toBe(500);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: "ERROR", clientip: "192.0.2.7", url: "http://everest.test/notes", method: "GET" });
    expect((records[0]!.error as Error).stack).toContain("secret internals");
  });
});

describe("database errors", () => {
  /** A memory driver whose find fails with the given error. */
  async function failingDriver(error: Error): Promise<Driver> {
    const memory = await MemoryDriver.open({ databaseName: "t" });
    return new Proxy(memory, {
      get(target, key, receiver) {
        if (key === "find" || key === "count") return async () => { throw error; };
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  it("log an unreachable database at ERROR and answer 503", async () => {
    start({ driver: await failingDriver(new DatabaseUnavailableError("connection refused")) });
    expect((await send("/notes")).status).toBe(503);
    expect(records).toMatchObject([{ level: "ERROR", method: "GET", error: { message: "connection refused" } }]);
  });

  it("log a query the database refused at INFO and answer 400", async () => {
    start({ driver: await failingDriver(new InvalidQueryError("unknown operator $foo")) });
    expect((await send("/notes")).status).toBe(400);
    expect(records).toMatchObject([{ level: "INFO", url: "http://everest.test/notes", error: { message: "unknown operator $foo" } }]);
  });
});
