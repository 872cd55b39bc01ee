// The memory driver as the registry builds it: `memory` (or `memory:`) keeps everything in
// memory only, `file:PATH` adds the durable journal at PATH.
import { retentionOf } from "../change-log.ts";
import { FileAccessMissingError, type DriverFactory } from "../types.ts";
import { MemoryDriver } from "./driver.ts";

export { MemoryDriver, type MemoryDriverOptions } from "./driver.ts";
export type { ScanStats } from "./collection.ts";

/** The journal path of a `file:` URI: `file:data/db.jsonl`, `file:/abs/db.jsonl` or `file:///abs/db.jsonl`. */
export function journalPath(uri: string): string {
  let path = uri.slice("file:".length);
  if (uri.startsWith("file://")) {
    path = decodeURIComponent(new URL(uri).pathname);
    // file:///C:/data/db.jsonl names C:/data/db.jsonl, not /C:/data/db.jsonl.
    if (/^\/[A-Za-z]:\//.test(path)) path = path.slice(1);
  }
  if (!path) throw new Error(`the URI '${uri}' names no journal file`);
  return path;
}

export const createMemoryDriver: DriverFactory = (options) => {
  const retention = retentionOf(options.settings);
  if (!options.uri.startsWith("file:")) return MemoryDriver.open({ databaseName: options.databaseName, retention });
  const files = options.services?.files;
  if (!files) throw new FileAccessMissingError(options.uri);
  const { JOURNAL_COMPACTION_RATIO: ratio, JOURNAL_COMPACTION_MIN_SIZE: minSize } = options.settings;
  const compaction = {
    ...(typeof ratio === "number" ? { ratio } : {}),
    ...(typeof minSize === "number" ? { minSize } : {}),
  };
  return MemoryDriver.open({ databaseName: options.databaseName, journal: { files, path: journalPath(options.uri), compaction }, retention });
};
