// Builds the driver a database URI names. Each scheme maps to a factory that is imported only
// when a URI needs it, so a bundle (e.g. for Workers) carries only the drivers it uses.
import type { Driver, DriverFactory, DriverOptions } from "./types.ts";

const memory = (): Promise<DriverFactory> => import("./memory/index.ts").then((m) => m.createMemoryDriver);
const mongodb = (): Promise<DriverFactory> => import("./mongodb/index.ts").then((m) => m.createMongoDriver);
const sqlite = (): Promise<DriverFactory> => import("./sqlite/index.ts").then((m) => m.createSqliteDriver);
const dataApi = (): Promise<DriverFactory> => import("./data-api/index.ts").then((m) => m.createDataApiDriver);

/** Factories by URI scheme; `http:` is for a Data API gateway on a private network. */
const factories: Record<string, () => Promise<DriverFactory>> = {
  memory,
  file: memory,
  mongodb,
  "mongodb+srv": mongodb,
  sqlite,
  d1: sqlite,
  https: dataApi,
  http: dataApi,
};

/** The scheme of a database URI, lower-cased; a bare `memory` counts as the `memory:` scheme. */
function uriScheme(uri: string): string | null {
  if (uri === "memory") return "memory";
  return /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase() ?? null;
}

/** The driver for `uri`; none means the in-memory driver. */
export async function createDriver(uri: string | undefined, options: Omit<DriverOptions, "uri">): Promise<Driver> {
  const resolved = uri ?? "memory";
  const scheme = uriScheme(resolved);
  const load = scheme !== null && Object.hasOwn(factories, scheme) ? factories[scheme] : undefined;
  if (!load) {
    const supported = Object.keys(factories).map((s) => `${s}:`).join(", ");
    const named = scheme === null ? `the database URI '${resolved}' has no scheme` : `unsupported database URI scheme '${scheme}:'`;
    throw new Error(`${named}; supported schemes: ${supported}`);
  }
  const factory = await load();
  return factory({ ...options, uri: resolved });
}
