// Sorted reads in SQL: keyset reads (FindQuery.after) and page-number ones alike. Each sort key
// is one expression over the stored JSON whose SQLite order is MongoDB's (sort-order.ts): null
// and a missing value become -Infinity, below every number; numbers stay numbers, strings text
// (SQLite's BINARY order is code point order); the later types become BLOBs led by their rank's
// byte (documents 4, arrays 5, ObjectIds 7, booleans 8, dates 9), which SQLite sorts after all
// text. Documents and arrays sort by their JSON text there (MongoDB: field by field, and by an
// array's least or greatest element), which a page-number read leaves to JavaScript
// (sortApproximations). One expression per key lets an expression index over the sort's keys
// (keysetIndex: an orderOnly spec's, or a declared index's, indexes.ts) give the rows in order,
// so a page-number read walks it instead of sorting, and a keyset read makes the position a
// plain range on the first key (`key >= ?`), which SQLite seeks the index to, never an OFFSET.
// The position's own keys are computed here from the document as SQLite computes them from its
// JSON: the two must agree for a walk to neither repeat nor skip one.
import type { Doc, FindQuery, Sort } from "../types.ts";
import { sortedPage } from "../sort-order.ts";
import { decodeDocument, encodeValue } from "./codec.ts";
import type { Row, SqlValue, Statement } from "./port.ts";
import { jsonPath, sqlString, type Clause } from "./translate.ts";

export interface KeysetColumn {
  path: string;
  expression: string;
  order: "ASC" | "DESC";
}

/** What a null or missing value sorts as: below every number (a literal: D1 sends parameters as JSON, which has no -Infinity). */
const NULL_KEY = "-9e999";
/** Added to a date's milliseconds so that every date since 271821 BC has 17 digits, which then sort as text. */
const DATE_OFFSET = 10_000_000_000_000_000;

const blob = (rank: number, text: string) => `CAST(char(${rank}) || ${text} AS BLOB)`;

/** The sort expression of one field. */
function keyExpression(path: string): string {
  const at = (suffix: string) => sqlString(path + suffix);
  const value = `(doc ->> ${at("")})`;
  return (
    `CASE json_type(doc, ${at("")}) WHEN 'integer' THEN ${value} WHEN 'real' THEN ${value} WHEN 'text' THEN ${value}` +
    ` WHEN 'true' THEN ${blob(8, "'1'")} WHEN 'false' THEN ${blob(8, "'0'")} WHEN 'array' THEN ${blob(5, `(doc -> ${at("")})`)}` +
    ` WHEN 'object' THEN CASE WHEN json_type(doc, ${at('."$oid"')}) = 'text' THEN ${blob(7, `(doc ->> ${at('."$oid"')})`)}` +
    ` WHEN json_type(doc, ${at('."$date"')}) = 'integer' THEN ${blob(9, `printf('%017d', (doc ->> ${at('."$date"')}) + ${DATE_OFFSET})`)}` +
    ` WHEN json_type(doc, ${at('."$numberDecimal"')}) = 'text' THEN CAST(doc ->> ${at('."$numberDecimal"')} AS REAL)` +
    ` ELSE ${blob(4, `(doc -> ${at("")})`)} END ELSE ${NULL_KEY} END`
  );
}

/** The expressions of a sort's keys; null when a field name is not plain (the read is then sorted in JavaScript). */
export function keysetColumns(sort: Sort): KeysetColumn[] | null {
  const columns: KeysetColumn[] = [];
  for (const [path, direction] of sort) {
    const json = jsonPath(path);
    if (!json) return null;
    columns.push({ path, expression: keyExpression(json), order: direction === -1 ? "DESC" : "ASC" });
  }
  return columns;
}

export function keysetOrderBy(columns: KeysetColumn[]): string {
  return columns.map((c) => `${c.expression} ${c.order}`).join(", ");
}

/** The ORDER BY of a page-number read: the keys', natural order breaking ties; null when a field name is not plain. */
export function sortOrderBy(sort: Sort | undefined): string | null {
  const columns = keysetColumns(sort ?? []);
  return columns && [keysetOrderBy(columns), "rowid ASC"].filter(Boolean).join(", ");
}

/**
 * A condition true of a row whose keys order otherwise than MongoDB: an array on a key's path
 * (MongoDB sorts by its least or greatest element, and fans a dotted path out over a list of
 * documents), a plain document at its end (MongoDB compares field by field), or a Decimal128
 * below a double's range (its key ties with null's). A page-number read where one matches is
 * sorted in JavaScript (sort-order.ts); null when a field name is not plain.
 */
export function sortApproximations(sort: Sort): string | null {
  const terms: string[] = [];
  for (const [name] of sort) {
    const path = jsonPath(name);
    if (!path) return null;
    const segments = name.split(".");
    for (let end = 1; end <= segments.length; end++) terms.push(`json_type(doc, ${sqlString(jsonPath(segments.slice(0, end).join("."))!)}) = 'array'`);
    const at = (suffix: string) => sqlString(path + suffix);
    const typed = ['."$oid"', '."$date"', '."$numberDecimal"'].map((key) => `json_type(doc, ${at(key)}) IS NULL`);
    terms.push(`(json_type(doc, ${at("")}) = 'object' AND ${typed.join(" AND ")})`, `CAST(doc ->> ${at('."$numberDecimal"')} AS REAL) = ${NULL_KEY}`);
  }
  return terms.join(" OR ");
}

/** The index that serves a sort (names quoted): its columns are the ORDER BY's, so SQLite reads pages straight from it. */
export function keysetIndex(table: string, name: string, sort: Sort): Statement | null {
  const columns = keysetColumns(sort);
  if (!columns) return null;
  return { sql: `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (${keysetOrderBy(columns)})`, params: [] };
}

/** A position's key as SQL (a parameter, or the null literal), as keyExpression computes it from the stored JSON. */
function positionKey(value: unknown): { sql: string; param?: SqlValue } {
  const encoded = encodeValue(value);
  const tagged = (rank: number, text: string) => ({ sql: "CAST(? AS BLOB)", param: String.fromCharCode(rank) + text });
  if (encoded === null) return { sql: NULL_KEY };
  switch (typeof encoded) {
    case "number":
    case "string":
      return { sql: "?", param: encoded };
    case "boolean":
      return tagged(8, encoded ? "1" : "0");
  }
  if (Array.isArray(encoded)) return tagged(5, JSON.stringify(encoded));
  const object = encoded as Record<string, unknown>;
  if (typeof object.$oid === "string") return tagged(7, object.$oid);
  // BigInt: the sum passes 2^53, where a double would round it and SQLite's integers do not.
  if (typeof object.$date === "number") return tagged(9, String(BigInt(object.$date) + BigInt(DATE_OFFSET)).padStart(17, "0"));
  if (typeof object.$numberDecimal === "string") return { sql: "?", param: Number(object.$numberDecimal) };
  return tagged(4, JSON.stringify(encoded));
}

/** The value a JSON path reaches: plain objects only, as `doc ->> '$.a.b'` (no fan-out over arrays). */
function atPath(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const segment of path.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof Date) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/**
 * The rows after a position: on the first key with a different value the row comes later in
 * that key's direction, every earlier key equal. The leading bound repeats the first key's
 * part as a range SQLite can seek the index to.
 */
export function keysetAfter(columns: KeysetColumn[], after: Doc): { sql: string; params: SqlValue[] } {
  const keys = columns.map((column) => positionKey(atPath(after, column.path)));
  const params: SqlValue[] = [];
  const use = (key: { sql: string; param?: SqlValue }) => {
    if (key.param !== undefined) params.push(key.param);
    return key.sql;
  };
  const first = columns[0]!;
  const lead = `${first.expression} ${first.order === "ASC" ? ">=" : "<="} ${use(keys[0]!)}`;
  const branches: string[] = [];
  columns.forEach((column, i) => {
    const equal = columns.slice(0, i).map((earlier, j) => `${earlier.expression} = ${use(keys[j]!)}`);
    branches.push(`(${[...equal, `${column.expression} ${column.order === "ASC" ? ">" : "<"} ${use(keys[i]!)}`].join(" AND ")})`);
  });
  return { sql: `(${lead} AND (${branches.join(" OR ")}))`, params };
}

export interface KeysetSelect {
  /** The collection's table, quoted. */
  table: string;
  /** The filter's translation: exact, or a superset that `test` narrows. */
  where: Clause;
  test: (doc: Doc) => boolean;
  columns: KeysetColumn[];
  after: Doc | null;
  skip: number;
  /** 0: no limit. */
  limit: number;
}

/** Rows read at a time when JavaScript must narrow the filter's superset. */
const BATCH = 256;

/**
 * The page of a keyset read. An exact filter is all SQL, LIMIT and OFFSET included (OFFSET only
 * for `skip`, a page number on a cursor resource). A superset is read in batches in the same
 * order, each batch starting after the last row of the one before, until the page is full.
 */
export async function keysetPage(read: (statement: Statement) => Promise<Row[]>, select: KeysetSelect): Promise<Doc[]> {
  const { table, where, columns } = select;
  const order = keysetOrderBy(columns);
  const query = (after: Doc | null, limit: number, offset: number): Statement => {
    const position = after ? keysetAfter(columns, after) : null;
    const condition = position ? `${where.sql} AND ${position.sql}` : where.sql;
    return { sql: `SELECT doc FROM ${table} WHERE ${condition} ORDER BY ${order} LIMIT ? OFFSET ?`, params: [...where.params, ...(position?.params ?? []), limit, offset] };
  };
  if (where.exact) return (await read(query(select.after, select.limit > 0 ? select.limit : -1, select.skip))).map((row) => decodeDocument(String(row.doc)));
  const page: Doc[] = [];
  const wanted = select.limit > 0 ? select.limit : Infinity;
  let skipped = 0;
  let after = select.after;
  for (;;) {
    const rows = await read(query(after, BATCH, 0));
    for (const row of rows) {
      const doc = decodeDocument(String(row.doc));
      after = doc;
      if (!select.test(doc)) continue;
      if (skipped < select.skip) skipped++;
      else if (page.push(doc) >= wanted) return page;
    }
    if (rows.length < BATCH) return page;
  }
}

/**
 * A keyset read (`query.after` given): in SQL where every sort key has a plain name, else in
 * MongoDB's order in JavaScript over what `scan` reads.
 */
export async function keysetFind(query: FindQuery, where: Pick<KeysetSelect, "table" | "where" | "test">, read: (statement: Statement) => Promise<Row[]>, scan: () => Promise<Doc[]>): Promise<Doc[]> {
  const sort = query.sort!;
  const columns = keysetColumns(sort);
  const [after, skip, limit] = [query.after ?? null, Math.max(0, query.skip ?? 0), query.limit ?? 0];
  return columns ? keysetPage(read, { ...where, columns, after, skip, limit }) : sortedPage(await scan(), (doc) => doc, sort, after, skip, limit);
}
