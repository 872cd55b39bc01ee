// The names a Worker's bindings are read by, apart from the adapter (adapters/workers.ts) so the
// Workers server (scripts/serve-workers.ts) can name them without loading everest itself.

/** The bindings that override settings of the same name; other bindings reach the handler as env only. */
export const ENV_SETTINGS = ["DB_URI", "DB_NAME", "DATA_API_KEY", "DATA_API_SOURCE"] as const;

/** The D1 binding a deployment gets without naming one (`DB_URI: "d1:NAME"` names another). */
export const DEFAULT_D1_BINDING = "DB";
