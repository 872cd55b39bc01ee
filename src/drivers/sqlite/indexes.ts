// The indexes the settings imply, as SQLite expression indexes over the stored JSON, and the
// DuplicateKeyError a broken UNIQUE index becomes. A declared index makes two SQLite indexes on
// its first field, on the value (`doc ->> path`) and on its JSON type, the two expressions the
// translated filters test (translate.ts), so that equality, $in and ranges, and their array
// branch, can be answered from indexes. A unique index adds a UNIQUE index over the JSON text of
// every field, where a missing field counts as null unless the index is sparse, as in MongoDB.
// An index whose keys all sort 1 or -1 also makes one index over its keys' sort expressions
// (keyset.ts), which a read sorted on a prefix of its keys (or their reverse) walks instead of
// sorting, as MongoDB serves a sort from an index; an orderOnly spec makes that one alone.
// SQLite index names are `<table>/<index name>` plus a suffix, recorded in the driver's
// `_everest_indexes` table with the spec, so a changed definition replaces the old one.
import { InvalidQueryError, type Doc, type NormalizedIndexSpec, type Sort } from "../types.ts";
import { keysetIndex } from "./keyset.ts";
import { normalizeSpec } from "../memory/indexes.ts";
import { valuesAtPath } from "../memory/values.ts";
import { idKey } from "./codec.ts";
import type { SqlValue, Statement } from "./port.ts";
import { jsonPath, sqlString } from "./translate.ts";

export const INDEX_TABLE = "_everest_indexes";

/** A double-quoted SQL identifier. */
export function identifier(name: string): string {
  if (name.includes("\0")) throw new InvalidQueryError("a database or collection name cannot hold a NUL character");
  return `"${name.replaceAll('"', '""')}"`;
}

const LOOKUP_DIRECTIONS = new Set<unknown>([1, -1, "hashed"]);

/**
 * The set of SQLite indexes indexStatements makes of a spec, recorded with it: raised when it
 * makes more of the same spec (2: a lookup index's order index), so that a database made before
 * gets them, beside the ones it has, when the settings next declare the spec.
 */
const LAYOUT = 2;

/** A spec as `_everest_indexes` records it. */
export type RecordedSpec = NormalizedIndexSpec & { layout?: number };

/** What declaring `spec` changes, given what is recorded under its name: nothing, indexes to add, or all of them to replace. */
export function indexChange(recorded: RecordedSpec | undefined, spec: NormalizedIndexSpec): "none" | "add" | "replace" {
  if (!recorded) return "add";
  const { layout, ...before } = recorded;
  if (JSON.stringify(before) !== JSON.stringify(spec)) return "replace";
  return layout === LAYOUT ? "none" : "add";
}

function pathOf(field: string): string {
  const path = jsonPath(field);
  if (!path) throw new InvalidQueryError(`the sqlite driver indexes fields named with letters, digits, '_' and '-' only, not '${field}'`);
  return sqlString(path);
}

/** The expression a unique index keys a field by. */
function uniqueExpression(field: string, sparse: boolean): string {
  return sparse ? `(doc -> ${pathOf(field)})` : `ifnull(doc -> ${pathOf(field)}, 'null')`;
}

/** Statements that (re)create one index; the caller runs them with the others in one batch. */
export function indexStatements(table: string, spec: NormalizedIndexSpec, replaced: boolean): Statement[] {
  const base = `${table}/${spec.name}`;
  const names = [`${base}/value`, `${base}/type`, `${base}/unique`, `${base}/order`];
  const statements: Statement[] = replaced ? names.map((name) => ({ sql: `DROP INDEX IF EXISTS ${identifier(name)}`, params: [] })) : [];
  const [first, direction] = spec.keys[0] ?? [];
  const ordered = spec.keys.every(([, d]) => d === 1 || d === -1) ? keysetIndex(identifier(table), identifier(names[3]!), spec.keys as Sort) : null;
  if (ordered) statements.push(ordered);
  if (!(ordered && spec.orderOnly) && first !== undefined && LOOKUP_DIRECTIONS.has(direction)) {
    statements.push({ sql: `CREATE INDEX IF NOT EXISTS ${identifier(names[0]!)} ON ${identifier(table)} ((doc ->> ${pathOf(first)}))`, params: [] });
    statements.push({ sql: `CREATE INDEX IF NOT EXISTS ${identifier(names[1]!)} ON ${identifier(table)} (json_type(doc, ${pathOf(first)}))`, params: [] });
  }
  if (spec.unique) {
    const columns = spec.keys.map(([field]) => uniqueExpression(field, spec.sparse)).join(", ");
    statements.push({ sql: `CREATE UNIQUE INDEX IF NOT EXISTS ${identifier(names[2]!)} ON ${identifier(table)} (${columns})`, params: [] });
  }
  statements.push({ sql: `INSERT OR REPLACE INTO ${INDEX_TABLE} (tbl, name, spec) VALUES (?, ?, ?)`, params: [table, spec.name, JSON.stringify({ ...spec, layout: LAYOUT })] });
  return statements;
}

export { normalizeSpec };

/** What a document holds for each field of an index; missing reads as null, as in MongoDB's duplicate key report. */
export function keyValueOf(doc: Doc, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field, valuesAtPath(doc, field.split("."))[0] ?? null]));
}

export interface UniqueIndexInfo {
  fields: string[];
  sparse: boolean;
}

/** The index a "UNIQUE constraint failed" message names: `_id` (the table's key) or a declared unique index. */
export function failedIndex(message: string, table: string, specs: Map<string, NormalizedIndexSpec>): UniqueIndexInfo {
  const named = /index '([^']*)'/.exec(message)?.[1];
  if (named?.startsWith(`${table}/`) && named.endsWith("/unique")) {
    const spec = specs.get(named.slice(table.length + 1, -"/unique".length));
    if (spec) return { fields: spec.keys.map(([field]) => field), sparse: spec.sparse };
  }
  return { fields: ["_id"], sparse: false };
}

/** A query for a stored document with the same key as `doc` under `index` (`?` is the encoded doc). */
export function sameKeyQuery(table: string, index: UniqueIndexInfo): string {
  if (index.fields[0] === "_id" && index.fields.length === 1) return `SELECT 1 FROM ${identifier(table)} WHERE id = ? LIMIT 1`;
  const tests = index.fields.map((field) => `${uniqueExpression(field, index.sparse)} = ${uniqueExpression(field, index.sparse).replaceAll("doc ->", "json(?) ->")}`);
  return `SELECT 1 FROM ${identifier(table)} WHERE ${tests.join(" AND ")} LIMIT 1`;
}

export function sameKeyParams(index: UniqueIndexInfo, doc: Doc, encoded: string): SqlValue[] {
  return index.fields[0] === "_id" && index.fields.length === 1 ? [idKey(doc._id)] : index.fields.map(() => encoded);
}
