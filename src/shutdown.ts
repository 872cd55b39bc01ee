// The ordered shutdown of docs/contracts.md §7, loaded when the service closes: streams end with
// their final event and no new one starts; requests in flight, and the adapter's open
// connections (`connections`, which settles once they are closed), get SHUTDOWN_TIMEOUT to
// finish; then the databases close (the journal flushed, its lock released) and the rate-limit
// store lets go.
import type { DriverPool } from "./data/pool.ts";
import type { Logger } from "./logging.ts";
import type { RateLimitStore } from "./ratelimit/index.ts";
import { timeLimit } from "./util/time-limit.ts";

export interface Closing {
  /** Settles once every open stream has sent its final event (src/http/open-streams.ts). */
  streamsEnded: Promise<void>;
  /** Resolves once no request is in flight. */
  idle: Promise<void>;
  inFlight: () => number;
  seconds: number;
  pool: DriverPool;
  rateLimits: RateLimitStore;
  logger: Logger;
}

/** Runs the shutdown; resolves when the databases are closed. */
export async function shutDown(closing: Closing, connections: Promise<unknown> | undefined, databasesClosing: () => void): Promise<void> {
  const { seconds, logger } = closing;
  let connectionsClosed = connections === undefined;
  void connections?.catch(() => undefined).then(() => (connectionsClosed = true));
  // The streams' ending is bounded with the rest: a stream that cannot send its last event does not hold the shutdown up.
  const drained = Promise.all([closing.streamsEnded, closing.idle, connections?.catch(() => undefined)]).then(() => true);
  if (!(await timeLimit(drained, seconds * 1000, false))) {
    const open = connectionsClosed ? "" : ", connections still open (they are closed now)";
    logger.warning(`shutdown: SHUTDOWN_TIMEOUT (${seconds} s) passed with ${closing.inFlight()} request(s) in flight${open}; closing the databases`);
  }
  databasesClosing();
  const results = await Promise.allSettled([closing.pool.close(), closing.rateLimits.close?.()]);
  for (const result of results) if (result.status === "rejected") logger.error("shutdown: a database did not close cleanly", null, result.reason);
}
