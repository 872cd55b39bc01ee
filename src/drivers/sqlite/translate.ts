// MongoDB filters as SQL over the stored JSON (codec.ts), for what SQL can answer (sorts: keyset.ts).
// A translation is either exact (the rows SQL selects are the matches) or a superset, which the
// driver narrows with the filter itself in JavaScript (mingo); a condition SQL cannot express
// (a regular expression, geo, $expr, equality with a whole document or array, a field name
// outside the plain characters) becomes "any row". Values are always bound parameters. Field
// names appear in the SQL text only as JSON path literals made of plain characters
// ([A-Za-z0-9_-]), so that SQLite can match them with the expression indexes the driver
// creates; any other name is left to JavaScript.
import { ObjectId } from "bson";
import type { Filter } from "../types.ts";
import { encodedText, idKey } from "./codec.ts";
import type { SqlValue } from "./port.ts";

export interface Clause {
  sql: string;
  params: SqlValue[];
  /** False when the rows selected are a superset of the matches. */
  exact: boolean;
}

/** D1 binds at most 100 parameters a statement; a filter needing more is answered in JavaScript. */
const MAX_PARAMS = 90;
const SEGMENT = /^(?!\d+$)[\w-]+$/;
const ANY: Clause = { sql: "1", params: [], exact: false };
const NONE: Clause = { sql: "0", params: [], exact: true };

/** A single-quoted SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** `$."a"."b"` for a dotted field name, or null when a segment is not plain. */
export function jsonPath(field: string): string | null {
  const segments = field.split(".");
  if (!segments.every((segment) => SEGMENT.test(segment))) return null;
  return `$${segments.map((segment) => `."${segment}"`).join("")}`;
}

/** Where a condition looks: a path into the row's document, as a SQL expression. */
interface Subject {
  path: string;
  type: string;
  value: string;
}

function subjectAt(path: string): Subject {
  return { path, type: `json_type(doc, ${path})`, value: `(doc ->> ${path})` };
}

const literalSubject = (jsonPathText: string): Subject => subjectAt(sqlString(jsonPathText));

/** The subject a key below `subject` names (a typed value's `$oid`, a sub-document's field). */
function child(subject: Subject, segmentPath: string): Subject {
  const literal = /^'(.*)'$/s.exec(subject.path);
  return literal ? literalSubject(literal[1]!.replaceAll("''", "'") + segmentPath) : subjectAt(`(${subject.path} || ${sqlString(segmentPath)})`);
}

/** json_each aliases of the translation under way. */
let aliases = 0;

function clause(sql: string, params: SqlValue[] = [], exact = true): Clause {
  return { sql, params, exact };
}

function and(parts: Clause[]): Clause {
  if (parts.length === 0) return clause("1");
  if (parts.length === 1) return parts[0]!;
  return clause(`(${parts.map((p) => p.sql).join(" AND ")})`, parts.flatMap((p) => p.params), parts.every((p) => p.exact));
}

function or(parts: Clause[]): Clause {
  if (parts.some((p) => p === ANY)) return ANY;
  if (parts.length === 0) return NONE;
  if (parts.length === 1) return parts[0]!;
  return clause(`(${parts.map((p) => p.sql).join(" OR ")})`, parts.flatMap((p) => p.params), parts.every((p) => p.exact));
}

/** Negation needs the exact set; NULL (a missing value) counts as not matching inside. */
function not(part: Clause): Clause {
  if (!part.exact) return ANY;
  return clause(`NOT ifnull(${part.sql}, 0)`, part.params);
}

/** The subject itself is an array with an element for which `test` holds. */
function anyElement(subject: Subject, test: (element: Subject) => Clause | null): Clause | null {
  const alias = `e${++aliases}`;
  const inner = test({ path: `${alias}.fullkey`, type: `${alias}.type`, value: `${alias}.value` });
  if (!inner) return null;
  return clause(`(${subject.type} = 'array' AND EXISTS (SELECT 1 FROM json_each(doc, ${subject.path}) AS ${alias} WHERE ${inner.sql}))`, inner.params, inner.exact);
}

/** A value or any element of it (MongoDB's reading of a condition on an array field). */
function valueOrElement(subject: Subject, test: (s: Subject) => Clause | null): Clause | null {
  const own = test(subject);
  const element = own && anyElement(subject, test);
  return own && element ? or([own, element]) : null;
}

type Kind = "text" | "number" | "true" | "false" | "typed" | "null";

function kindOf(value: unknown): Kind | null {
  if (value === null) return "null";
  if (typeof value === "string") return "text";
  if (typeof value === "number") return Number.isFinite(value) ? "number" : null;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value instanceof ObjectId || (value instanceof Date && !Number.isNaN(value.getTime()))) return "typed";
  return null;
}

function typeTest(subject: Subject, kind: Kind): string {
  switch (kind) {
    case "number":
      return `${subject.type} IN ('integer', 'real')`;
    case "typed":
      return `${subject.type} = 'object'`;
    case "null":
      return `(${subject.type} IS NULL OR ${subject.type} = 'null')`;
    default:
      return `${subject.type} = '${kind}'`;
  }
}

function sqlValue(value: unknown, kind: Kind): SqlValue {
  return kind === "typed" ? encodedText(value) : (value as SqlValue);
}

/** Equal to one of `values`, all of which must have a kind. */
function equalsOneOf(subject: Subject, values: unknown[]): Clause | null {
  const groups = new Map<Kind, unknown[]>();
  for (const value of values) {
    const kind = kindOf(value);
    if (!kind) return null;
    groups.set(kind, [...(groups.get(kind) ?? []), value]);
  }
  const parts: Clause[] = [];
  for (const [kind, group] of groups) {
    if (kind === "null" || kind === "true" || kind === "false") parts.push(clause(typeTest(subject, kind)));
    else if (group.length === 1) parts.push(clause(`(${typeTest(subject, kind)} AND ${subject.value} = ?)`, [sqlValue(group[0], kind)]));
    else parts.push(clause(`(${typeTest(subject, kind)} AND ${subject.value} IN (SELECT value FROM json_each(?)))`, [JSON.stringify(group.map((v) => sqlValue(v, kind)))]));
  }
  return or(parts);
}

const COMPARISONS: Record<string, string> = { $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" };

/** A range condition on values of the bound's own type, as MongoDB compares. */
function compares(subject: Subject, op: string, bound: unknown): Clause | null {
  const kind = kindOf(bound);
  if (kind === "number" || kind === "text") return clause(`(${typeTest(subject, kind)} AND ${subject.value} ${op} ?)`, [bound as SqlValue]);
  if (kind !== "typed") return null;
  const [key, value, type] = bound instanceof ObjectId ? ['."$oid"', bound.toHexString(), "text"] : ['."$date"', (bound as Date).getTime(), "integer"];
  const part = child(subject, key);
  return clause(`(${subject.type} = 'object' AND ${part.type} = '${type}' AND ${part.value} ${op} ?)`, [value]);
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof RegExp) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.keys(value).some((key) => key.startsWith("$"));
}

function operator(subject: Subject, op: string, operand: unknown): Clause | null {
  if (op in COMPARISONS) return valueOrElement(subject, (s) => compares(s, COMPARISONS[op]!, operand));
  switch (op) {
    case "$eq":
      return valueOrElement(subject, (s) => equalsOneOf(s, [operand]));
    case "$ne": {
      const equal = valueOrElement(subject, (s) => equalsOneOf(s, [operand]));
      return equal && not(equal);
    }
    case "$in":
    case "$nin": {
      if (!Array.isArray(operand)) return null;
      const within = operand.length === 0 ? NONE : valueOrElement(subject, (s) => equalsOneOf(s, operand));
      return within && (op === "$in" ? within : not(within));
    }
    case "$exists":
      return clause(`${subject.type} IS ${operand ? "NOT NULL" : "NULL"}`);
    case "$size":
      return typeof operand === "number" && Number.isInteger(operand) ? clause(`(${subject.type} = 'array' AND json_array_length(doc, ${subject.path}) = ?)`, [operand]) : null;
    case "$all": {
      if (!Array.isArray(operand)) return null;
      if (operand.length === 0) return NONE;
      const each = operand.map((value) => valueOrElement(subject, (s) => equalsOneOf(s, [value])));
      // mingo, whose answers the memory driver gives, matches arrays only: a superset here.
      return each.every((c) => c !== null) ? { ...and(each as Clause[]), exact: false } : null;
    }
    case "$elemMatch": {
      // The document form is mingo's to read (it also tries it on scalar elements).
      if (!isOperatorObject(operand)) return null;
      const inner = anyElement(subject, (element) => conditions(element, operand));
      // Elements are tested with the array reading again, wider than MongoDB's: a superset.
      return inner && { ...inner, exact: false };
    }
    case "$not": {
      if (!isOperatorObject(operand)) return null;
      const inner = conditions(subject, operand);
      return inner && not(inner);
    }
    default:
      return null;
  }
}

/** `{$gt: 1, $lt: 5}` on one subject: every operator must hold (each on any element of an array). */
function conditions(subject: Subject, operators: Record<string, unknown>): Clause | null {
  const parts: Clause[] = [];
  for (const [op, operand] of Object.entries(operators)) {
    const part = operator(subject, op, operand);
    if (!part) return null;
    parts.push(part);
  }
  return and(parts);
}

/** The condition on one field: a value to equal, or operators. */
function fieldCondition(subject: Subject, condition: unknown): Clause | null {
  if (isOperatorObject(condition)) return conditions(subject, condition);
  return valueOrElement(subject, (s) => equalsOneOf(s, [condition]));
}

/** Subjects of the arrays a dotted path could cross, where MongoDB fans out over elements. */
function intermediates(base: Subject, segments: string[]): Subject[] {
  const out: Subject[] = [];
  for (let i = 1; i < segments.length; i++) out.push(child(base, jsonPath(segments.slice(0, i).join("."))!.slice(1)));
  return out;
}

/** Where the driver has expression indexes on a collection's fields (indexes.ts), so a filter can use them. */
export interface IndexHint {
  /** The collection's table, quoted. */
  table: string;
  /** Fields whose value and JSON type are indexed. */
  indexed: ReadonlySet<string>;
}

/**
 * Rows a condition on an indexed field can match, found through the indexes: SQLite does not
 * use them for the OR of a value test and its array branch, so the two are looked up apart and
 * joined. A superset, ANDed with the exact condition; null when the condition has no index form.
 */
function candidates(hint: IndexHint, path: string, condition: unknown): Clause | null {
  const value = `(doc ->> ${path})`;
  const scalar = (v: unknown) => (kindOf(v) === null || v === null ? null : sqlValue(v, kindOf(v)!));
  let test: Clause | null = null;
  if (!isOperatorObject(condition)) {
    const v = scalar(condition);
    if (v !== null) test = clause(`${value} = ?`, [v]);
  } else if (Object.keys(condition).length === 1 && Array.isArray(condition.$in)) {
    const values = condition.$in.map(scalar);
    if (!values.includes(null)) test = clause(`${value} IN (SELECT value FROM json_each(?))`, [JSON.stringify(values)]);
  } else if (Object.keys(condition).every((op) => op in COMPARISONS) && Object.values(condition).every((v) => typeof v === "number" || typeof v === "string")) {
    test = and(Object.entries(condition).map(([op, v]) => clause(`${value} ${COMPARISONS[op]} ?`, [v as SqlValue])));
  }
  if (!test) return null;
  return clause(`rowid IN (SELECT rowid FROM ${hint.table} WHERE ${test.sql} UNION SELECT rowid FROM ${hint.table} WHERE json_type(doc, ${path}) = 'array')`, test.params);
}

function field(base: Subject, name: string, condition: unknown, hint?: IndexHint): Clause {
  const path = jsonPath(name);
  if (!path) return ANY;
  // `_id` is never an array, and its key is the primary key: equality and $in use it directly.
  if (base.path === "'$'" && name === "_id") {
    const ids = isOperatorObject(condition) ? (Object.keys(condition).length === 1 && Array.isArray(condition.$in) ? condition.$in : null) : [condition];
    if (ids && ids.every((id) => kindOf(id) !== null && id !== null)) {
      return ids.length === 1 ? clause("id = ?", [idKey(ids[0])]) : clause("id IN (SELECT value FROM json_each(?))", [JSON.stringify(ids.map(idKey))]);
    }
  }
  const translated = fieldCondition(child(base, path.slice(1)), condition);
  if (!translated) return ANY;
  const indexed = hint?.indexed.has(name) && base.path === "'$'" && !name.includes(".") ? candidates(hint, sqlString(path), condition) : null;
  // Wrapped so that SQLite plans with the candidates, not with an OR of the exact test's parts.
  if (indexed) return and([indexed, { ...translated, sql: `ifnull(${translated.sql}, 0)` }]);
  const crossings = intermediates(base, name.split("."));
  if (crossings.length === 0) return translated;
  // Through an array on the way the fan-out is JavaScript's to decide; those rows are kept.
  return or([translated, ...crossings.map((s) => clause(`${s.type} = 'array'`))].map((c) => ({ ...c, exact: false })));
}

function document(base: Subject, filter: Filter, hint?: IndexHint): Clause {
  const parts: Clause[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key === "$and" || key === "$or" || key === "$nor") {
      if (!Array.isArray(condition)) return ANY;
      const branches = condition.map((branch) => (branch && typeof branch === "object" ? document(base, branch as Filter) : ANY));
      parts.push(key === "$and" ? and(branches) : key === "$or" ? or(branches) : not(or(branches)));
    } else if (key === "$comment") {
      continue;
    } else if (key.startsWith("$")) {
      parts.push(ANY);
    } else {
      parts.push(field(base, key, condition, hint));
    }
  }
  return and(parts);
}

/** The WHERE clause for a filter over a table's `id` and `doc` columns. */
export function translateFilter(filter: Filter, hint?: IndexHint): Clause {
  // Aliases numbered afresh, so a filter of the same shape gives the same SQL (and prepared statement).
  aliases = 0;
  const where = document(literalSubject("$"), filter, hint);
  return where.params.length > MAX_PARAMS ? ANY : where;
}
