// Rate limiting (Eve's RATE_LIMIT_<METHOD>, which needs Redis there): a fixed window of
// `[requests, seconds]` per client and method, counted in a pluggable store so that several
// instances behind a load balancer can share one count (RATE_LIMIT_STORE, docs/deploy.md).
import type { RequestContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import type { Driver } from "../drivers/types.ts";
import type { Logger } from "../logging.ts";
import type { Config } from "../settings/normalize.ts";
import type { RateLimitSetting } from "../settings/types.ts";
import type { RedisCounts } from "./redis.ts";
import { MemoryRateLimitStore, windowEnd, type RateLimitStore } from "./store.ts";

export { MemoryRateLimitStore, windowEnd, type RateLimitStore, type RateLimitWindow } from "./store.ts";

/**
 * The store RATE_LIMIT_STORE names: this process's counts; the database's (Driver.countHit),
 * where the database has shared counts (the embedded store, which one process serves, has not);
 * or Redis, whose module (src/ratelimit/redis.ts) is loaded with its first use.
 */
export function rateLimitStoreFor(setting: string, driver: () => Promise<Driver>, logger: Logger): RateLimitStore {
  const local = new MemoryRateLimitStore();
  if (setting === "memory") return local;
  if (setting === "database") {
    return {
      hit: async (key, seconds) => {
        const database = await driver();
        if (!database.countHit) return local.hit(key, seconds);
        const resetAt = windowEnd(Date.now(), seconds);
        return { count: await database.countHit(key, resetAt), resetAt };
      },
    };
  }
  let loading: Promise<RedisCounts> | undefined;
  const redis = () => (loading ??= import("./redis.ts").then(({ redisCounts }) => redisCounts(setting, logger)));
  return {
    hit: async (key, seconds) => {
      const resetAt = windowEnd(Date.now(), seconds);
      return { count: await (await redis()).count(key, resetAt), resetAt };
    },
    open: async () => (await redis()).open(),
    ping: async () => (await redis()).ping(),
    close: async () => (await loading)?.close(),
  };
}

/**
 * The setting that limits a method (Eve's four; HEAD is a GET without a body), named by a
 * constant: looking up a name built per request was 4% of a GET item's handler on Node.
 */
function limitSetting(method: string): RateLimitSetting | null {
  switch (method) {
    case "GET":
    case "HEAD":
      return "RATE_LIMIT_GET";
    case "POST":
      return "RATE_LIMIT_POST";
    case "PATCH":
      return "RATE_LIMIT_PATCH";
    case "DELETE":
      return "RATE_LIMIT_DELETE";
    default:
      return null;
  }
}

/** `[requests, seconds]` for the request's method. */
function limitFor(config: Config, ctx: RequestContext): [number, number] | null {
  const name = limitSetting(ctx.method);
  const setting = name === null ? null : config[name];
  return Array.isArray(setting) && setting.length === 2 ? (setting as [number, number]) : null;
}

/**
 * Counts the request against `client` (the verified user, else the address; asked only when a
 * limit applies) and sets the X-RateLimit headers; over the limit it is refused with 429.
 */
export function enforceRateLimit(config: Config, ctx: RequestContext, store: RateLimitStore, client: () => string): Promise<void> | undefined {
  const limit = limitFor(config, ctx);
  // Undefined, not an async function's promise, when no limit applies (most requests of most APIs).
  return limit ? countHit(limit, ctx, store, client) : undefined;
}

async function countHit([requests, seconds]: [number, number], ctx: RequestContext, store: RateLimitStore, client: () => string): Promise<void> {
  const method = ctx.method === "HEAD" ? "GET" : ctx.method;
  const { count, resetAt } = await store.hit(`${method}:${client()}`, seconds);
  ctx.responseHeaders["x-ratelimit-limit"] = String(requests);
  ctx.responseHeaders["x-ratelimit-remaining"] = String(Math.max(0, requests - count));
  ctx.responseHeaders["x-ratelimit-reset"] = String(Math.ceil(resetAt / 1000));
  if (count > requests) throw new HttpError(429, "Rate limit exceeded");
}
