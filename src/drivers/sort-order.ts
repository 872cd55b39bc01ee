// MongoDB's sort order, for cursor paging (FindQuery.after, docs/paging.md): every driver pages
// a keyset read in this one order, so a walk by cursor gives the same documents on each.
// MongoDB compares values by type first — MinKey < null (and a missing field) < numbers <
// strings < documents < arrays < binary < ObjectId < booleans < dates < timestamps < regular
// expressions < MaxKey — then within the type. A document sorts by the least value its field
// holds on an ascending key and by the greatest on a descending one (an array field holds its
// elements), and an empty array before null. mingo's own comparison orders some of these
// differently (a missing field before null, ObjectIds and Decimal128 last), which is why the
// order is written out here.
import type { Doc, Sort } from "./types.ts";
import { isPlainObject } from "../util/objects.ts";
import { objectIdWords } from "../util/objectid.ts";

/** The sort value of an empty array, which MongoDB places before null. */
export const EMPTY_ARRAY: unique symbol = Symbol("empty array");

/** Where each type sorts; minKey is 0 (RANK_TYPES). */
const RANK = { EMPTY: 1, NULL: 2, NUMBER: 3, STRING: 4, OBJECT: 5, ARRAY: 6, BINARY: 7, OBJECTID: 8, BOOLEAN: 9, DATE: 10, TIMESTAMP: 11, REGEX: 12, MAXKEY: 13 } as const;

const BSON_RANKS: Record<string, number> = {
  Decimal128: RANK.NUMBER,
  Long: RANK.NUMBER,
  Int32: RANK.NUMBER,
  Double: RANK.NUMBER,
  BSONSymbol: RANK.STRING,
  Binary: RANK.BINARY,
  ObjectId: RANK.OBJECTID,
  Timestamp: RANK.TIMESTAMP,
  BSONRegExp: RANK.REGEX,
  MinKey: 0,
  MaxKey: RANK.MAXKEY,
};

function bsonType(value: object): string | undefined {
  return (value as { _bsontype?: string })._bsontype;
}

/** Where a value's type sorts among MongoDB's types. */
export function typeRank(value: unknown): number {
  if (value === null || value === undefined) return RANK.NULL;
  switch (typeof value) {
    case "number":
    case "bigint":
      return RANK.NUMBER;
    case "string":
      return RANK.STRING;
    case "boolean":
      return RANK.BOOLEAN;
    case "symbol":
      return value === EMPTY_ARRAY ? RANK.EMPTY : RANK.OBJECT;
    case "object":
      break;
    default:
      return RANK.OBJECT;
  }
  if (Array.isArray(value)) return RANK.ARRAY;
  if (value instanceof Date) return RANK.DATE;
  if (value instanceof RegExp) return RANK.REGEX;
  if (value instanceof Uint8Array) return RANK.BINARY;
  const type = bsonType(value);
  return type !== undefined && Object.hasOwn(BSON_RANKS, type) ? BSON_RANKS[type]! : RANK.OBJECT;
}

/** MongoDB's names of the types of each rank, for `$type` (keyset-filter.ts). */
export const RANK_TYPES: Readonly<Record<number, readonly string[]>> = {
  0: ["minKey"],
  [RANK.NULL]: ["null"],
  [RANK.NUMBER]: ["number"],
  [RANK.STRING]: ["string", "symbol"],
  [RANK.OBJECT]: ["object"],
  [RANK.ARRAY]: ["array"],
  [RANK.BINARY]: ["binData"],
  [RANK.OBJECTID]: ["objectId"],
  [RANK.BOOLEAN]: ["bool"],
  [RANK.DATE]: ["date"],
  [RANK.TIMESTAMP]: ["timestamp"],
  [RANK.REGEX]: ["regex"],
  [RANK.MAXKEY]: ["maxKey"],
};

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

function numberOf(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  // Decimal128 and Long: their decimal text read as a double, as close as a comparison needs.
  return Number(String(value));
}

function compareNumbers(a: unknown, b: unknown): number {
  const x = numberOf(a);
  const y = numberOf(b);
  // MongoDB sorts NaN before every other number.
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1;
  if (Number.isNaN(y)) return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Code point order (UTF-8 byte order, MongoDB's and SQLite's), where JavaScript's `<` compares UTF-16 units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every unit of U+E000–U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) return surrogateWeight(x) - surrogateWeight(y);
    return x - y;
  }
  return a.length - b.length;
}

const surrogateWeight = (unit: number): number => (unit >= 0xe000 ? unit - 0x800 : unit + 0x2000);

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function bytesOf(value: object): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const binary = value as { buffer?: Uint8Array; sub_type?: number };
  return binary.buffer instanceof Uint8Array ? binary.buffer : new Uint8Array();
}

type ObjectIdLike = { toHexString(): string };

/** Byte order; from bson's four numbers where it keeps them, the hot path of a sort index on `_id`. */
function compareObjectIds(a: ObjectIdLike, b: ObjectIdLike): number {
  const x = objectIdWords(a);
  const y = objectIdWords(b);
  if (!x || !y) return sign(compareStrings(a.toHexString(), b.toHexString()));
  return sign(x.i0 - y.i0 || x.i1 - y.i1 || x.i2 - y.i2 || x.i3 - y.i3);
}

/** Two documents field by field: the value's type, the name, the value; fewer fields first. */
function compareObjects(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const length = Math.min(ka.length, kb.length);
  for (let i = 0; i < length; i++) {
    const va = a[ka[i]!];
    const vb = b[kb[i]!];
    const order = typeRank(va) - typeRank(vb) || compareStrings(ka[i]!, kb[i]!) || compareValues(va, vb);
    if (order !== 0) return sign(order);
  }
  return sign(ka.length - kb.length);
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareValues(a[i], b[i]);
    if (order !== 0) return order;
  }
  return sign(a.length - b.length);
}

/** MongoDB's comparison of two whole values (arrays compared element by element): -1, 0 or 1. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case RANK.NUMBER:
      return compareNumbers(a, b);
    case RANK.STRING:
      return sign(compareStrings(String(a), String(b)));
    case RANK.BOOLEAN:
      return a === b ? 0 : a ? 1 : -1;
    case RANK.DATE: {
      const x = (a as Date).getTime();
      const y = (b as Date).getTime();
      if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1;
      return Number.isNaN(y) ? 1 : sign(x - y);
    }
    case RANK.OBJECTID:
      return compareObjectIds(a as ObjectIdLike, b as ObjectIdLike);
    case RANK.ARRAY:
      return compareArrays(a as unknown[], b as unknown[]);
    case RANK.BINARY:
      return sign(compareBytes(bytesOf(a as object), bytesOf(b as object)));
    case RANK.REGEX: {
      const x = a as { source: string; flags?: string; pattern?: string; options?: string };
      const y = b as { source: string; flags?: string; pattern?: string; options?: string };
      return sign(compareStrings(x.source ?? x.pattern, y.source ?? y.pattern) || compareStrings(x.flags ?? x.options ?? "", y.flags ?? y.options ?? ""));
    }
    case RANK.TIMESTAMP:
      return compareNumbers(a, b);
    case RANK.OBJECT:
      if (isPlainObject(a) && isPlainObject(b)) return compareObjects(a, b);
      return sign(compareStrings(JSON.stringify(a) ?? "", JSON.stringify(b) ?? ""));
    default:
      return 0;
  }
}

/** Whether a path segment indexes an array. */
const isIndex = (segment: string): boolean => /^\d+$/.test(segment);

/** The values a path reaches, MongoDB's way: a name fans out over array elements; a missing value is null. */
function collect(value: unknown, segments: readonly string[], depth: number, out: unknown[]): void {
  if (depth === segments.length) {
    if (!Array.isArray(value)) out.push(value === undefined ? null : value);
    else if (value.length === 0) out.push(EMPTY_ARRAY);
    else for (const element of value) out.push(element === undefined ? null : element);
    return;
  }
  const segment = segments[depth]!;
  if (Array.isArray(value)) {
    if (isIndex(segment)) collect(value[Number(segment)], segments, depth + 1, out);
    else if (value.length === 0) out.push(null);
    else for (const element of value) collect(element, segments, depth, out);
  } else if (isPlainObject(value) && Object.hasOwn(value, segment)) {
    collect(value[segment], segments, depth + 1, out);
  } else {
    out.push(null);
  }
}

/** What a document sorts by on one key: the least value its path holds ascending, the greatest descending. */
export function sortValue(doc: Doc, path: string, direction: 1 | -1): unknown {
  if (!path.includes(".")) {
    const value = doc[path];
    if (!Array.isArray(value)) return value === undefined ? null : value;
  }
  const values: unknown[] = [];
  collect(doc, path.split("."), 0, values);
  let best = values[0];
  for (let i = 1; i < values.length; i++) if (compareValues(values[i], best) * direction < 0) best = values[i];
  return best;
}

/** Whether a document's sort value on a path came from an array, so that it differs by direction. */
export function fromArray(doc: Doc, path: string): boolean {
  let value: unknown = doc;
  for (const segment of path.split(".")) {
    if (Array.isArray(value)) return true;
    if (!isPlainObject(value)) return false;
    value = value[segment];
  }
  return Array.isArray(value);
}

/** The document's sort values on every key of a sort. */
export function sortValues(doc: Doc, sort: Sort): unknown[] {
  return sort.map(([path, direction]) => sortValue(doc, path, direction));
}

/** Two lists of sort values in a sort's order: negative when `a` comes first. */
export function compareSortValues(sort: Sort, a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < sort.length; i++) {
    const order = compareValues(a[i], b[i]);
    if (order !== 0) return order * sort[i]![1];
  }
  return 0;
}

/**
 * The part of a document its place in a sort depends on: the value of each sorted path, in the
 * document's own shape (FindQuery.after), so any driver can read its sort values from it.
 */
export function sortFields(doc: Doc, sort: Sort): Doc {
  const out: Doc = {};
  for (const [path] of sort) copyPath(doc, out, path.split("."), 0);
  return out;
}

function copyPath(from: unknown, to: Record<string, unknown>, segments: readonly string[], depth: number): void {
  const segment = segments[depth]!;
  if (!isPlainObject(from) || !Object.hasOwn(from, segment)) return;
  const value = from[segment];
  const last = depth === segments.length - 1;
  if (last || value === null || typeof value !== "object" || value instanceof Date) {
    Object.defineProperty(to, segment, { value, enumerable: true, writable: true, configurable: true });
  } else if (Array.isArray(value)) {
    // Through an array, each element keeps what the rest of the path (and of the paths copied
    // before it) reaches in it.
    const copied = Array.isArray(to[segment]) ? (to[segment] as unknown[]) : null;
    to[segment] = value.map((element, i) => {
      if (!isPlainObject(element)) return element;
      const part = (isPlainObject(copied?.[i]) ? copied![i] : {}) as Record<string, unknown>;
      copyPath(element, part, segments, depth + 1);
      return part;
    });
  } else if (isPlainObject(value)) {
    const part = (isPlainObject(to[segment]) ? to[segment] : (to[segment] = {})) as Record<string, unknown>;
    copyPath(value, part, segments, depth + 1);
  } else {
    to[segment] = value;
  }
}

/**
 * The page of a keyset read made in JavaScript: the items after `after` in the sort's order,
 * past `skip`, at most `limit` of them (0 or Infinity: all).
 */
export function sortedPage<T>(items: Iterable<T>, docOf: (item: T) => Doc, sort: Sort, after: Doc | null, skip: number, limit: number): T[] {
  const position = after ? sortValues(after, sort) : null;
  const rows: Array<{ values: unknown[]; item: T }> = [];
  for (const item of items) {
    const values = sortValues(docOf(item), sort);
    if (!position || compareSortValues(sort, values, position) > 0) rows.push({ values, item });
  }
  rows.sort((a, b) => compareSortValues(sort, a.values, b.values));
  const start = Math.max(0, skip);
  return rows.slice(start, limit > 0 && limit !== Infinity ? start + limit : undefined).map((row) => row.item);
}

/**
 * Documents in a sort's order, MongoDB's, ties in the order given: what every sorted read of the
 * memory store, and the reads SQLite sorts in JavaScript, answer (mingo's sort took an array's
 * least element descending too, and placed a missing field, ObjectIds and emoji otherwise).
 */
export function sortDocuments(docs: Doc[], sort: Sort): Doc[] {
  const keyed = docs.map((doc) => ({ doc, values: sortValues(doc, sort) }));
  keyed.sort((a, b) => compareSortValues(sort, a.values, b.values));
  return keyed.map(({ doc }) => doc);
}
