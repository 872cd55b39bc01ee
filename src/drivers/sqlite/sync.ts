// A port over a synchronous SQLite binding (node:sqlite and bun:sqlite share this shape).
// Opening sets what makes an acknowledged write durable: WAL, so a crash cannot tear the file,
// and synchronous=FULL, so each commit is on disk (WAL and its checkpoint fsynced) before the
// write is answered; busy_timeout lets a write wait for another process's lock for a while
// before it is reported as the database being unavailable.
import { isBusy, sqlError, type Row, type SqlPort, type SqlTransaction, type SqlValue, type Statement } from "./port.ts";

interface SyncStatement {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): { changes: number | bigint };
}

export interface SyncDatabase {
  prepare(sql: string): SyncStatement;
  exec(sql: string): unknown;
  close(): void;
}

/**
 * Opens a database file with `open`, naming the file in its error: SQLite's own ("unable to open
 * database file") names neither it nor the usual cause.
 */
export function openFile(path: string, open: () => SyncDatabase): SyncDatabase {
  try {
    return open();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open the SQLite database '${path}': ${reason} (does its directory exist, and may this process write there?)`, { cause: error });
  }
}

// busy_timeout first: switching a new file to WAL takes a lock, and a second process opening the
// file at that moment failed at once with "database is locked" instead of waiting for it.
export const OPEN_PRAGMAS = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"];

/**
 * Even so, two processes opening a new file at once still saw the switch to WAL refused as busy
 * without the busy handler being asked (about one start in ten of two instances over a fresh
 * file: the instance suite's rate-limit case): SQLite answers some WAL set-up locks at once. So
 * opening tries again for as long as busy_timeout would have waited.
 */
const OPEN_PATIENCE_MS = 5000;
const OPEN_RETRY_MS = 20;

/** Opening is synchronous, as the binding is: a pause that blocks, of a few ms, only while another process sets the file up. */
function pauseSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function applyOpenPragmas(db: SyncDatabase, errorCode: (error: unknown) => number | undefined): void {
  const deadline = Date.now() + OPEN_PATIENCE_MS;
  for (const pragma of OPEN_PRAGMAS) {
    for (;;) {
      try {
        db.exec(pragma);
        break;
      } catch (error) {
        if (!isBusy(error, errorCode(error)) || Date.now() >= deadline) throw error;
        pauseSync(OPEN_RETRY_MS);
      }
    }
  }
}

/** Prepared statements kept per connection; the driver's SQL comes from a small set of shapes. */
const CACHE_LIMIT = 500;

export function openSynchronous(db: SyncDatabase, errorCode: (error: unknown) => number | undefined): SqlPort {
  const cache = new Map<string, SyncStatement>();
  const prepared = (sql: string): SyncStatement => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(sql, statement);
    }
    return statement;
  };
  const attempt = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw sqlError(error, errorCode(error));
    }
  };
  const run = ({ sql, params }: Statement): number => Number(prepared(sql).run(...params).changes);
  /**
   * Every write takes the write lock first (BEGIN IMMEDIATE, which waits out busy_timeout): a
   * statement that reads and then writes in an autocommit transaction fails at once, without
   * waiting, when another process committed in between (SQLITE_BUSY_SNAPSHOT in WAL mode).
   */
  const transaction = <T>(work: () => T): T => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      // SQLite ends the transaction itself on some failures (SQLITE_FULL, IOERR, NOMEM), and
      // ROLLBACK then fails with "no transaction is active": the failure that counts is the first.
      try {
        db.exec("ROLLBACK");
      } catch {
        // Nothing left to roll back.
      }
      throw error;
    }
  };
  attempt(() => applyOpenPragmas(db, errorCode));
  const all = ({ sql, params }: Statement) => prepared(sql).all(...params) as Row[];
  // Inside a transaction only the statements' own failures are SQLite's to classify; whatever
  // else the work throws (a refused requirement, a bad update) is rethrown as it is.
  const tx: SqlTransaction = { all: (statement) => attempt(() => all(statement)), run: (statement) => attempt(() => run(statement)) };
  return {
    all: async (statement) => attempt(() => all(statement)),
    run: async (statement) => attempt(() => transaction(() => run(statement))),
    batch: async (statements) => attempt(() => transaction(() => statements.map(run))),
    transaction: async (work) => {
      let thrown: { error: unknown } | null = null;
      try {
        return attempt(() =>
          transaction(() => {
            try {
              return work(tx);
            } catch (error) {
              thrown = { error };
              throw error;
            }
          }),
        );
      } catch (error) {
        throw thrown ? (thrown as { error: unknown }).error : error;
      }
    },
    close: async () => {
      cache.clear();
      db.close();
    },
  };
}
