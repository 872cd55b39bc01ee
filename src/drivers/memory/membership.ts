// MongoDB's `$in` and `$nin` for the memory driver's mingo (mingo.ts installs them in its context).
import * as query from "mingo/operators/query";
import { ensureArray, HashMap, isNil, isRegExp, resolve } from "mingo/util";
import type { Doc } from "../types.ts";

/**
 * A test of membership in an `$in` list as mingo's `$in` makes it (null for a missing value, any
 * element of an array, a string against the list's regular expressions; with `wholeArrays` an
 * array itself too), with the list hashed once per filter: mingo hashed it again for every
 * document it tested, so a `where` of 1,000 ids took seconds over the 1,000 documents the id
 * index had already found.
 */
function memberOf(list: unknown[], wholeArrays: boolean): (value: unknown) => boolean {
  const hashed = HashMap.init();
  for (const value of list) hashed.set(value, true);
  const patterns = list.filter(isRegExp);
  const takesNull = list.some((value) => value === null);
  return (value) => {
    if (isNil(value)) return takesNull;
    if (wholeArrays && Array.isArray(value) && hashed.has(value)) return true;
    const values = ensureArray(value);
    if (values.some((v) => hashed.has(v))) return true;
    return patterns.length > 0 && values.some((v) => typeof v === "string" && patterns.some((re) => re.test(v)));
  };
}

export type QueryOperator = typeof query.$in;

/** `$in`, or with `negate` `$nin`; an operand that is no list is left to mingo, which reports it. */
export const membership =
  (negate: boolean): QueryOperator =>
  (selector, operand, options) => {
    if (!Array.isArray(operand)) return (negate ? query.$nin : query.$in)(selector, operand, options);
    // A field that is an array matches a list element equal to the whole array too, as in MongoDB
    // (mingo compared its elements only). A dotted path's values come flattened from resolve, so
    // there only the elements are compared, as mingo does.
    const has = memberOf(operand, !selector.includes("."));
    return (doc: Doc) => has(resolve(doc, selector, { unwrapArray: true })) !== negate;
  };
