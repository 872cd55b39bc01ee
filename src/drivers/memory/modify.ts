// What an update makes of a stored document, for the drivers that apply updates themselves
// (memory, and sqlite through the same mingo set-up): the update applied to a copy, the
// stamp (the ETag) worked out from the result, a requirement tested on the document as it is.
// Each driver calls these inside its write's atomic step, so what they compute is what is stored.
import { EJSON } from "bson";
import { InvalidQueryError, type Doc, type Filter, type Stamp, type Update } from "../types.ts";
import { compileFilter, updatedCopies, withMingo } from "./mingo.ts";
import { copyValue, valueKey } from "./values.ts";

/** `update` applied to a copy of each document (which are left as they were), each with the stamp set. */
export function modifiedCopies(docs: Doc[], update: Update, stamp: Stamp | undefined): Doc[] {
  const nexts = withMingo(() => updatedCopies(docs, copyValue(update) as Record<string, unknown>));
  nexts.forEach((next, i) => {
    const id = docs[i]!._id;
    // The same value when the update left _id alone (the shallow copy shares it): no keys to make.
    if (next._id !== id && valueKey(next._id) !== valueKey(id)) throw new InvalidQueryError("the _id of a document cannot change");
    if (stamp) next[stamp.field] = stamp.value(next);
  });
  return nexts;
}

/**
 * Requirements compiled, by their canonical Extended JSON (types kept: a date is not its text):
 * the requirements of one operator body are the same from request to request, and compiling
 * one through mingo copies its operator tables, the dearest part of a small update's check.
 */
const compiled = new Map<string, (doc: Doc) => boolean>();
const COMPILED_KEPT = 256;

/** A write's requirement as a test; null when it has none. */
export function requirement(require: Filter | undefined): ((doc: Doc) => boolean) | null {
  if (!require || Object.keys(require).length === 0) return null;
  const key = EJSON.stringify(require, { relaxed: false });
  let test = compiled.get(key);
  if (!test) {
    test = compileFilter(require);
    if (compiled.size >= COMPILED_KEPT) compiled.clear();
    compiled.set(key, test);
  }
  return test;
}

/** The ids a write is limited to, as valueKeys; null when it is not. */
export function idKeys(ids: unknown[] | undefined): Set<string> | null {
  return ids ? new Set(ids.map(valueKey)) : null;
}
