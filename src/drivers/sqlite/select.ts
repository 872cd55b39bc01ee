// How the sqlite driver finds the rows a filter matches: the SELECT translate.ts makes of it,
// and the matches among the rows it returns (all of them when the translation is exact, else
// those the filter itself passes in JavaScript). The same for a read through the port and for
// one inside a transaction (modify.ts).
import type { Doc, Filter, Sort } from "../types.ts";
import { decodeDocument } from "./codec.ts";
import { SqlError, type Row, type SqlValue, type Statement } from "./port.ts";
import { sortApproximations } from "./keyset.ts";
import { translateFilter, type Clause, type IndexHint } from "./translate.ts";

export interface Match {
  id: string;
  text: string;
  doc: Doc;
}

export type Test = (doc: Doc) => boolean;

export interface Page {
  order?: string;
  skip?: number;
  limit?: number;
}

export interface Selection {
  statement: Statement;
  /**
   * A plain scan for when SQLite refuses the translation (one nested too deeply, say), so that
   * it never surfaces as a 500; its matches are `scanned`'s.
   */
  scan: Statement;
  matches(rows: Row[], test: Test): Match[];
  scanned(rows: Row[], test: Test): Match[];
}

export function narrow(rows: Row[], test: Test, exact: boolean): Match[] {
  const matches: Match[] = [];
  for (const row of rows) {
    const text = String(row.doc);
    const doc = decodeDocument(text);
    if (exact || test(doc)) matches.push({ id: String(row.id), text, doc });
  }
  return matches;
}

/**
 * The rows of `table` matching `filter`, in natural order unless `order` is given. With an
 * exact translation SQL also pages; otherwise it selects a superset that the test narrows. A
 * sorted page is cut from rowids and its documents read after, so that a sort carries keys, not
 * documents, and along an order index (keyset.ts) the rows skipped are never read.
 */
export function selection(table: string, filter: Filter, hint: IndexHint, page: Page): Selection {
  const where = translateFilter(filter, hint);
  const paged = where.exact && (page.skip || page.limit);
  const tail = paged ? " LIMIT ? OFFSET ?" : "";
  const params: SqlValue[] = paged ? [...where.params, page.limit && page.limit > 0 ? page.limit : -1, Math.max(0, page.skip ?? 0)] : where.params;
  const skip = Math.max(0, page.skip ?? 0);
  const order = page.order ?? "rowid";
  const rows = `FROM ${table} WHERE ${where.sql} ORDER BY ${order}${tail}`;
  return {
    statement: { sql: paged && page.order && (page.limit ?? 0) > 0 ? `SELECT id, doc FROM ${table} WHERE rowid IN (SELECT rowid ${rows}) ORDER BY ${order}` : `SELECT id, doc ${rows}`, params },
    scan: { sql: `SELECT id, doc FROM ${table} ORDER BY rowid`, params: [] },
    matches(rows, test) {
      const matches = narrow(rows, test, where.exact);
      return paged || !page.limit ? matches : matches.slice(skip, skip + page.limit);
    },
    scanned: (rows, test) => narrow(rows, test, Object.keys(filter).length === 0),
  };
}

/**
 * Whether SQL sorts `where`'s rows as MongoDB does: no row among them holds what
 * keyset.ts's sortApproximations names. A read where one does is sorted in JavaScript
 * (sort-order.ts), as is one whose check SQLite refuses; one without pays a scan of its matches
 * for the check, beside the sort's own.
 */
export async function sortsInSql(read: (statement: Statement) => Promise<Row[]>, table: string, where: Clause, sort: Sort | undefined): Promise<boolean> {
  const condition = sort?.length ? sortApproximations(sort) : null;
  if (!condition) return true;
  try {
    return (await read({ sql: `SELECT 1 FROM ${table} WHERE ${where.sql} AND (${condition}) LIMIT 1`, params: where.params })).length === 0;
  } catch (error) {
    if (error instanceof SqlError) return false;
    throw error;
  }
}
