// What running the service in production needs of the App (docs/deploy.md, docs/contracts.md
// §7): the count of requests in flight, the registry of open streams, the metrics, and the
// ordered shutdown. What only some services use is loaded when first needed: the metrics when
// METRICS_ENDPOINT is set, the health and metrics endpoints (src/endpoints/operational.ts) when
// one is asked, the shutdown (src/shutdown.ts) when the service closes.
import type { RequestContext } from "./context.ts";
import type { DriverPool } from "./data/pool.ts";
import { OpenStreams } from "./http/open-streams.ts";
import type { Logger } from "./logging.ts";
import type { ServiceMetrics } from "./metrics/service.ts";
import type { RateLimitStore } from "./ratelimit/index.ts";
import type { Config } from "./settings/normalize.ts";

export class Operations {
  /** Requests the App is answering now. */
  inFlight = 0;
  readonly streams = new OpenStreams();
  /** Present only when METRICS_ENDPOINT is set. */
  readonly metrics: Promise<ServiceMetrics> | null;
  /** Set once the databases are closed: nothing more can be answered. */
  closed = false;
  private idle?: () => void;
  private closing?: Promise<void>;

  constructor(
    private readonly config: Config,
    private readonly pool: DriverPool,
    private readonly rateLimits: RateLimitStore,
    private readonly logger: Logger,
  ) {
    this.metrics = config.METRICS_ENDPOINT
      ? import("./metrics/service.ts").then(({ ServiceMetrics }) => new ServiceMetrics({ openStreams: () => this.streams.size, inFlight: () => this.inFlight }))
      : null;
  }

  /** A request was answered (or failed); the last one of a shutdown's drain lets it go on. */
  finished(): void {
    if (--this.inFlight === 0) this.idle?.();
  }

  /** The health or metrics endpoint's answer; `readiness` for the health endpoint's `ready` path. */
  async answer(ctx: RequestContext, readiness: boolean): Promise<Response> {
    const [{ answerOperational }, metrics] = await Promise.all([import("./endpoints/operational.ts"), this.metrics]);
    const state = { config: this.config, pool: this.pool, rateLimits: this.rateLimits, logger: this.logger, metrics, shuttingDown: this.closing !== undefined, readiness };
    return answerOperational(ctx, state);
  }

  /** Ends the service in order (src/shutdown.ts); asked again, the same shutdown. */
  close(connections?: Promise<unknown>): Promise<void> {
    if (this.closing) return this.closing;
    // At once: no stream may start while the shutdown's module loads.
    const streamsEnded = this.streams.close();
    return (this.closing = import("./shutdown.ts").then(({ shutDown }) =>
      shutDown(
        {
          streamsEnded,
          idle: this.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.idle = resolve)),
          inFlight: () => this.inFlight,
          seconds: this.config.SHUTDOWN_TIMEOUT,
          pool: this.pool,
          rateLimits: this.rateLimits,
          logger: this.logger,
        },
        connections,
        () => (this.closed = true),
      ),
    ));
  }
}
