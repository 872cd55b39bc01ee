// Limits on any JSON a client sends (bodies, form fields, aggregation parameters).
import { HttpError } from "../errors.ts";
import { isRefusedKey } from "../util/objects.ts";

const NOT_UNICODE = "The JSON document holds an unpaired surrogate";

/** `{"a.b.c": 1}` is stored as three levels (src/validation/normalize.ts) and queried as such: counted as such. */
export const levelsOf = (key: string): number => (key.includes(".") ? key.split(".").length : 1);

/**
 * Refuses prototype keys, absurd nesting (a dotted key's parts count as levels), numbers too
 * large for a double and unpaired surrogates anywhere in a parsed JSON value (or a form's
 * fields). JSON.parse reads `1e400` as Infinity, which no JSON answer can hold again: stored,
 * every later read of the document (a page, the feed) would be invalid JSON.
 * It reads `"\ud800"` as a string no UTF-8 store can hold: MongoDB's driver and SQLite would
 * store U+FFFD in its place and answer 2xx, so the same request would keep different data on
 * each store; a body of invalid UTF-8 bytes is refused the same way (src/request/payload.ts).
 */
export function checkJsonShape(value: unknown, maxDepth: number, depth = 0): void {
  if (depth > maxDepth) throw new HttpError(400, `The JSON document is nested deeper than ${maxDepth} levels`);
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new HttpError(400, NOT_UNICODE);
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new HttpError(400, "The JSON document holds a number too large to represent");
  } else if (Array.isArray(value)) {
    for (const item of value) checkJsonShape(item, maxDepth, depth + 1);
  } else if (value && typeof value === "object") {
    for (const key of Object.keys(value)) {
      if (isRefusedKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
      if (!key.isWellFormed()) throw new HttpError(400, NOT_UNICODE);
      checkJsonShape((value as Record<string, unknown>)[key], maxDepth, depth + levelsOf(key));
    }
  }
}
