// Each collection's document count, kept in `_everest_counts` by triggers on its table, so the
// total of an unfiltered collection page (and an `estimated` count, exact here) is one row
// read instead of a count(*) over every row (bench/README.md: 28 ms at a million documents).
// Triggers keep it right whoever writes: this process, another one sharing the file, or an
// older everest without this code.
import { identifier } from "./indexes.ts";
import type { Statement } from "./port.ts";

export const COUNT_TABLE = "_everest_counts";

export const COUNT_SCHEMA: Statement = { sql: `CREATE TABLE IF NOT EXISTS ${COUNT_TABLE} (tbl TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL)`, params: [] };

/** A SQL string literal (trigger bodies take no parameters). */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The triggers and the starting count of the collection table `name`, to run in the
 * transaction that creates the table: a count row exists only with its triggers, and no write
 * can fall between the count and the triggers.
 */
export function countStatements(name: string): Statement[] {
  const table = identifier(name);
  const row = `UPDATE ${COUNT_TABLE} SET n = n %s 1 WHERE tbl = ${literal(name)}`;
  return [
    { sql: `CREATE TRIGGER IF NOT EXISTS ${identifier(`${name}#inserted`)} AFTER INSERT ON ${table} BEGIN ${row.replace("%s", "+")}; END`, params: [] },
    { sql: `CREATE TRIGGER IF NOT EXISTS ${identifier(`${name}#deleted`)} AFTER DELETE ON ${table} BEGIN ${row.replace("%s", "-")}; END`, params: [] },
    { sql: `INSERT OR IGNORE INTO ${COUNT_TABLE} (tbl, n) SELECT ?, count(*) FROM ${table}`, params: [name] },
  ];
}

/** The kept count of a collection; no row (a table an older everest made and this one has not written) means count the rows. */
export const COUNT_QUERY = `SELECT n FROM ${COUNT_TABLE} WHERE tbl = ?`;
