// Rate-limit counts in the SQLite file (or D1 database) itself, so that every process sharing it
// shares them: one row per key and window, counted by an upsert that returns the new count in
// the same statement, which SQLite runs atomically under its write lock. The table is made on
// first use, so a file whose service counts in memory never gets it.
import { RATE_LIMIT_COLLECTION } from "../types.ts";
import type { Statement } from "./port.ts";

export const RATE_LIMIT_TABLE = RATE_LIMIT_COLLECTION;

export const RATE_LIMIT_SCHEMA: Statement = {
  sql: `CREATE TABLE IF NOT EXISTS ${RATE_LIMIT_TABLE} (key TEXT NOT NULL, window_end INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key, window_end)) WITHOUT ROWID`,
  params: [],
};

export function countHitStatement(key: string, windowEnd: number): Statement {
  return {
    sql: `INSERT INTO ${RATE_LIMIT_TABLE} (key, window_end, n) VALUES (?, ?, 1) ON CONFLICT (key, window_end) DO UPDATE SET n = n + 1 RETURNING n`,
    params: [key, windowEnd],
  };
}

/** Windows that have ended; any process may drop them. */
export function expiredStatement(now: number): Statement {
  return { sql: `DELETE FROM ${RATE_LIMIT_TABLE} WHERE window_end <= ?`, params: [now] };
}
