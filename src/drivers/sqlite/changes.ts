// The sqlite driver's change log (docs/contracts.md §3): a table per database, `<db>.$changes`
// (`$` cannot begin a collection's name, so it never meets one), whose rows the driver adds in
// the same transaction as the write they describe. AUTOINCREMENT numbers them in commit order
// (SQLite runs one write transaction at a time, across processes too) and never reuses a
// number, so sqlite_sequence holds the newest one even once old rows are trimmed. The log's
// epoch is kept in `_everest_feed`, one row per database.
import { formatPosition, newEpoch, parsePosition, retainedSince, Watchers, type Retention } from "../change-log.ts";
import type { ChangeLog, ChangeOperation, ChangeRecord, Target } from "../types.ts";
import { decodeDocument } from "./codec.ts";
import { identifier } from "./indexes.ts";
import type { SqlPort, SqlValue, Statement } from "./port.ts";

export const FEED_TABLE = "_everest_feed";
export const FEED_SCHEMA: Statement = { sql: `CREATE TABLE IF NOT EXISTS ${FEED_TABLE} (db TEXT PRIMARY KEY NOT NULL, epoch TEXT NOT NULL)`, params: [] };

/** Recorded writes between two trims of the log by the writer (reads trim too). */
const TRIM_EVERY = 64;

function changesTable(db: string): string {
  return `${db}.$changes`;
}

export class SqliteChangeLog implements ChangeLog {
  /** Other processes write the file too: their changes are found by polling. */
  readonly pushes = false;
  /** Recorded collection tables → their database. */
  private readonly recorded = new Map<string, string>();
  private readonly epochs = new Map<string, Promise<string>>();
  private readonly watchers = new Watchers();
  private writes = 0;

  constructor(
    private readonly port: SqlPort,
    private readonly defaultDatabase: string,
    private readonly retention: Retention,
  ) {}

  async record(target: Target): Promise<void> {
    const db = target.database ?? this.defaultDatabase;
    await this.epoch(db);
    this.recorded.set(`${db}.${target.collection}`, db);
  }

  async head(database?: string): Promise<string> {
    const db = database ?? this.defaultDatabase;
    return formatPosition(await this.epoch(db), await this.last(db));
  }

  async read(database: string | undefined, after: string, limit: number) {
    const db = database ?? this.defaultDatabase;
    const epoch = await this.epoch(db);
    const head = await this.last(db);
    const seq = parsePosition(after, epoch, head);
    await this.trim(db);
    const table = identifier(changesTable(db));
    const [oldest] = await this.port.all({ sql: `SELECT min(seq) AS seq FROM ${table}`, params: [] });
    const first = oldest?.seq == null ? head + 1 : Number(oldest.seq);
    if (seq < first - 1) return { expired: true as const, head: formatPosition(epoch, head) };
    const rows = await this.port.all({ sql: `SELECT seq, coll, op, before, after, at FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`, params: [seq, limit] });
    const records: ChangeRecord[] = rows.map((row) => {
      const before = row.before == null ? null : decodeDocument(String(row.before));
      const after = row.after == null ? null : decodeDocument(String(row.after));
      return { position: formatPosition(epoch, Number(row.seq)), collection: String(row.coll), op: String(row.op) as ChangeOperation, id: (after ?? before)!._id, before, after, at: new Date(Number(row.at)) };
    });
    return { expired: false as const, records };
  }

  watch(database: string | undefined, wake: () => void): () => void {
    return this.watchers.add(database ?? this.defaultDatabase, wake);
  }

  /** The database of a collection table whose writes are recorded; undefined for every other. */
  database(table: string): string | undefined {
    return this.recorded.get(table);
  }

  /**
   * The statement that records one change of `coll`. `guarded`: only when the statement before
   * it in the same transaction changed a row (a conditional write that found its document).
   */
  entry(db: string, coll: string, op: ChangeOperation, before: string | null, after: string | null, guarded = false): Statement {
    const params: SqlValue[] = [coll, op, before, after, Date.now()];
    const sql = `INSERT INTO ${identifier(changesTable(db))} (coll, op, before, after, at) SELECT ?, ?, ?, ?, ?${guarded ? " WHERE changes() > 0" : ""}`;
    return { sql, params };
  }

  /** The statement that records each `[id, before, after]` triple of a JSON array (a batch's rows, modify.ts) as updated, in order. */
  updates(db: string, coll: string, triples: string): Statement {
    return {
      sql: `INSERT INTO ${identifier(changesTable(db))} (coll, op, before, after, at) SELECT ?, 'update', value ->> 1, value ->> 2, ? FROM json_each(?) ORDER BY key`,
      params: [coll, Date.now(), triples],
    };
  }

  /** The statement that records every row of `table` that `where` selects as deleted, before the delete runs. */
  deletions(db: string, coll: string, table: string, where: Statement): Statement {
    return {
      sql: `INSERT INTO ${identifier(changesTable(db))} (coll, op, before, after, at) SELECT ?, 'delete', doc, NULL, ? FROM ${table} WHERE ${where.sql} ORDER BY rowid`,
      params: [coll, Date.now(), ...where.params],
    };
  }

  /** After a recorded write has committed: wake this process's streams, and now and then trim. */
  written(db: string): void {
    this.watchers.notify(db);
    if (++this.writes % TRIM_EVERY === 0) this.trim(db).catch(() => undefined);
  }

  private epoch(db: string): Promise<string> {
    let epoch = this.epochs.get(db);
    if (!epoch) {
      epoch = (async () => {
        // A log table made anew (its old one dropped, or a file restored without it) numbers its
        // changes from 1 again, so it gets a new epoch in the same transaction: under the old one,
        // a client resuming from an old position read on from a number of the new log, silently
        // missing changes. A new epoch makes such a position unknown, as the feed documents.
        const epoch = newEpoch();
        await this.port.batch([
          FEED_SCHEMA,
          { sql: `INSERT OR REPLACE INTO ${FEED_TABLE} (db, epoch) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)`, params: [db, epoch, changesTable(db)] },
          { sql: `CREATE TABLE IF NOT EXISTS ${identifier(changesTable(db))} (seq INTEGER PRIMARY KEY AUTOINCREMENT, coll TEXT NOT NULL, op TEXT NOT NULL, before TEXT, after TEXT, at INTEGER NOT NULL)`, params: [] },
          { sql: `INSERT OR IGNORE INTO ${FEED_TABLE} (db, epoch) VALUES (?, ?)`, params: [db, epoch] },
        ]);
        const [row] = await this.port.all({ sql: `SELECT epoch FROM ${FEED_TABLE} WHERE db = ?`, params: [db] });
        return String(row!.epoch);
      })();
      epoch.catch(() => this.epochs.delete(db));
      this.epochs.set(db, epoch);
    }
    return epoch;
  }

  private async last(db: string): Promise<number> {
    const [row] = await this.port.all({ sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", params: [changesTable(db)] });
    return row ? Number(row.seq) : 0;
  }

  private async trim(db: string): Promise<void> {
    const table = identifier(changesTable(db));
    const { count } = this.retention;
    const since = retainedSince(this.retention);
    if (count !== null) await this.port.run({ sql: `DELETE FROM ${table} WHERE seq <= (SELECT max(seq) FROM ${table}) - ?`, params: [count] });
    if (since) await this.port.run({ sql: `DELETE FROM ${table} WHERE at < ?`, params: [since.getTime()] });
  }
}
