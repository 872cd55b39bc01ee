// Cloudflare Workers (workerd): the module worker for a settings object bundled at build time.
//   import settings from "./settings.json";
//   import { createWorker } from "everest/workers";
//   export default createWorker(settings);
// scripts/build-worker.ts makes that bundle (wrangler.toml runs it): wrangler's own bundling
// would also pull in the native mongodb driver, which cannot run on Workers.
// Secrets and variables named in ENV_SETTINGS (wrangler.toml [vars], `wrangler secret put`) are
// merged over the bundled settings, so a deployment picks its database without a rebuild:
// DB_URI=https://…/endpoint/data/v1 plus DATA_API_KEY selects the data-api driver, which keeps
// data across isolates. A D1 database bound as DB (wrangler.toml [[d1_databases]]) selects the
// sqlite driver over D1 when no DB_URI is set; `DB_URI: "d1:NAME"` picks another binding.
// Without either, every isolate has its own in-memory database.
import { createHandler, type Handler } from "../src/handler.ts";
import type { HandlerOptions } from "../src/app.ts";
import type { Settings } from "../src/settings/types.ts";
import { isD1Database } from "../src/drivers/sqlite/d1.ts";

/** The bindings that override settings of the same name; other bindings reach the handler as env only. */
export const ENV_SETTINGS = ["DB_URI", "DB_NAME", "DATA_API_KEY", "DATA_API_SOURCE"] as const;

export interface ModuleWorker {
  fetch(request: Request, env?: Record<string, unknown>, ctx?: unknown): Promise<Response>;
}

/** The D1 binding a deployment gets without naming one (`DB_URI: "d1:NAME"` names another). */
export const DEFAULT_D1_BINDING = "DB";

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

export function createWorker(settings: Settings, options?: HandlerOptions): ModuleWorker {
  let handler: Handler | undefined;
  return {
    // Bindings arrive with the first request, not at module load; building the handler here
    // also keeps its set-up out of the global scope, where workerd forbids timers and randomness.
    fetch(request, env, ctx) {
      // The explorer's UI files are not in a Worker (src/openapi/explorer.ts): no page by default.
      // The bindings go along as services: a d1: database URI finds its D1 database there.
      handler ??= createHandler({ DOCS_ENDPOINT: null, ...settingsWithBindings(settings, env) }, { ...options, services: { ...options?.services, bindings: env ?? {} } });
      return handler(request, env, ctx);
    },
  };
}
