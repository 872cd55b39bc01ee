// The change feed's side of the App's open streams (docs/contracts.md §7): each stream is
// registered in the App's one registry (src/http/open-streams.ts), which counts them for the
// metrics endpoint and ends each with its final event when the App closes; here a stream past
// CHANGE_FEED_MAX_STREAMS is refused, the heartbeat of all of them beats on one timer, and one
// Hub per database a stream reads is kept for as long as the App lives.
import type { Driver } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import type { OpenStreams } from "../http/open-streams.ts";
import type { Config } from "../settings/normalize.ts";
// Types only: the hub and the streams are loaded with the first stream (src/endpoints/feed.ts),
// so an App that serves none does not carry them.
import type { Hub, HubTiming } from "./hub.ts";
import type { FeedStream } from "./stream.ts";

export class FeedRegistry {
  private readonly streams = new Set<FeedStream>();
  private readonly hubs = new Map<Driver, Map<string, Hub>>();
  private beat: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly config: Config,
    /** The App's registry of open streams, which shutdown drains. */
    private readonly open: OpenStreams,
    private readonly onError: (error: unknown) => void,
    /** Each request's work stays its own (Workers): streams share no reader and no timer (hub.ts). */
    readonly isolated = false,
  ) {}

  /** Refuses a new stream, as 503 with Retry-After, when the server is full or shutting down. */
  admit(): void {
    if (!this.open.accepting) throw new HttpError(503, "the server is shutting down", { headers: { "Retry-After": "1" } });
    if (this.streams.size >= this.config.CHANGE_FEED_MAX_STREAMS) {
      throw new HttpError(503, "too many open change streams", { headers: { "Retry-After": String(Math.max(1, Math.ceil(this.config.CHANGE_FEED_RETRY / 1000))) } });
    }
  }

  /** The hub of a database, made on first use by `make`. */
  hub(driver: Driver, database: string | undefined, make: (timing: HubTiming, onError: (error: unknown) => void) => Hub): Hub {
    let byDatabase = this.hubs.get(driver);
    if (!byDatabase) this.hubs.set(driver, (byDatabase = new Map()));
    const key = database ?? "";
    let hub = byDatabase.get(key);
    if (!hub) {
      // Failures after close() are the closing drivers' and nobody's concern.
      const timing = { pollMs: this.config.CHANGE_FEED_POLL, heartbeatMs: this.config.CHANGE_FEED_HEARTBEAT * 1000, isolated: this.isolated };
      hub = make(timing, (error) => !this.open.accepting || this.onError(error));
      byDatabase.set(key, hub);
    }
    return hub;
  }

  add(stream: FeedStream): void {
    // Shutdown began since admit(): the stream ends at once, with its final event.
    if (!this.open.add(stream)) return stream.end();
    this.streams.add(stream);
    stream.whenEnded(() => {
      this.open.delete(stream);
      this.streams.delete(stream);
      if (this.streams.size === 0 && this.beat) {
        clearInterval(this.beat);
        this.beat = null;
      }
    });
    if (this.isolated) return;
    this.beat ??= setInterval(() => {
      for (const open of this.streams) open.heartbeat();
    }, this.config.CHANGE_FEED_HEARTBEAT * 1000);
  }

}
