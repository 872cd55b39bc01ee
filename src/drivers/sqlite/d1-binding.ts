// What a D1 binding looks like, apart from the port that uses it (d1.ts): the Workers adapter
// checks its bindings for a D1 database at start-up, and a Worker without D1 then loads this
// alone, not the port and the SQL error handling behind it.
import type { Row } from "./port.ts";

interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement;
  all(): Promise<{ results?: Row[] }>;
  run(): Promise<{ meta?: { changes?: number } }>;
}

export interface D1Database {
  prepare(sql: string): D1PreparedStatement;
  batch(statements: D1PreparedStatement[]): Promise<Array<{ meta?: { changes?: number } }>>;
}

export function isD1Database(value: unknown): value is D1Database {
  return !!value && typeof (value as D1Database).prepare === "function" && typeof (value as D1Database).batch === "function";
}
