// Value helpers of the memory store: deep copies at the store's boundary, hash keys that agree
// with mingo's equality, and the per-path values an index holds for a document.
import { ObjectId } from "bson";
import { compare as mingoCompare, typeOf } from "mingo/util";
import type { Doc } from "../types.ts";
import { isPlainObject } from "../../util/objects.ts";
import { objectIdWords } from "../../util/objectid.ts";


/** Whether a filter, update or pipeline uses one of `operators`: a key of that name at any depth. */
export function namesOperator(value: unknown, operators: ReadonlySet<string>): boolean {
  if (Array.isArray(value)) return value.some((element) => namesOperator(element, operators));
  if (value === null || typeof value !== "object" || !isPlainObject(value)) return false;
  // Keys, not entries: this runs on every filter and update, and entries allocate a pair per key.
  for (const key of Object.keys(value)) if (operators.has(key) || namesOperator(value[key], operators)) return true;
  return false;
}

export function assign(target: Record<string, unknown>, key: string, value: unknown): void {
  // A plain assignment of "__proto__" would replace the copy's prototype instead of storing data.
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A deep copy that callers cannot use to reach the stored original. bson value types
 * (ObjectId, Decimal128, …) are immutable values and are shared; `undefined` becomes null, as
 * the mongodb driver serialises it, so a journal replay yields the same document.
 */
export function copyValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(copyValue);
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof RegExp) return new RegExp(value.source, value.flags);
  // new Uint8Array copies even a Node Buffer, whose slice() would share memory.
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) assign(out, key, copyValue(value[key]));
  return out;
}

/** A copy of a document's top level, sharing its values (the store never changes one in place). */
export function shallowCopy(doc: Doc): Doc {
  const out: Doc = {};
  for (const key of Object.keys(doc)) assign(out, key, doc[key]);
  return out;
}

/** A copy of a document with `_id` as its first field, each top-level value copied by `copyTop`. */
function copyDocumentWith(doc: Doc, copyTop: (value: unknown) => unknown): Doc {
  const out: Doc = {};
  if ("_id" in doc) out._id = copyValue(doc._id);
  for (const key of Object.keys(doc)) if (key !== "_id") assign(out, key, copyTop(doc[key]));
  return out;
}

/** A copy of a document with `_id` as its first field. */
export function copyDocument(doc: Doc): Doc {
  return copyDocumentWith(doc, copyValue);
}

/**
 * Shares equal Dates between stored documents. A Date takes about 96 bytes, more than any other
 * value of a typical document, and Eve stamps `_created` and `_updated` with the same second, as
 * it does every document written in that second. Sharing is safe because the store never
 * changes a stored value in place and hands out only copies (copyValue makes new Dates).
 */
export class DatePool {
  private readonly dates = new Map<number, Date>();
  /** What copy() does to each top-level value: a Date from the pool, anything else copied. */
  private readonly copyTop = (value: unknown): unknown => (value instanceof Date ? this.date(value, null) : copyValue(value));

  /** Replaces the document's top-level Dates, where Eve keeps its meta dates, by pooled equal ones. */
  share(doc: Doc): void {
    for (const key of Object.keys(doc)) {
      const value = doc[key];
      if (value instanceof Date) assign(doc, key, this.date(value, value));
    }
  }

  /**
   * copyDocument with the top-level Dates taken from the pool: an inserted document is copied
   * and shared in one pass, and a Date the pool holds is not made again (the two passes were 4%
   * of a bulk POST's CPU on Bun).
   */
  copy(doc: Doc): Doc {
    return copyDocumentWith(doc, this.copyTop);
  }

  /** The pooled Date for `value`'s time; `own` is pooled when there is none, or a copy when null. */
  private date(value: Date, own: Date | null): Date {
    const time = value.getTime();
    const held = this.dates.get(time);
    if (held) return held;
    // Bounded: recent times are the ones new documents repeat.
    if (this.dates.size >= 4096) this.dates.clear();
    const pooled = own ?? new Date(time);
    this.dates.set(time, pooled);
    return pooled;
  }
}

function hasOwnToString(value: object): boolean {
  return value.toString !== Object.prototype.toString;
}

/**
 * What every key that is not a string's starts with (an ObjectId's starts with NUL, below it).
 * A string whose first character is below "\u0002" is escaped behind it; any other string is
 * its own key, so the keys of distinct values never meet.
 */
const TAG = "\u0001";

/**
 * A string equal for two values exactly when mingo's equality holds for them, used as the key
 * of hash indexes and of unique constraints. Objects compare regardless of key order, as mingo's
 * do; class instances (ObjectId, Decimal128, …) by class and string form. A string, the most
 * common value indexed, is its own key: a prefixed copy was a new string to build and hash on
 * every probe (a lookup and an insert each made one per indexed field).
 */
export function valueKey(value: unknown): string {
  if (value === null || value === undefined) return TAG + "null";
  switch (typeof value) {
    case "string":
      return value.charCodeAt(0) > 1 ? value : `${TAG}s:${value}`;
    case "number":
      return `${TAG}n:${value === 0 ? 0 : value}`;
    case "boolean":
      return value ? TAG + "true" : TAG + "false";
    case "bigint":
      return `${TAG}i:${value}`;
    case "object":
      break;
    default:
      return `${TAG}${typeof value}:${String(value)}`;
  }
  if (Array.isArray(value)) return `${TAG}a:${JSON.stringify(value.map(valueKey))}`;
  if (value instanceof ObjectId) return objectIdKey(value);
  if (value instanceof Date) return `${TAG}d:${value.getTime()}`;
  if (value instanceof RegExp) return `${TAG}r:${value.source}/${value.flags}`;
  const object = value as Record<string, unknown>;
  if (isPlainObject(object)) return `${TAG}o:${objectKey(object)}`;
  const kind = (value as object).constructor?.name ?? "object";
  return `${TAG}${kind}:${hasOwnToString(value as object) ? String(value) : objectKey(object)}`;
}

/**
 * The key of an ObjectId, the store's most common key (one per document in the id map and
 * every index entry pointing at it): its 12 bytes as a 13-character one-byte string, led by a
 * NUL that no other key form starts with: one flat string, where the hex digits would be a
 * longer one, and toHexString()'s a rope that a Map keeps as it is.
 */
function objectIdKey(id: ObjectId): string {
  const w = objectIdWords(id);
  if (w) {
    const { i0, i1, i2, i3 } = w;
    return String.fromCharCode(0, i0 >>> 16, (i0 >>> 8) & 255, i0 & 255, i1 >>> 16, (i1 >>> 8) & 255, i1 & 255, i2 >>> 16, (i2 >>> 8) & 255, i2 & 255, i3 >>> 16, (i3 >>> 8) & 255, i3 & 255);
  }
  const b = id.id;
  return String.fromCharCode(0, b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!);
}

function objectKey(object: Record<string, unknown>): string {
  const entries = Object.keys(object)
    .sort()
    .map((key) => [key, valueKey(object[key])]);
  return JSON.stringify(entries);
}

/**
 * The values a document has at a dotted path, following mingo's path resolution (a name
 * segment fans out over array elements, a digit segment indexes an array). Missing values are
 * reported as undefined so that an index can answer `{field: null}`.
 */
export function valuesAtPath(doc: unknown, segments: readonly string[]): unknown[] {
  if (segments.length === 1 && doc !== null && typeof doc === "object" && !Array.isArray(doc)) {
    const field = segments[0]!;
    return [Object.prototype.hasOwnProperty.call(doc, field) ? (doc as Record<string, unknown>)[field] : undefined];
  }
  const out: unknown[] = [];
  collectAtPath(doc, segments, 0, out);
  return out;
}

function collectAtPath(value: unknown, segments: readonly string[], depth: number, out: unknown[]): void {
  if (depth === segments.length) {
    out.push(value);
    return;
  }
  const segment = segments[depth]!;
  if (Array.isArray(value)) {
    if (/^\d+$/.test(segment)) collectAtPath(value[Number(segment)], segments, depth + 1, out);
    else if (value.length === 0) out.push(undefined);
    else for (const element of value) collectAtPath(element, segments, depth, out);
  } else if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, segment)) {
    out.push(undefined);
  } else {
    collectAtPath((value as Record<string, unknown>)[segment], segments, depth + 1, out);
  }
}

/** Types whose values a range condition ($gt, $lte, …) can match in mingo, and which we keep sorted. */
const RANGE_TYPES = new Set(["number", "string", "boolean", "date", "objectid", "decimal128"]);

export function isRangeValue(value: unknown): boolean {
  return RANGE_TYPES.has(typeOf(value));
}

/** NaN and invalid dates, which mingo's comparison treats as equal to everything. */
export function isUnordered(value: unknown): boolean {
  return (typeof value === "number" && Number.isNaN(value)) || (value instanceof Date && Number.isNaN(value.getTime()));
}

/**
 * A total order over range values: by mingo type first (mingo only compares values of one
 * type, so each type is a contiguous run), then by mingo's own comparison.
 */
export function compareRangeValues(a: unknown, b: unknown): number {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return mingoCompare(a, b);
}

/** What one document contributes to an index on a path. */
export interface IndexEntries {
  /** Distinct valueKeys. */
  keys: string[];
  /** Orderable values, for the sorted part of the index. */
  ordered: unknown[];
  /** NaN-like values, which every range condition must consider. */
  unordered: boolean;
  /** Whether an array was met, which makes combined lower and upper bounds unsafe. */
  multikey: boolean;
}

function addEntry(entries: IndexEntries, seen: Set<string>, value: unknown): void {
  const key = valueKey(value);
  if (seen.has(key)) return;
  seen.add(key);
  entries.keys.push(key);
  if (Array.isArray(value)) {
    entries.multikey = true;
    for (const element of value) addEntry(entries, seen, element);
  } else if (isUnordered(value)) {
    entries.unordered = true;
  } else if (isRangeValue(value)) {
    entries.ordered.push(value);
  }
}

/**
 * Entries are a superset of what mingo can match: an array contributes itself and, recursively,
 * its elements, so equality, $in and range conditions on the path always find the document.
 */
export function indexEntries(doc: Doc, segments: readonly string[]): IndexEntries {
  // Most indexed fields are top-level strings or numbers: one key and one ordered value, without
  // the path walk, the Set and the type lookup (a tenth of a bulk insert's store CPU on Bun).
  if (segments.length === 1) {
    const value = doc[segments[0]!];
    if (typeof value === "string" || (typeof value === "number" && !Number.isNaN(value))) {
      return { keys: [valueKey(value)], ordered: [value], unordered: false, multikey: false };
    }
  }
  const entries: IndexEntries = { keys: [], ordered: [], unordered: false, multikey: false };
  const values = valuesAtPath(doc, segments);
  const seen = new Set<string>();
  for (const value of values) addEntry(entries, seen, value);
  return entries;
}
