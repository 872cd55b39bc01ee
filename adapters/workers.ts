// Cloudflare Workers (workerd): the module worker for a settings object bundled at build time.
//   import settings from "./settings.json";
//   import { createWorker } from "everest-api/workers";
//   export default createWorker(settings);
// wrangler's default build bundles it (the registry's run-time import keeps the native driver
// out: src/drivers/registry.ts); this repository's wrangler.toml uses scripts/build-worker.ts,
// which splits the drivers into chunks loaded on demand.
// Secrets and variables named in ENV_SETTINGS (wrangler.toml [vars], `wrangler secret put`) are
// merged over the bundled settings, so a deployment picks its database without a rebuild:
// DB_URI=https://…/endpoint/data/v1 plus DATA_API_KEY selects the data-api driver, which keeps
// data across isolates. A D1 database bound as DB (wrangler.toml [[d1_databases]]) selects the
// sqlite driver over D1 when no DB_URI is set; `DB_URI: "d1:NAME"` picks another binding.
// Without either, every isolate has its own in-memory database.
// The native mongodb driver runs with nodejs_compat once the entry imports "everest-api/mongodb".
// Workers tie a TCP connection to the request that opened it (a later request waiting on it
// hangs), so with that driver each request gets its own handler and client, closed once the
// response is sent: a connection per request (docs/drivers.md, "On Cloudflare Workers").
// createWorker runs when the module loads, so settings everest refuses and a driver the bundle
// lacks stop the Worker from starting (wrangler dev and deploy report it), instead of failing
// every request. Bindings that select a database are checked then too when createWorker is
// given them at load (options.env), as the package's workerd entry does (adapters/workerd.ts);
// otherwise they are known only with the first request.
import { createHandler, type Handler } from "../src/handler.ts";
import type { HandlerOptions } from "../src/app.ts";
import type { Settings } from "../src/settings/types.ts";
import { databaseUris } from "../src/data/pool.ts";
import { keepsConnections } from "../src/drivers/registry.ts";
import { isD1Database } from "../src/drivers/sqlite/d1-binding.ts";
import { MemoryRateLimitStore } from "../src/ratelimit/index.ts";
// Types only: the module itself is imported when a Worker's database needs it.
import type { WorkerContext, WorkerFetch } from "./workers-connections.ts";
import { DEFAULT_D1_BINDING, ENV_SETTINGS } from "./workers-bindings.ts";

export type { WorkerContext, WorkerFetch };
export { DEFAULT_D1_BINDING, ENV_SETTINGS };

export interface ModuleWorker {
  fetch(request: Request, env?: Record<string, unknown>, ctx?: WorkerContext): Promise<Response>;
}

export interface WorkerOptions extends HandlerOptions {
  /** The deployment's bindings at module load (`import { env } from "cloudflare:workers"`). */
  env?: Record<string, unknown>;
}

export function settingsWithBindings(settings: Settings, env: Record<string, unknown> = {}): Settings {
  const merged: Settings = { ...settings };
  for (const name of ENV_SETTINGS) {
    const value = env[name];
    if (typeof value === "string" && value !== "") merged[name] = value;
  }
  // A D1 database bound as DB is the worker's durable store unless the settings choose another.
  if (merged.DB_URI === undefined && merged.DB_DRIVER === undefined && isD1Database(env[DEFAULT_D1_BINDING])) merged.DB_URI = `d1:${DEFAULT_D1_BINDING}`;
  return merged;
}

/** Whether the handler's databases keep TCP connections; throws when their driver is not in the bundle. */
const keepsConnectionsIn = (handler: Handler): boolean => databaseUris(handler.app.config).some((uri) => keepsConnections(uri, true));

export function createWorker(settings: Settings, { env: loaded = {}, ...options }: WorkerOptions = {}): ModuleWorker {
  // The bindings object is filled with the first request's env; the D1 driver, created lazily,
  // finds its database there. Rate-limit counts outlive the per-request handlers.
  const bindings: Record<string, unknown> = { ...loaded };
  // Counted in the isolate unless RATE_LIMIT_STORE names a store all isolates share (D1, say).
  const inIsolate = (settings.RATE_LIMIT_STORE ?? "memory") === "memory";
  // A request's promises and streams must not be settled by another request: change streams each poll on their own.
  const handlerOptions: HandlerOptions = { ...(inIsolate ? { rateLimitStore: new MemoryRateLimitStore() } : {}), isolatedRequests: true, ...options, services: { ...options.services, bindings } };
  // The explorer's UI files are not in a Worker (src/openapi/explorer.ts): no page by default.
  const build = (env: Record<string, unknown>): Handler => createHandler({ DOCS_ENDPOINT: null, ...settingsWithBindings(settings, env) }, handlerOptions);
  // At module load: settings everest refuses or a driver the bundle lacks throw here.
  keepsConnectionsIn(build(loaded));
  const start = async (env: Record<string, unknown>): Promise<WorkerFetch> => {
    Object.assign(bindings, env);
    const handler = build(env);
    if (!keepsConnectionsIn(handler)) return handler;
    return (await import("./workers-connections.ts")).connectionPerRequest(build);
  };
  // Settled once, with the first request's bindings; a refusal is every request's answer.
  let serving: Promise<WorkerFetch> | undefined;
  return { fetch: async (request, env = {}, ctx) => (await (serving ??= start(env)))(request, env, ctx) };
}
