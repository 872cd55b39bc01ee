// Python's json.dumps, which produces every body Eve sends and every ETag it hashes: ", " and
// ": " separators, non-ASCII escaped (ensure_ascii), `indent` for pretty output. Matching it keeps
// Content-Length and ETags identical to Eve's for the same document.

/** What json.dumps writes between the items of a list and the members of a dict, unless indenting. */
export const ITEM_SEPARATOR = ", ";

/** Printable ASCII except the quote and the backslash: written as is by json.dumps and JSON.stringify alike. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function pyString(text: string): string {
  // Most strings of a body (keys, ids, dates, links) need no escaping: skip the two passes.
  if (VERBATIM.test(text)) return `"${text}"`;
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/**
 * A key as json.dumps writes it before its value (`"key": `), per distinct key. Bodies and ETag
 * sources repeat the same few keys on every request: each was a quoted string and a
 * concatenation per occurrence, a third of the bytes a POST allocated in this walk.
 */
let keyPrefixes: Record<string, string> = Object.create(null);
let cachedKeys = 0;

/** Keys longer than this are written anew each time: a client's document may hold keys of any length. */
const CACHED_KEY_LENGTH = 64;

function keyPrefix(key: string): string {
  // A dictionary object, not a Map: keys come from Object.keys, and a property lookup with such
  // a key is faster than Map.get on Bun (a Map cost 12% of a page's rendering there).
  let prefix = keyPrefixes[key];
  if (prefix === undefined) {
    prefix = pyString(key) + ": ";
    if (key.length > CACHED_KEY_LENGTH) return prefix;
    // Bounded in count and size, as keys may come from clients: dropped wholesale when full.
    if (cachedKeys++ >= 4096) {
      keyPrefixes = Object.create(null);
      cachedKeys = 1;
    }
    keyPrefixes[key] = prefix;
  }
  return prefix;
}

export function pyNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  // A whole number JavaScript holds exactly is written as Python writes an int (1.0 arrives as
  // 1: the two cannot be told apart); anything else is a float, written as repr() writes it
  // (1e-07, 1e-05, -0.0, 1e+20), which String() does not.
  return isPythonInt(value) ? String(value) : floatRepr(value);
}

/** A number written as Python writes an int: whole, held exactly, and not -0 (a float in Python). */
export const isPythonInt = (value: number): boolean => Number.isSafeInteger(value) && !Object.is(value, -0);

/** Python's repr() of a float (json.dumps writes floats so, and Eve's XML renderer too). */
export function floatRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  const [mantissa, exponentText] = n.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 16) {
    const text = Object.is(n, -0) ? "-0" : String(n);
    return /[.e]/.test(text) ? text : text + ".0";
  }
  return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

/** Text `replace` has already written as json.dumps would: copied into the output as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Sorts in place by UTF-16 code units, as Array.prototype.sort() and Python's sort_keys do. The
 * keys of one object are few: an insertion sort allocates nothing, where sort() copies the
 * array for its merge sort (4% of a POST's allocated bytes went there, for every ETag).
 */
function sortStrings(keys: string[]): void {
  if (keys.length > 32) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
}

/** A key list as Object.keys gave it, and the same keys sorted. */
interface KnownOrder {
  keys: string[];
  sorted: string[];
}

/**
 * Key lists seen, by their first key (a document and its response body both start with the id);
 * bounded, as the shapes of a deployment's documents are few.
 */
const orders = new Map<string, KnownOrder[]>();
const KEPT_FIRST_KEYS = 512;
const KEPT_PER_FIRST_KEY = 8;
const KEPT_LIST_LENGTH = 32;

function sameList(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * An object's own keys sorted as sort_keys sorts them. Documents of one resource list the same
 * keys in the same order, and property names are interned, so comparing the list with those
 * seen before with the same first key is a few pointer checks where sorting compared
 * characters (the sort was 2.5-4% of a PATCH handled on Bun: bench/README.md, ninth round).
 * The array returned may be shared: read it, never change it.
 */
export function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length < 2) return keys;
  // A long list is data more than shape (a dict of user keys): sorted, not kept.
  if (keys.length > KEPT_LIST_LENGTH) {
    sortStrings(keys);
    return keys;
  }
  const first = keys[0]!;
  let known = orders.get(first);
  if (known !== undefined) {
    for (let i = 0; i < known.length; i++) if (sameList(known[i]!.keys, keys)) return known[i]!.sorted;
  } else if (orders.size < KEPT_FIRST_KEYS) {
    orders.set(first, (known = []));
  }
  const sorted = keys.slice();
  sortStrings(sorted);
  if (known !== undefined) known[known.length < KEPT_PER_FIRST_KEY ? known.length : KEPT_PER_FIRST_KEY - 1] = { keys, sorted };
  return sorted;
}

function isPlainNode(node: object): boolean {
  const prototype = Object.getPrototypeOf(node);
  return prototype === Object.prototype || prototype === Array.prototype;
}

export interface DumpOptions {
  sortKeys?: boolean;
  indent?: number;
  /**
   * Applied to every object before it is written, plain objects and arrays excepted: what it
   * returns is written instead (a JsonText verbatim).
   */
  replace?: (node: object) => unknown;
}

/** Serialises plain JSON values (strings, numbers, booleans, null, arrays, objects). */
export function dumps(value: unknown, options: DumpOptions = {}): string {
  const { sortKeys = false, indent, replace } = options;
  const walk = (node: unknown, depth: number): string => {
    if (node === null || node === undefined) return "null";
    // Most objects of a body are plain ones and arrays, which no leaf conversion applies to: one
    // prototype read instead of the replacer's run of instanceof checks for each.
    if (replace && typeof node === "object" && !isPlainNode(node)) {
      const replaced = replace(node);
      if (replaced instanceof JsonText) return replaced.text;
      if (replaced !== node) return walk(replaced, depth);
    }
    switch (typeof node) {
      case "string":
        return pyString(node);
      case "number":
        return pyNumber(node);
      case "boolean":
        return node ? "true" : "false";
      case "bigint":
        return node.toString();
    }
    const pad = indent === undefined ? "" : "\n" + " ".repeat(indent * (depth + 1));
    const close = indent === undefined ? "" : "\n" + " ".repeat(indent * depth);
    const sep = (indent === undefined ? ITEM_SEPARATOR : ",") + pad;
    // Plain loops and concatenation: bodies are serialised on every response.
    let out = "";
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      for (let i = 0; i < node.length; i++) out += (i === 0 ? "" : sep) + walk(node[i], depth + 1);
      return "[" + pad + out + close + "]";
    }
    const object = node as Record<string, unknown>;
    const keys = sortKeys ? sortedKeys(object) : Object.keys(object);
    let first = true;
    for (const key of keys) {
      const v = object[key];
      if (v === undefined) continue;
      if (!first) out += sep;
      out += keyPrefix(key) + walk(v, depth + 1);
      first = false;
    }
    return first ? "{}" : "{" + pad + out + close + "}";
  };
  return walk(value, 0);
}
