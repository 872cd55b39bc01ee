// The sqlite driver's port to bun:sqlite. Like node:sqlite its calls are synchronous; its
// errors carry the extended result code as `errno`.
import { openFile, openSynchronous, type SyncDatabase } from "./sync.ts";
import type { SqlPort } from "./port.ts";

interface BunSqliteModule {
  Database: new (path: string, options?: { create?: boolean; strict?: boolean }) => SyncDatabase;
}

export async function openBunSqlite(path: string): Promise<SqlPort> {
  const specifier = "bun:sqlite";
  const module = (await import(specifier)) as BunSqliteModule;
  return bunPort(openFile(path, () => new module.Database(path, { create: true, strict: true })));
}

export function bunPort(db: SyncDatabase): SqlPort {
  return openSynchronous(db, (error) => (error as { errno?: number }).errno);
}
