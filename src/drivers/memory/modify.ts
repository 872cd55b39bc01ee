// What an update makes of a stored document, for the drivers that apply updates themselves
// (memory, and sqlite through the same mingo set-up): the update applied to a copy, the
// stamp (the ETag) worked out from the result, a requirement tested on the document as it is.
// Each driver calls these inside its write's atomic step, so what they compute is what is stored.
import { InvalidQueryError, type Doc, type Filter, type Stamp, type Update } from "../types.ts";
import { compileFilter, updatedCopy, withMingo } from "./mingo.ts";
import { copyValue, valueKey } from "./values.ts";

/** `update` applied to a copy of `doc` (which is left as it was), with the stamp set. */
export function modifiedCopy(doc: Doc, update: Update, stamp: Stamp | undefined): Doc {
  const { next } = withMingo(() => updatedCopy(doc, copyValue(update) as Record<string, unknown>));
  // The same value when the update left _id alone (the shallow copy shares it): no keys to make.
  if (next._id !== doc._id && valueKey(next._id) !== valueKey(doc._id)) throw new InvalidQueryError("the _id of a document cannot change");
  if (stamp) next[stamp.field] = stamp.value(next);
  return next;
}

/** A write's requirement as a test; null when it has none. */
export function requirement(require: Filter | undefined): ((doc: Doc) => boolean) | null {
  return require && Object.keys(require).length > 0 ? compileFilter(require) : null;
}

/** The ids a write is limited to, as valueKeys; null when it is not. */
export function idKeys(ids: unknown[] | undefined): Set<string> | null {
  return ids ? new Set(ids.map(valueKey)) : null;
}
