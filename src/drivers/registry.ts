// Builds the driver a database URI names. Each scheme maps to a factory that is imported only
// when a URI needs it, so a bundle (e.g. for Workers) carries only the drivers it uses.
import type { Driver, DriverFactory, DriverOptions } from "./types.ts";

const memory = (): Promise<DriverFactory> => import("./memory/index.ts").then((m) => m.createMemoryDriver);
const sqlite = (): Promise<DriverFactory> => import("./sqlite/index.ts").then((m) => m.createSqliteDriver);
const dataApi = (): Promise<DriverFactory> => import("./data-api/index.ts").then((m) => m.createDataApiDriver);

/** Set by the `everest-api/mongodb` entry when a program imports it (src/drivers/mongodb/index.ts). */
let registeredMongodb: DriverFactory | undefined;

export function registerMongodbDriver(factory: DriverFactory): void {
  registeredMongodb = factory;
}

export const MONGODB_DRIVER_HELP =
  'npm install mongodb; a bundle (a Worker with nodejs_compat) also needs `import "everest-api/mongodb"` in its entry ' +
  "module; without TCP sockets, use the data-api driver (DB_URI=https://…/endpoint/data/v1)";

// The native driver needs node:net and the mongodb package. Its module is imported through a
// specifier computed at run time, which bundlers (wrangler's esbuild among them) leave out, so
// a Worker built with wrangler's defaults never reaches node:net; a bundle that wants the
// driver imports `everest-api/mongodb`, which registers it.
const mongodb = async (): Promise<DriverFactory> => {
  if (registeredMongodb) return registeredMongodb;
  const here = import.meta.url;
  // .ts when run from the sources (tests, tsx, Deno), .js from the package.
  const specifier = new URL(`./mongodb/index${here.slice(here.lastIndexOf("."))}`, here).href;
  try {
    const module = (await import(/* @vite-ignore */ specifier)) as { createMongoDriver: DriverFactory };
    return module.createMongoDriver;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`the mongodb driver could not be loaded (${reason}): ${MONGODB_DRIVER_HELP}`, { cause: error });
  }
};

/**
 * Whether the driver for `uri` keeps TCP connections to its server open between operations
 * (the native mongodb driver); on Workers such a connection belongs to the request that opened
 * it (adapters/workers.ts). In a bundle only a registered mongodb driver loads, since the
 * run-time import above finds nothing there: `bundled` asks for it, and its absence throws.
 */
export function keepsConnections(uri: string, bundled: boolean): boolean {
  const scheme = uriScheme(uri);
  if (scheme !== "mongodb" && scheme !== "mongodb+srv") return false;
  if (bundled && !registeredMongodb) throw new Error(`the mongodb driver is not in this bundle: ${MONGODB_DRIVER_HELP}`);
  return true;
}

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

/** Where a database URI keeps the data, for the start-up line; credentials are left out. */
export function describeStore(uri: string, database: string): { text: string; durable: boolean } {
  const scheme = uriScheme(uri);
  const rest = uri.slice(uri.indexOf(":") + 1);
  if (scheme === "memory") return { text: "the embedded in-memory store", durable: false };
  if (scheme === "file") return { text: `the embedded store with its journal at ${rest}`, durable: true };
  if (scheme === "sqlite" || scheme === "d1") return { text: `SQLite ${rest}`, durable: true };
  if (scheme === "mongodb" || scheme === "mongodb+srv") {
    const hosts = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]*)/.exec(uri)?.[1] ?? "";
    return { text: `MongoDB at ${hosts}, database ${database}`, durable: true };
  }
  if (scheme === "https" || scheme === "http") return { text: `the Data API at ${new URL(uri).origin}, database ${database}`, durable: true };
  return { text: uri, durable: true };
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
