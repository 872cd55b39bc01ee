// Rate limiting (Eve's RATE_LIMIT_<METHOD>, which needs Redis there): a fixed window of
// `[requests, seconds]` per client and method, counted in a pluggable store so that several
// instances behind a load balancer can share one count (see docs/auth.md).
import type { RequestContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import type { Config } from "../settings/normalize.ts";

export interface RateLimitWindow {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current window ends, in epoch milliseconds. */
  resetAt: number;
}

/**
 * Where request counts live. `hit` must count atomically: two instances hitting the same key
 * at once must both be counted (Redis `INCR` + `PEXPIRE … NX`, a Durable Object, a SQL upsert).
 */
export interface RateLimitStore {
  hit(key: string, windowSeconds: number): Promise<RateLimitWindow>;
}

/** Counts in this process only: right for one instance, and for tests (inject `now`). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, RateLimitWindow>();
  private readonly now: () => number;
  private nextSweep = 0;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  async hit(key: string, windowSeconds: number): Promise<RateLimitWindow> {
    const now = this.now();
    // Expired windows of clients that never came back would otherwise pile up forever.
    if (now >= this.nextSweep) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
      this.nextSweep = now + 60_000;
    }
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { ...window };
  }
}

/** `[requests, seconds]` for the request's method; HEAD is a GET without a body. */
function limitFor(config: Config, ctx: RequestContext): [number, number] | null {
  const method = ctx.method === "HEAD" ? "GET" : ctx.method;
  const setting = config[`RATE_LIMIT_${method}`];
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
