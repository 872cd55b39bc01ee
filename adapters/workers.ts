// Cloudflare Workers (workerd): the module worker for a settings object bundled at build time.
//   import settings from "./settings.json";
//   import { createWorker } from "everest/workers";
//   export default createWorker(settings);
// scripts/build-worker.ts makes that bundle (wrangler.toml runs it): wrangler's own bundling
// would also pull in the native mongodb driver, which cannot run on Workers.
// Secrets and variables named in ENV_SETTINGS (wrangler.toml [vars], `wrangler secret put`) are
// merged over the bundled settings, so a deployment picks its database without a rebuild:
// DB_URI=https://…/endpoint/data/v1 plus DATA_API_KEY selects the data-api driver, which keeps
// data across isolates; without it every isolate has its own in-memory database.
import { createHandler, type Handler } from "../src/handler.ts";
import type { HandlerOptions } from "../src/app.ts";
import type { Settings } from "../src/settings/types.ts";

/** The bindings that override settings of the same name; other bindings reach the handler as env only. */
export const ENV_SETTINGS = ["DB_URI", "DB_NAME", "DATA_API_KEY", "DATA_API_SOURCE"] as const;

export interface ModuleWorker {
  fetch(request: Request, env?: Record<string, unknown>, ctx?: unknown): Promise<Response>;
}

export function settingsWithBindings(settings: Settings, env: Record<string, unknown> = {}): Settings {
  const merged: Settings = { ...settings };
  for (const name of ENV_SETTINGS) {
    const value = env[name];
    if (typeof value === "string" && value !== "") merged[name] = value;
  }
  return merged;
}

export function createWorker(settings: Settings, options?: HandlerOptions): ModuleWorker {
  let handler: Handler | undefined;
  return {
    // Bindings arrive with the first request, not at module load; building the handler here
    // also keeps its set-up out of the global scope, where workerd forbids timers and randomness.
    fetch(request, env, ctx) {
      // The explorer's UI files are not in a Worker (src/openapi/explorer.ts): no page by default.
      handler ??= createHandler({ DOCS_ENDPOINT: null, ...settingsWithBindings(settings, env) }, options);
      return handler(request, env, ctx);
    },
  };
}
