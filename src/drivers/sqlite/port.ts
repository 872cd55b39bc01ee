// What the sqlite driver needs from a connection, so one dialect runs over every runtime's
// SQLite: node:sqlite (Node ≥ 22.5, Deno), bun:sqlite and Cloudflare D1. Each port is a
// module of its own, imported only when a URI needs it (index.ts).
import { DatabaseUnavailableError, InvalidQueryError } from "../types.ts";

export type SqlValue = string | number | null | Uint8Array;
export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  params: SqlValue[];
}

export interface SqlPort {
  all(statement: Statement): Promise<Row[]>;
  /** Runs one statement; how many rows it changed. */
  run(statement: Statement): Promise<number>;
  /** Runs statements in order in one transaction: all of them or, when one fails, none. Changes per statement. */
  batch(statements: Statement[]): Promise<number[]>;
  /**
   * Runs `work` in one transaction that holds the write lock from its start, so what it reads
   * is still so when it writes, in this process and every other one on the file; a throw rolls
   * it all back and is rethrown. Only ports whose calls are synchronous have it (node:sqlite,
   * bun:sqlite): nothing else can run in between. D1 has no such transaction.
   */
  transaction?<T>(work: (tx: SqlTransaction) => T): Promise<T>;
  close(): Promise<void>;
}

/** The statements of a transaction (SqlPort.transaction), run at once. */
export interface SqlTransaction {
  all(statement: Statement): Row[];
  run(statement: Statement): number;
}

/** Why SQLite refused a statement, in the terms the driver acts on. */
export type SqlFailure = "unique" | "missing-table" | "unavailable" | "too-big" | "other";

/**
 * The primary result codes that say the database cannot serve now (busy, locked, out of memory,
 * read-only, I/O error, corrupt, full, cannot open, protocol), not that the statement was wrong.
 */
const UNAVAILABLE_CODES = new Set([5, 6, 7, 8, 10, 11, 13, 14, 15, 26]);
const UNAVAILABLE_NAMES = /\bSQLITE_(BUSY|LOCKED|NOMEM|READONLY|IOERR|CORRUPT|FULL|CANTOPEN|PROTOCOL|NOTADB)\b|database is locked|disk is full|database or disk is full|unable to open database/i;

/** SQLITE_BUSY: another connection holds the lock this one needs ("database is locked"). */
export function isBusy(error: unknown, code?: number): boolean {
  return code === undefined ? /database is locked/i.test(error instanceof Error ? error.message : String(error)) : (code & 0xff) === 5;
}

/** A failure from any port: the extended result code when the runtime reports one, else the message. */
export function classify(error: unknown, code?: number): SqlFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (/UNIQUE constraint failed/i.test(message)) return "unique";
  if (/no such table/i.test(message)) return "missing-table";
  if ((code !== undefined && UNAVAILABLE_CODES.has(code & 0xff)) || UNAVAILABLE_NAMES.test(message)) return "unavailable";
  // SQLITE_TOOBIG: a value past the store's limit (D1: 2 MB) or a statement past it (D1: 100 KB).
  if ((code !== undefined && (code & 0xff) === 18) || /SQLITE_TOOBIG|string or blob too big|statement too long/i.test(message)) return "too-big";
  return "other";
}

export function unavailable(error: unknown): DatabaseUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new DatabaseUnavailableError(`the SQLite database is unavailable: ${message}`, { cause: error });
}

/** Raised by ports for every failure, classified once. */
export class SqlError extends Error {
  constructor(
    readonly failure: SqlFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "SqlError";
  }
}

export function sqlError(error: unknown, code?: number): SqlError {
  if (error instanceof SqlError) return error;
  return new SqlError(classify(error, code), error instanceof Error ? error.message : String(error), { cause: error });
}

/** Port failures in the contract's terms; a missing table reads as an empty collection (null). */
export async function guarded<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof SqlError)) throw error;
    if (error.failure === "missing-table") return null;
    if (error.failure === "unavailable") throw unavailable(error);
    if (error.failure === "too-big") throw new InvalidQueryError(`the store refused a value or statement as too large: ${error.message}`, { cause: error, status: 413 });
    throw error;
  }
}

/**
 * SQLite refused a filter's translation (nested past its limits, a statement past D1's 100 KB
 * with long field names): the filter is then tested on a scan, so it never surfaces as an error.
 */
export function refusedTranslation(error: unknown): boolean {
  return error instanceof SqlError || (error instanceof InvalidQueryError && error.status === 413);
}
