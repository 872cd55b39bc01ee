// HEALTH_ENDPOINT and METRICS_ENDPOINT (docs/deploy.md): liveness, readiness and the Prometheus
// exposition. Loaded on the first request to either, so a service without them never loads it.
// Answered before authentication and rate limits (src/app.ts): they are never resources. It
// imports nothing the rest of the service loads but types and errors, so that bundlers keep it
// out of the modules every request needs.
import type { RequestContext } from "../context.ts";
import type { DriverPool } from "../data/pool.ts";
import { HttpError } from "../errors.ts";
import type { Logger } from "../logging.ts";
import { CONTENT_TYPE } from "../metrics/exposition.ts";
import type { ServiceMetrics } from "../metrics/service.ts";
import type { RateLimitStore } from "../ratelimit/index.ts";
import type { Config } from "../settings/normalize.ts";
import { timeLimit } from "../util/time-limit.ts";

export interface OperationalState {
  config: Config;
  pool: DriverPool;
  rateLimits: RateLimitStore;
  logger: Logger;
  metrics: ServiceMetrics | null;
  /** Shutdown has begun: not ready any more. */
  shuttingDown: boolean;
  /** The request asks for readiness (`<health>/ready`), not liveness. */
  readiness: boolean;
}

const ENCODER = new TextEncoder();

/**
 * With its Content-Length, as every other answer: a Response of text alone was written chunked
 * on Node. Bytes, as the metrics' labels may name a resource in any script.
 */
function reply(ctx: RequestContext, status: number, text: string, type = "application/json"): Response {
  const body = ENCODER.encode(text);
  const headers = { "Content-Type": type, "Cache-Control": "no-store", "Content-Length": String(body.byteLength) };
  return new Response(ctx.method === "HEAD" ? null : body, { status, headers });
}

export async function answerOperational(ctx: RequestContext, state: OperationalState): Promise<Response> {
  if (ctx.method !== "GET" && ctx.method !== "HEAD") throw new HttpError(405, undefined, { headers: { Allow: "GET, HEAD" } });
  if (ctx.endpoint.kind === "metrics") return reply(ctx, 200, state.metrics!.text(), CONTENT_TYPE);
  // Liveness touches no database: a process that answers is alive, whatever its database does,
  // unless a store of its own failed in a way only a restart mends (Driver.fault).
  if (!state.readiness) return liveness(ctx, state);
  if (state.shuttingDown) return reply(ctx, 503, JSON.stringify({ status: "shutting down", checks: {} }));
  const checks = await readiness(state);
  const ready = Object.values(checks).every((check) => check === "ok");
  return reply(ctx, ready ? 200 : 503, JSON.stringify({ status: ready ? "ok" : "unavailable", checks }));
}

function liveness(ctx: RequestContext, { pool, logger }: OperationalState): Response {
  const faults = pool.faults();
  if (faults.length === 0) return reply(ctx, 200, JSON.stringify({ status: "ok" }));
  logger.error("liveness: the store failed and needs a restart", null, faults[0]);
  return reply(ctx, 503, JSON.stringify({ status: "failed" }));
}

/**
 * Each database the settings name, and the rate-limit store, pinged within HEALTH_TIMEOUT. The
 * answer says which failed, never why: the endpoint is public, so the reason goes to the log.
 */
async function readiness({ config, pool, rateLimits, logger, metrics }: OperationalState): Promise<Record<string, string>> {
  const probes: Array<[string, () => Promise<void>]> = pool.prefixes().map((prefix) => [prefix === null ? "database" : `database:${prefix}`, () => pool.ping(prefix)]);
  if (rateLimits.ping) probes.push(["rate_limit_store", () => rateLimits.ping!()]);
  const results = await Promise.all(
    probes.map(async ([name, ping]): Promise<[string, string]> => {
      let failure: unknown;
      const answered = ping().then(
        () => "ok",
        (error: unknown) => ((failure = error), "unavailable"),
      );
      const state = await timeLimit(answered, config.HEALTH_TIMEOUT * 1000, "timeout");
      if (state === "ok") return [name, state];
      metrics?.databaseError("readiness");
      logger.error(`readiness: ${name} ${state === "timeout" ? `did not answer within ${config.HEALTH_TIMEOUT} s` : "failed"}`, null, failure);
      return [name, state];
    }),
  );
  return Object.fromEntries(results);
}
