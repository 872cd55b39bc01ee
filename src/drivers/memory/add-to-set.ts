// `$addToSet` as MongoDB applies it: each value the list does not hold yet is appended once, and
// the items already stored stay as they are. mingo's updater makes a set of the whole list
// instead, so a list that held a duplicate lost it, and the write itself when nothing else was
// new ({"$addToSet": {"tags": "b"}} on ["a", "a"] answered 200 and left ["a"]).
import type { Doc } from "../types.ts";
import { isPlainObject } from "../../util/objects.ts";
import { copyValue, valueKey } from "./values.ts";

/** Applies `$addToSet`'s operand to `doc` in place; the paths it changed. */
export function addToSet(doc: Doc, operand: Doc): string[] {
  const changed: string[] = [];
  for (const path in operand) {
    const spec = operand[path];
    const parts = path.split(".");
    const field = parts.pop()!;
    // Missing sub-documents on the way are made, as MongoDB makes them (list indexes never reach
    // here: src/validation/operators.ts refuses them). A value that is no list, or in the way of
    // one, is left alone, as mingo leaves it (validation refuses such a write first).
    let holder: unknown = doc;
    for (const part of parts) holder = !isPlainObject(holder) ? null : holder[part] === undefined ? (holder[part] = {}) : holder[part];
    if (!isPlainObject(holder)) continue;
    const list = holder[field] ?? [];
    if (!Array.isArray(list)) continue;
    const seen = new Set(list.map(valueKey));
    const added = (isPlainObject(spec) && "$each" in spec ? (spec.$each as unknown[]) : [spec]).filter((value) => !seen.has(valueKey(value)) && seen.add(valueKey(value)));
    if (added.length === 0 && holder[field] !== undefined) continue;
    holder[field] = [...list, ...added.map(copyValue)];
    changed.push(path);
  }
  return changed;
}
