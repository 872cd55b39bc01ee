// A port over a synchronous SQLite binding (node:sqlite and bun:sqlite share this shape).
// Opening sets what makes an acknowledged write durable: WAL, so a crash cannot tear the file,
// and synchronous=FULL, so each commit is on disk (WAL and its checkpoint fsynced) before the
// write is answered. A write waits for another process's lock for a while before it is reported
// as the database being unavailable, without blocking the process meanwhile (`patiently`, and write-turns.ts for writes).
import { isBusy, sqlError, type Row, type SqlPort, type SqlTransaction, type SqlValue, type Statement } from "./port.ts";
import { Waiting, WriteTurns } from "./write-turns.ts";

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

/**
 * How long a statement waits for another process's lock, and the pauses between its tries:
 * SQLite's own busy handler's (sqliteDefaultBusyCallback), taken with timers. busy_timeout made
 * SQLite sleep inside the call, and node:sqlite and bun:sqlite are synchronous: the whole process
 * stopped for each waiting request in turn (a health check behind four of them answered after 19 s).
 */
const LOCK_PATIENCE_MS = 5000;
const LOCK_PAUSES_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

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
   * `attempt` until it is not refused as busy, or LOCK_PATIENCE_MS have passed. Each try runs
   * whole in one turn, so nothing else uses the connection in the middle of one.
   */
  const patiently = async <T>(attempt: () => T): Promise<T> => {
    const deadline = Date.now() + LOCK_PATIENCE_MS;
    for (let tries = 0; ; tries++) {
      try {
        return attempt();
      } catch (error) {
        if (!(error instanceof Waiting) || Date.now() >= deadline) throw error instanceof Waiting ? error.cause : error;
      }
      await new Promise((resume) => setTimeout(resume, LOCK_PAUSES_MS[Math.min(tries, LOCK_PAUSES_MS.length - 1)]));
    }
  };
  const busy = (error: unknown) => (isBusy(error, errorCode(error)) ? new Waiting(error) : error);
  /**
   * Every write takes the write lock first (BEGIN IMMEDIATE): a statement that reads and then
   * writes in an autocommit transaction fails at once, without waiting, when another process
   * committed in between (SQLITE_BUSY_SNAPSHOT in WAL mode). Only a refused BEGIN is tried again:
   * once the lock is held, whatever fails is the transaction's failure.
   */
  const transaction = <T>(work: () => T): T => {
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      throw busy(error);
    }
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
  // Opening may wait in SQLite (above); from here on a statement refused as busy waits in `patiently`.
  db.exec("PRAGMA busy_timeout = 0");
  const all = ({ sql, params }: Statement) => prepared(sql).all(...params) as Row[];
  // Inside a transaction only the statements' own failures are SQLite's to classify; whatever
  // else the work throws (a refused requirement, a bad update) is rethrown as it is.
  const tx: SqlTransaction = { all: (statement) => attempt(() => all(statement)), run: (statement) => attempt(() => run(statement)) };
  const classified = (error: unknown) => Promise.reject(sqlError(error, errorCode(error)));
  // Writes wait for another process's lock in turns (write-turns.ts); a read, which waits only
  // while a checkpoint or a new file's set-up holds the lock, on a timer of its own.
  const turns = new WriteTurns(LOCK_PATIENCE_MS);
  const written = <T>(work: () => T): Promise<T> => turns.run(() => transaction(work)).catch(classified);
  return {
    // A read has nothing to undo: tried again whenever it is refused as busy.
    all: (statement) =>
      patiently(() => {
        try {
          return all(statement);
        } catch (error) {
          throw busy(error);
        }
      }).catch(classified),
    run: (statement) => written(() => run(statement)),
    batch: (statements) => written(() => statements.map(run)),
    transaction: async (work) => {
      let thrown: { error: unknown } | null = null;
      try {
        return await turns.run(() =>
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
        throw thrown ? (thrown as { error: unknown }).error : sqlError(error, errorCode(error));
      }
    },
    close: async () => {
      cache.clear();
      db.close();
    },
  };
}
