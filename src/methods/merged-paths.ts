// How a PATCH's plain fields reach the store when sub-documents merge (MERGE_NESTED_DOCUMENTS):
// as dotted `$set` paths, one per value the request sends, so the store merges them in its own
// step and writes back nothing the request left alone. PATCH of an item (patch.ts) and writes
// with operators or by filter (updates.ts) share it.
import type { Doc } from "../drivers/types.ts";
import { isPlainObject } from "../util/objects.ts";

/**
 * Sets `value` at `path` in `$set`: where `merge` (the resource's MERGE_NESTED_DOCUMENTS), a
 * sub-document field by field into the stored one. Where the stored value is not a sub-document
 * the value replaces it, as Eve's merge does; `blind` (a write by filter, with no one stored
 * document to look at) always goes field by field.
 */
export function setMerged($set: Doc, path: string, value: unknown, stored: unknown, merge: boolean, blind: boolean): void {
  if (!merge || !isPlainObject(value) || !(blind || isPlainObject(stored))) {
    $set[path] = value;
    return;
  }
  for (const field of Object.keys(value)) setMerged($set, `${path}.${field}`, value[field], isPlainObject(stored) ? stored[field] : undefined, true, blind);
}
