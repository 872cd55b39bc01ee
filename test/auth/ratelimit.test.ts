// RATE_LIMIT_<METHOD>: [requests, seconds] per client and method, X-RateLimit-* headers, 429,
// counts in a pluggable store. The clock is injected, so windows pass without waiting.
import { afterEach, describe, expect, it } from "vitest";
import { BasicAuth } from "../../src/auth/auth.ts";
import { MemoryRateLimitStore, type RateLimitStore } from "../../src/ratelimit/index.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const notes = { resource_methods: ["GET", "POST"], schema: { title: { type: "string" } } } satisfies ResourceSettings;

let now = 1_700_000_000_000;
const clock = () => now;

let api: TestApi;
afterEach(() => api.close());

function start(settings: Settings, store: RateLimitStore = new MemoryRateLimitStore({ now: clock })): TestApi {
  api = testApi(settings, { rateLimitStore: store });
  return api;
}

/** Requests from one address, as an adapter reports it. */
const from = (ip: string, path = "/notes", init: RequestInit = {}) => api.handler(new Request("http://everest.test" + path, init), { clientIp: ip });

describe("rate limits", () => {
  it("count requests per client, send the X-RateLimit headers and refuse the excess with 429", async () => {
    start({ RATE_LIMIT_GET: [2, 60], DOMAIN: { notes } });
    // Windows are aligned to the epoch, as Eve's are: this one ends at the next whole minute.
    const reset = String((Math.floor(now / 60_000) + 1) * 60);
    const first = await from("10.0.0.1");
    expect(first.status).toBe(200);
    expect([first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining"), first.headers.get("x-ratelimit-reset")]).toEqual(["2", "1", reset]);
    expect((await from("10.0.0.1")).headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await from("10.0.0.1");
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual({ _status: "ERR", _error: { code: 429, message: "Rate limit exceeded" } });
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await from("10.0.0.2")).status).toBe(200);
  });

  it("start a new window when the old one has passed", async () => {
    start({ RATE_LIMIT_GET: [1, 10], DOMAIN: { notes } });
    expect((await from("10.0.0.1")).status).toBe(200);
    expect((await from("10.0.0.1")).status).toBe(429);
    now += 9_999;
    expect((await from("10.0.0.1")).status).toBe(429);
    now += 1;
    expect((await from("10.0.0.1")).status).toBe(200);
  });

  it("apply each method's own setting and leave unlimited methods alone", async () => {
    start({ RATE_LIMIT_POST: [1, 60], DOMAIN: { notes } });
    const post = () => api.handler(new Request("http://everest.test/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title": "x"}' }), { clientIp: "10.0.0.1" });
    expect((await post()).status).toBe(201);
    expect((await post()).status).toBe(429);
    const read = await from("10.0.0.1");
    expect(read.status).toBe(200);
    expect(read.headers.has("x-ratelimit-limit")).toBe(false);
  });

  it("limit PATCH and DELETE each by its own setting, and PUT by none (Eve has no RATE_LIMIT_PUT)", async () => {
    start({ IF_MATCH: false, RATE_LIMIT_PATCH: [1, 60], RATE_LIMIT_DELETE: [1, 60], DOMAIN: { notes: { ...notes, item_methods: ["GET", "PATCH", "PUT", "DELETE"] } } });
    const send = (method: string, path: string, body?: string) =>
      api.handler(new Request(`http://everest.test${path}`, { method, headers: body ? { "Content-Type": "application/json" } : {}, body }), { clientIp: "10.0.0.1" });
    const ids: string[] = [];
    for (const title of ["a", "b"]) ids.push(((await json(await send("POST", "/notes", JSON.stringify({ title })))) as { _id: string })._id);
    expect((await send("PATCH", `/notes/${ids[0]}`, '{"title": "a2"}')).status).toBe(200);
    expect((await send("PATCH", `/notes/${ids[1]}`, '{"title": "b2"}')).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await send("PUT", `/notes/${ids[0]}`, `{"title": "put ${i}"}`)).status).toBe(200);
    expect((await send("DELETE", `/notes/${ids[0]}`)).status).toBe(204);
    expect((await send("DELETE", `/notes/${ids[1]}`)).status).toBe(429);
    expect((await send("GET", `/notes/${ids[1]}`)).status).toBe(200);
  });

  it("count HEAD with GET", async () => {
    start({ RATE_LIMIT_GET: [1, 60], DOMAIN: { notes } });
    expect((await from("10.0.0.1", "/notes", { method: "HEAD" })).status).toBe(200);
    expect((await from("10.0.0.1")).status).toBe(429);
  });

  it("count a verified user under their name wherever they come from, and failed logins by address", async () => {
    const auth = new BasicAuth({ users: { alice: { password: "pw" } } });
    start({ AUTH: auth, RATE_LIMIT_GET: [2, 60], DOMAIN: { notes } });
    const alice = { Authorization: "Basic " + btoa("alice:pw") };
    expect((await from("10.0.0.1", "/notes", { headers: alice })).status).toBe(200);
    expect((await from("10.0.0.2", "/notes", { headers: alice })).status).toBe(200);
    expect((await from("10.0.0.3", "/notes", { headers: alice })).status).toBe(429);

    const wrong = { Authorization: "Basic " + btoa("alice:guess") };
    expect((await from("10.0.0.9", "/notes", { headers: wrong })).status).toBe(401);
    expect((await from("10.0.0.9", "/notes", { headers: wrong })).status).toBe(401);
    expect((await from("10.0.0.9", "/notes", { headers: wrong })).status).toBe(429);
  });

  it("keep counts in the store given, so instances sharing it share the limit", async () => {
    const shared = new MemoryRateLimitStore({ now: clock });
    const settings: Settings = { RATE_LIMIT_GET: [2, 60], DOMAIN: { notes } };
    const one = testApi(settings, { rateLimitStore: shared });
    const two = start(settings, shared);
    const ask = (instance: TestApi) => instance.handler(new Request("http://everest.test/notes"), { clientIp: "10.0.0.1" });
    expect((await ask(one)).status).toBe(200);
    expect((await ask(two)).status).toBe(200);
    expect((await ask(one)).status).toBe(429);
    await one.close();
  });
});

describe("the client address from what Deno.serve and Bun.serve pass as the second argument", () => {
  const request = () => new Request("http://everest.test/notes");
  /** Deno.serve(handler): a ServeHandlerInfo. */
  const deno = (ip: string) => api.handler(request(), { remoteAddr: { transport: "tcp", hostname: ip, port: 50_000 } });
  /** Bun.serve({ fetch: handler }): the Server, which knows each request's peer. */
  const bun = (ip: string) => {
    const server = { requestIP: (r: Request) => (r instanceof Request ? { address: ip, family: "IPv4", port: 50_000 } : null) };
    return api.handler(request(), server);
  };

  for (const [runtime, ask] of [["Deno", deno], ["Bun", bun]] as const) {
    it(`gives each ${runtime} client its own rate-limit bucket`, async () => {
      start({ RATE_LIMIT_GET: [1, 60], DOMAIN: { notes } });
      expect((await ask("10.0.0.1")).status).toBe(200);
      expect((await ask("10.0.0.1")).status).toBe(429);
      expect((await ask("10.0.0.2")).status).toBe(200);
    });
  }
});
