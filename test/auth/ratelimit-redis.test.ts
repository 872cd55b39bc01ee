// RATE_LIMIT_STORE as a redis:// URI, against a real redis-server (test/support/redis.ts): two
// instances share the counts; a Redis that cannot be reached at start-up stops it with a message
// that says what to do; one that goes away while serving turns limited requests into 503 (never
// 500, never unlimited) and readiness into 503, and they recover when it is back. Several
// processes sharing counts through Redis are test/instances/.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHandler, type Handler } from "../../src/handler.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { HAS_REDIS, RedisServer } from "../support/redis.ts";

const people: ResourceSettings = { resource_methods: ["GET", "POST"], schema: { name: { type: "string" } } };

let redis: RedisServer;
const handlers: Handler[] = [];
beforeAll(async () => {
  if (HAS_REDIS) redis = await RedisServer.start();
});
afterAll(async () => {
  await Promise.all(handlers.map((handler) => handler.app.close()));
  await redis?.stop();
});

function instance(settings: Settings): Handler {
  const handler = createHandler({ DB_URI: "memory", ...settings });
  handlers.push(handler);
  return handler;
}

const get = (handler: Handler, path: string, ip = "10.0.0.1") => handler(new Request(`http://everest.test${path}`), { clientIp: ip });

describe.runIf(HAS_REDIS)("rate limits counted in Redis", () => {
  it("are shared by two instances: 30 requests alternating between them, 10 pass", async () => {
    const settings: Settings = { RATE_LIMIT_STORE: redis.url, RATE_LIMIT_GET: [10, 3600], DOMAIN: { people: { ...people, resource_methods: ["GET"] } } };
    const [one, two] = [instance(settings), instance(settings)];
    await Promise.all([one.app.open(), two.app.open()]);
    // A window that ends during the 30 requests would let more through; wait out its last seconds.
    const left = 3600_000 - (Date.now() % 3600_000);
    if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await get(i % 2 ? two : one, "/people", "10.9.9.9")).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
  });

  it("refuse to start on a Redis that cannot be reached, saying what to do, without its password", async () => {
    const handler = instance({ RATE_LIMIT_STORE: "redis://:s3cret@127.0.0.1:1", RATE_LIMIT_GET: [10, 60], DOMAIN: { people } });
    const opening = handler.app.open();
    await expect(opening).rejects.toThrow(/^RATE_LIMIT_STORE: the Redis server at redis:\/\/127\.0\.0\.1:1 cannot be reached \(.+\): start it, correct the URI, or choose "memory" or "database"$/);
    await expect(opening).rejects.not.toThrow(/s3cret/);
    // A handler used without open() answers 503 where a count is needed, never 500 or unlimited.
    const refused = await get(handler, "/people");
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
  });

  it("answer 503 while Redis is away, readiness too, and recover when it is back", async () => {
    const handler = instance({ RATE_LIMIT_STORE: redis.url, RATE_LIMIT_GET: [1000, 60], HEALTH_ENDPOINT: "health", DOMAIN: { people } });
    await handler.app.open();
    expect((await get(handler, "/people")).status).toBe(200);
    expect((await get(handler, "/health/ready")).status).toBe(200);
    await redis.stop();
    try {
      const limited = await get(handler, "/people");
      expect(limited.status).toBe(503);
      expect(limited.headers.has("x-ratelimit-remaining")).toBe(false);
      const ready = await get(handler, "/health/ready");
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: "unavailable", checks: { database: "ok", rate_limit_store: expect.stringMatching(/^(unavailable|timeout)$/) } });
      // A method without a limit needs no count.
      const post = await handler(new Request("http://everest.test/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"name": "x"}' }), { clientIp: "10.0.0.1" });
      expect(post.status).toBe(201);
    } finally {
      await redis.resume();
    }
    await expect.poll(async () => (await get(handler, "/people")).status, { timeout: 15_000, interval: 200 }).toBe(200);
    expect((await get(handler, "/health/ready")).status).toBe(200);
  });

  it("let the shutdown end while Redis hangs with a count unanswered", async () => {
    const handler = createHandler({ DB_URI: "memory", RATE_LIMIT_STORE: redis.url, RATE_LIMIT_GET: [1000, 60], DOMAIN: { people } });
    await handler.app.open();
    expect((await get(handler, "/people")).status).toBe(200);
    redis.freeze();
    try {
      // Its count is sent and never answered: the request gives up (503); the command stays queued.
      expect((await get(handler, "/people")).status).toBe(503);
      // A graceful close waited for that reply for as long as Redis hung (for ever, here).
      const closing = handler.app.close().then(() => "closed");
      const hung = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 20_000));
      expect(await Promise.race([closing, hung])).toBe("closed");
    } finally {
      redis.thaw();
    }
  }, 30_000);
});
