// What makes a memory driver durable, loaded only by a driver that has a journal (a memory-only
// store, as on Workers, never loads it): claiming and replaying the file, then the journal and
// its compactor, which writes snapshots of the store's state.
import { Binary } from "bson";
import type { Doc, FileAccess, NormalizedIndexSpec } from "../types.ts";
import { Compactor, DEFAULT_COMPACTION, type CompactionPolicy } from "./compaction.ts";
import type { Databases } from "./databases.ts";
import { encodeRecord, FORMAT_LINE, Journal, replayJournal } from "./journal.ts";
import type { LogState } from "./change-log.ts";
import type { MediaRecord } from "./media.ts";

/** Documents per insert record in a snapshot, to keep lines reasonably short. */
const SNAPSHOT_BATCH = 1000;

export interface Persistence {
  journal: Journal;
  compactor: Compactor;
}

/** Claims the journal at `path`, replays it into `databases`, and starts compacting it when due. */
export async function openJournal(files: FileAccess, path: string, policy: Partial<CompactionPolicy> | undefined, databases: Databases): Promise<Persistence> {
  const lock = await files.lock(path).catch((error: unknown) => Promise.reject(unopenable(path, error)));
  let journal: Journal;
  let baseline: number;
  try {
    const replayed = await replayJournal(files, path, (record) => databases.apply(record));
    if (replayed.size === 0) await files.append(path, FORMAT_LINE);
    journal = new Journal(files, path, lock, replayed.size || FORMAT_LINE.length);
    baseline = replayed.baseline;
  } catch (error) {
    await lock.release();
    throw error;
  }
  const compactor = new Compactor(files, journal, () => capture(databases), { ...DEFAULT_COMPACTION, ...policy }, baseline);
  compactor.check();
  return { journal, compactor };
}

/** A file system error (ENOENT, EACCES) names the lock file, not the journal, and no cause: say both. */
function unopenable(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return error;
  const reason = code === "ENOENT" ? "its directory does not exist" : (error as Error).message;
  return new Error(`cannot open the journal ${path}: ${reason}`, { cause: error });
}

interface CapturedCollection {
  db: string;
  coll: string;
  indexes: Array<NormalizedIndexSpec>;
  docs: Doc[];
}

/**
 * The journal lines of the state as it is now, made lazily. Stored documents and media are
 * never changed in place (a write stores a new object), so holding references to the current
 * ones is a consistent snapshot that later writes do not disturb, without copying the data.
 */
function capture(databases: Databases): Iterable<string> {
  const collections: CapturedCollection[] = [];
  const media: Array<{ db: string; files: MediaRecord[] }> = [];
  const logs: Array<{ db: string; state: LogState }> = [];
  for (const [db, database] of databases.entries()) {
    if (database.changes) logs.push({ db, state: database.changes.state() });
    for (const [coll, collection] of database.collections) {
      collections.push({ db, coll, indexes: collection.indexSpecs(), docs: Array.from(collection.documents(), (stored) => stored.doc) });
    }
    media.push({ db, files: [...database.media.values()] });
  }
  return snapshotLines(collections, media, logs);
}

function* snapshotLines(collections: CapturedCollection[], media: Array<{ db: string; files: MediaRecord[] }>, logs: Array<{ db: string; state: LogState }>): Generator<string> {
  for (const { db, state } of logs) {
    const { epoch, seq, records } = state;
    yield encodeRecord({ op: "changes", db, epoch, seq, records: records.slice(0, SNAPSHOT_BATCH) });
    for (let start = SNAPSHOT_BATCH; start < records.length; start += SNAPSHOT_BATCH) {
      yield encodeRecord({ op: "changes", db, epoch, seq, records: records.slice(start, start + SNAPSHOT_BATCH), continued: true });
    }
  }
  for (const { db, coll, indexes, docs } of collections) {
    if (indexes.length > 0) yield encodeRecord({ op: "indexes", db, coll, indexes });
    for (let start = 0; start < docs.length; start += SNAPSHOT_BATCH) {
      yield encodeRecord({ op: "insert", db, coll, docs: docs.slice(start, start + SNAPSHOT_BATCH) });
    }
  }
  for (const { db, files } of media) {
    for (const file of files) yield encodeRecord({ op: "media.put", db, file: { ...file, data: new Binary(file.data) } });
  }
}
