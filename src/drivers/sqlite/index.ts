// The sqlite driver as the registry builds it. `sqlite:PATH` (or `sqlite:` + `:memory:`) opens a
// file with the runtime's own SQLite: bun:sqlite on Bun, node:sqlite on Node ≥ 22.5 and Deno.
// `d1:BINDING` uses the Cloudflare D1 database bound under that name (the Workers adapter
// passes its bindings as services.bindings). Each port is imported only here, when a URI
// names it, so no other bundle carries it.
//
// One file (or D1 database) holds every database the driver serves: the database name prefixes
// each collection's table. A db_prefix whose DB_URI names another file gets a driver of its own.
import { retentionOf } from "../change-log.ts";
import type { DriverFactory } from "../types.ts";
import { SqliteDriver } from "./driver.ts";
import type { SqlPort } from "./port.ts";

export { SqliteDriver };

/** The file a `sqlite:` URI names: `sqlite:data.db`, `sqlite:/abs/data.db`, `sqlite:///abs/data.db`, `sqlite::memory:`. */
export function sqlitePath(uri: string): string {
  let path = uri.slice("sqlite:".length);
  if (path.startsWith("//")) path = decodeURIComponent(new URL(uri.replace(/^sqlite:/, "file:")).pathname);
  if (!path) throw new Error(`the URI '${uri}' names no SQLite file (sqlite:./data.db, or sqlite::memory:)`);
  return path;
}

async function openPort(uri: string, bindings: Record<string, unknown> | undefined): Promise<SqlPort> {
  if (uri.startsWith("d1:")) {
    const name = uri.slice("d1:".length) || "DB";
    const binding = bindings?.[name];
    const { isD1Database, openD1 } = await import("./d1.ts");
    if (!isD1Database(binding)) throw new Error(`the URI '${uri}' names the D1 binding '${name}', which this worker does not have`);
    return openD1(binding);
  }
  const path = sqlitePath(uri);
  if ((globalThis as { Bun?: unknown }).Bun) return (await import("./bun.ts")).openBunSqlite(path);
  return (await import("./node.ts")).openNodeSqlite(path);
}

export const createSqliteDriver: DriverFactory = async (options) => {
  const port = await openPort(options.uri, options.services?.bindings);
  return SqliteDriver.open(port, options.databaseName, retentionOf(options.settings));
};
