// ACCESS_LOG: one line per request — reads, writes, errors and unknown paths alike — in text or
// JSON lines, and nothing at all when it is off (the default of createHandler).
import { describe, expect, it } from "vitest";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";

const domain: Settings = { RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } };

function logged(settings: Settings) {
  const lines: string[] = [];
  const handler = createHandler({ DB_URI: "memory", ...domain, ...settings }, { accessLog: (line) => lines.push(line) });
  const send = (path: string, init?: RequestInit) => handler(new Request(`http://everest.test${path}`, init), { clientIp: "203.0.113.9" });
  return { lines, send };
}

const post = (body: string): RequestInit => ({ method: "POST", headers: { "Content-Type": "application/json" }, body });

describe("ACCESS_LOG", () => {
  it('"text": one line per request with client, method, path and query, status and duration', async () => {
    const { lines, send } = logged({ ACCESS_LOG: "text" });
    expect((await send("/people?max_results=2")).status).toBe(200);
    expect((await send("/nowhere")).status).toBe(404);
    expect((await send("/people", post('{"name": 1}'))).status).toBe(422);
    expect((await send("/people", { method: "DELETE" })).status).toBe(405);
    // As the client sent it, though it is routed decoded (src/http/request-path.ts).
    expect((await send("/peo%70le")).status).toBe(200);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z 203\.0\.113\.9 "GET \/people\?max_results=2" 200 [\d.]+ms$/);
    expect(lines[1]).toMatch(/ "GET \/nowhere" 404 /);
    expect(lines[2]).toMatch(/ "POST \/people" 422 /);
    expect(lines[3]).toMatch(/ "DELETE \/people" 405 /);
    expect(lines[4]).toMatch(/ "GET \/peo%70le" 200 /);
  });

  it('"json": one JSON object per line, for log shippers', async () => {
    const { lines, send } = logged({ ACCESS_LOG: "json" });
    expect((await send("/people", post('{"name": "ann"}'))).status).toBe(201);
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ client: "203.0.113.9", method: "POST", path: "/people", status: 201 });
    expect(typeof entry.duration_ms).toBe("number");
    expect(new Date(entry.time).toISOString()).toBe(entry.time);
  });

  it("is off by default and with false", async () => {
    for (const settings of [{}, { ACCESS_LOG: false }] as Settings[]) {
      const { lines, send } = logged(settings);
      await send("/people");
      await send("/nowhere");
      expect(lines).toEqual([]);
    }
  });

  it("refuses anything else at start-up", () => {
    expect(() => createHandler({ ...domain, ACCESS_LOG: "yes" as never })).toThrow(/ACCESS_LOG.*must be one of text, json/);
  });
});
