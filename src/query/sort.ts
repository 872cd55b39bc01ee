// `?sort=`: a comma-separated list (`-lastname,firstname`) or a literal list of pairs
// (`[("lastname", -1)]`, `[["lastname", -1]]`), as Eve's `_convert_sort_request_to_dict` reads
// it with `ast.literal_eval`. Eve lets pymongo reject a bad literal (TypeError → 400; other
// shapes → 500); everest answers 400 for all of them, for a JSON object, and for single quotes in
// the JSON-style list (SPEC); the Python list of tuples takes either quote, as literal_eval does.
import type { Sort } from "../drivers/types.ts";
import { badRequest } from "../errors.ts";
import type { Resource } from "../settings/normalize.ts";
import { PYTHON_CONSTANTS } from "./python-constants.ts";
import { isRefusedKey } from "../util/objects.ts";
import { pathVisibility, type Mask } from "../auth/field-masks.ts";
import { invalidField } from "./withheld.ts";
import { refuseDeepPath } from "./common.ts";

/** Brackets never nest deeper than a list of pairs. */
const LITERAL_DEPTH = 2;

function checkField(field: unknown): string {
  if (typeof field !== "string" || field === "" || field.startsWith("$") || isRefusedKey(field)) {
    throw badRequest(`bad sort field ${JSON.stringify(field)}`);
  }
  return field;
}

function fromLiteral(value: unknown): Sort {
  if (!Array.isArray(value)) throw badRequest("sort must be a list of (field, direction) pairs");
  return value.map((pair) => {
    if (!Array.isArray(pair) || pair.length !== 2 || (pair[1] !== 1 && pair[1] !== -1)) {
      throw badRequest("sort pairs are (field, 1) or (field, -1)");
    }
    return [checkField(pair[0]), pair[1]];
  });
}

function fromCommaList(raw: string): Sort {
  return raw.split(",").map((part) => {
    const field = part.trim();
    return field.startsWith("-") ? [checkField(field.slice(1)), -1] : [checkField(field), 1];
  });
}

type LiteralParser = typeof import("./python-syntax.ts").parseLiteral;

/** Like `ast.literal_eval`: the literal, or `undefined` for text that is not one (a bare name). */
function literalOrUndefined(parseLiteral: LiteralParser, text: string): unknown {
  try {
    return parseLiteral(text, { singleQuotes: text.includes("(") }, LITERAL_DEPTH);
  } catch (error) {
    // Text that opens like a literal (or a JSON object) but is not one is malformed, not a list of names.
    if (/^[[("'{]/.test(text)) throw error;
    return undefined;
  }
}

/** Comma-separated names, `-` before any: never a literal, unless one name alone is a constant (`None`). */
const NAME_LIST = /^-?[A-Za-z_][\w.]*(?:\s*,\s*-?[A-Za-z_][\w.]*)*$/;

/**
 * The client's sort, or null when there is none (sorting disabled for the resource, an empty
 * value, `None` or an empty list), in which case the datasource default_sort applies; a 400
 * for a field `hidden` withholds. The
 * common comma list is read at once; anything else may be a literal, whose parser is imported
 * on first use, keeping it out of what a Worker loads at start (test/runtimes/workers-bundle.test.ts).
 */
export function parseSort(raw: string, resource: Resource, maxDepth: number, hidden: Mask | null = null): Sort | null | Promise<Sort | null> {
  const text = raw.trim();
  if (!resource.sorting || !text) return null;
  if (NAME_LIST.test(text) && !Object.hasOwn(PYTHON_CONSTANTS, text)) return nonEmpty(fromCommaList(text), maxDepth, hidden);
  return import("./python-syntax.ts").then(({ parseLiteral }) => {
    const literal = literalOrUndefined(parseLiteral, text);
    if (literal === null) return null;
    return nonEmpty(literal === undefined ? fromCommaList(text) : fromLiteral(literal), maxDepth, hidden);
  });
}

/** MongoDB's limit on a sort's keys, held on every store (SQLite failed past about 2,000 with a 500). */
const MOST_KEYS = 32;

/** A sort on a field the caller may not read (or on a dict holding one) would order by its values. */
function nonEmpty(sort: Sort, maxDepth: number, hidden: Mask | null): Sort | null {
  if (sort.length > MOST_KEYS) throw badRequest(`sort takes at most ${MOST_KEYS} fields`);
  for (const [field] of sort) refuseDeepPath(field, maxDepth, "sort");
  if (hidden) for (const [field] of sort) if (pathVisibility(hidden, field) !== "shown") throw invalidField("sort", field);
  return sort.length ? sort : null;
}
