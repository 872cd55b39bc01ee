// The sqlite driver's port to node:sqlite, the SQLite built into Node ≥ 22.5 and Deno. Its calls
// are synchronous, so a batch runs between BEGIN and COMMIT with nothing else interleaved.
import { openFile, openSynchronous, type SyncDatabase } from "./sync.ts";
import type { SqlPort } from "./port.ts";

interface NodeSqliteModule {
  DatabaseSync: new (path: string) => SyncDatabase;
}

/** The version node:sqlite first shipped in, named in the error on older Node. */
const REQUIRED = "Node 22.5";

export async function openNodeSqlite(path: string): Promise<SqlPort> {
  let module: NodeSqliteModule;
  try {
    // A variable specifier: bundlers and older type declarations leave it alone.
    const specifier = "node:sqlite";
    module = (await import(specifier)) as NodeSqliteModule;
  } catch (error) {
    const running = typeof process !== "undefined" ? ` (this is Node ${process.versions.node})` : "";
    throw new Error(`the sqlite driver needs node:sqlite, in ${REQUIRED} or later and in Deno${running}`, { cause: error });
  }
  return nodePort(openFile(path, () => new module.DatabaseSync(path)));
}

/** The port over an open node:sqlite connection, whose errors carry the extended result code as `errcode`. */
export function nodePort(db: SyncDatabase): SqlPort {
  return openSynchronous(db, (error) => (error as { errcode?: number }).errcode);
}
