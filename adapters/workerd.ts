// The Workers entry as wrangler resolves it (the "workerd" condition of the package's
// "./workers" export): adapters/workers.ts, with the deployment's bindings handed to
// createWorker as the module loads. A database that a binding selects (DB_URI as a secret or a
// [vars] entry) is then checked at start-up like one the settings name: a driver the bundle
// lacks stops the Worker from starting instead of failing every request.
import { env } from "cloudflare:workers";
import type { Settings } from "../src/settings/types.ts";
import { createWorker as createWorkerWith, type ModuleWorker, type WorkerOptions } from "./workers.ts";

export { DEFAULT_D1_BINDING, ENV_SETTINGS, settingsWithBindings, type ModuleWorker, type WorkerContext, type WorkerFetch, type WorkerOptions } from "./workers.ts";

export function createWorker(settings: Settings, options: WorkerOptions = {}): ModuleWorker {
  return createWorkerWith(settings, { env, ...options });
}
