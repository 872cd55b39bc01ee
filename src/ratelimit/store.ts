// Where rate-limit counts live (RATE_LIMIT_STORE, docs/deploy.md), and the store of one instance,
// in this process; the counts instances share are src/ratelimit/shared.ts, loaded only when named.
import { WindowCounts } from "../util/window-counts.ts";

export interface RateLimitWindow {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current window ends, in epoch milliseconds. */
  resetAt: number;
}

/**
 * Where request counts live. `hit` must count atomically: two instances hitting the same key
 * at once must both be counted (Redis `INCR`, a SQL upsert, MongoDB's `$inc`). Windows are fixed
 * and aligned to the epoch, as Eve's are, so every instance agrees on when one ends.
 */
export interface RateLimitStore {
  hit(key: string, windowSeconds: number): Promise<RateLimitWindow>;
  /** Resolves when the store answers (readiness); rejects with why it does not. */
  ping?(): Promise<void>;
  /** Connects (start-up), so that a store that cannot be reached stops the service from starting. */
  open?(): Promise<void>;
  /** Lets go of connections (graceful shutdown). */
  close?(): Promise<void>;
}

/** When the window of `seconds` that holds `now` ends, in epoch milliseconds. */
export function windowEnd(now: number, seconds: number): number {
  const length = seconds * 1000;
  return (Math.floor(now / length) + 1) * length;
}

/** Counts in this process only: right for one instance, and for tests (inject `now`). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counts = new WindowCounts();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  async hit(key: string, windowSeconds: number): Promise<RateLimitWindow> {
    const now = this.now();
    const resetAt = windowEnd(now, windowSeconds);
    return { count: this.counts.hit(key, resetAt, now), resetAt };
  }
}
