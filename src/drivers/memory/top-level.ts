// Updates of top-level fields that the memory store (and the sqlite driver, through the same
// code) applies without mingo: every write everest itself makes, and a counter's $inc or $mul.
import type { Doc } from "../types.ts";
import { valueKey } from "./values.ts";

/**
 * `$set`/`$unset` of top-level fields only (a PATCH of plain fields), and `$inc`/`$mul` of
 * top-level numbers (a counter's update operator PATCH), applied without mingo, whose updater
 * builds a fresh operator context per call; null for anything else, the document untouched.
 * A field counts as changed as mingo counts it: its value is not equal (valueKey) to the old
 * one. Every write of a document goes through here: it reads the modifier in place, with no
 * copies of its parts or lists of their keys.
 */
export function setTopLevel(doc: Doc, modifier: Record<string, unknown>): string[] | null {
  let $set: Doc = NONE;
  let $unset: Doc = NONE;
  let $inc: Doc = NONE;
  let $mul: Doc = NONE;
  for (const operator in modifier) {
    if (operator === "$set") $set = modifier.$set as Doc;
    else if (operator === "$unset") $unset = modifier.$unset as Doc;
    else if (operator === "$inc") $inc = modifier.$inc as Doc;
    else if (operator === "$mul") $mul = modifier.$mul as Doc;
    else return null;
  }
  // Dotted paths, operators, prototype keys, conflicts between operators and arithmetic on what
  // is not a number are mingo's to handle (or refuse).
  for (const field in $set) if (!plainField(field)) return null;
  for (const field in $unset) if (!plainField(field) || Object.hasOwn($set, field)) return null;
  if ($inc !== NONE || $mul !== NONE) {
    for (const arithmetic of [$inc, $mul]) {
      for (const field in arithmetic) {
        const stored = Object.hasOwn(doc, field) ? doc[field] : 0;
        const taken = Object.hasOwn($set, field) || Object.hasOwn($unset, field) || (arithmetic === $mul && Object.hasOwn($inc, field));
        if (!plainField(field) || taken || typeof stored !== "number" || typeof arithmetic[field] !== "number") return null;
      }
    }
  }
  const changed: string[] = [];
  for (const field in $set) {
    const value = $set[field];
    if (Object.hasOwn(doc, field) && sameValue(doc[field], value)) continue;
    doc[field] = value;
    changed.push(field);
  }
  for (const field in $unset) {
    if (!Object.hasOwn(doc, field)) continue;
    delete doc[field];
    changed.push(field);
  }
  // As MongoDB: a missing field becomes the increment, or 0 for a multiplication.
  for (const field in $inc) changed.push(...arithmeticSet(doc, field, ((doc[field] as number | undefined) ?? 0) + ($inc[field] as number)));
  for (const field in $mul) changed.push(...arithmeticSet(doc, field, ((doc[field] as number | undefined) ?? 0) * ($mul[field] as number)));
  return changed;
}

const NONE: Doc = Object.freeze({});

function arithmeticSet(doc: Doc, field: string, value: number): string[] {
  if (Object.hasOwn(doc, field) && sameValue(doc[field], value)) return [];
  doc[field] = value;
  return [field];
}

const plainField = (field: string) => !field.includes(".") && !field.startsWith("$") && field !== "__proto__";

/** valueKey equality, without making the keys of two strings, numbers or dates. */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (typeof a === "number" && typeof b === "number") return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if (a instanceof Date && b instanceof Date) return Object.is(a.getTime(), b.getTime());
  return valueKey(a) === valueKey(b);
}
