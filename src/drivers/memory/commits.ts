// How a write to the memory store is committed. Its journal line is made before memory changes,
// so a value the journal cannot encode refuses the write instead of leaving memory ahead of the
// file. A write to a recorded collection adds its change-log records in the same synchronous
// step as its change, and its line carries their marker (change-log.ts), so the write and its
// records are durable together or not at all (docs/contracts.md §3). The caller awaits the
// line's append, after which the records are readable.
import type { Watchers } from "../change-log.ts";
import type { MemoryChange, MemoryChangeLog } from "./change-log.ts";
import type { Compactor } from "./compaction.ts";
import type { Databases } from "./databases.ts";
import type { Journal, JournalRecord } from "./journal.ts";

/** The journal records of document writes: those the change log records. */
export type DocumentRecord = Extract<JournalRecord, { op: "insert" | "replace" | "replaceMany" | "delete" }>;

/** A change a write records, before the log numbers it. */
export type PendingChange = Omit<MemoryChange, "seq" | "at">;

export class Commits {
  /** Set once the driver has opened its journal (persistence.ts); null for a store kept in memory only. */
  journal: Journal | null = null;
  compactor: Compactor | null = null;

  constructor(
    private readonly databases: Databases,
    private readonly watchers: Watchers,
  ) {}

  /**
   * A write of documents: `apply` changes memory; `changes` (asked for only when the collection
   * is recorded, after `apply`) are the changes it made; `update` marks a `replace` line as an
   * update's. Undefined when there is nothing to wait for.
   */
  documents(db: string, coll: string, record: () => DocumentRecord, apply: () => void, changes: () => PendingChange[], update?: boolean): Promise<void> | undefined {
    const log = this.recorded(db, coll);
    const feed = log?.marker(update);
    const line = this.encode(feed ? () => ({ ...record(), feed }) : record);
    apply();
    if (!log) return this.commit(line);
    log.append(feed!, changes(), this.databases.retention, line === null);
    return this.recordedCommit(line, db, log);
  }

  /** A write the change log does not see: indexes, a collection cleared whole, media. */
  other(record: () => JournalRecord, apply: () => void): Promise<void> | undefined {
    const line = this.encode(record);
    apply();
    return this.commit(line);
  }

  /** The change log of a collection whose writes are recorded; undefined for every other. */
  recorded(db: string, coll: string): MemoryChangeLog | undefined {
    const log = this.databases.database(db)?.changes;
    return log?.recorded.has(coll) ? log : undefined;
  }

  private encode(record: () => JournalRecord): string | null {
    return this.journal ? this.journal.encode(record()) : null;
  }

  private commit(line: string | null): Promise<void> | undefined {
    return line === null ? undefined : this.append(line);
  }

  /** A recorded write's changes are readable, and its database's streams woken, once its line is on disk. */
  private recordedCommit(line: string | null, db: string, log: MemoryChangeLog): Promise<void> | undefined {
    if (line === null) {
      this.watchers.notify(db);
      return undefined;
    }
    const seq = log.seq;
    return this.append(line).then(() => {
      log.commit(seq);
      this.watchers.notify(db);
    });
  }

  private async append(line: string): Promise<void> {
    await this.journal?.append(line);
    this.compactor?.check();
  }
}
