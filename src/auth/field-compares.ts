// Field rules on the update operators that read what is stored before they change it
// (docs/contracts.md §4). A module of its own: only the operator and write-by-filter methods,
// which load on first use (src/methods/opt-in-loader.ts), import it.
import type { Doc } from "../drivers/types.ts";
import { pathVisibility, type Mask } from "./field-masks.ts";
import { invalidField, probesWithheld } from "../query/withheld.ts";
import { isPlainObject } from "../util/objects.ts";

/** Operators whose result, or whether it is allowed, depends on the value stored at the path. */
const STORED_VALUE_OPERATORS = ["$inc", "$mul", "$min", "$max", "$push", "$addToSet", "$pull"];

/**
 * Operators whose effect turns on stored values: `$pull` removes the items its condition
 * matches, `$addToSet` adds an item only where no equal one is stored. On a list whose items
 * hold fields the caller may not read, what they did (seen in the list afterwards) would tell
 * those values, so they are refused as a `where` naming such a field is (src/query/withheld.ts).
 */
export function checkComparedPaths(mask: Mask | null, operators: Doc): void {
  if (!mask) return;
  // Their outcome turns on the stored value: refused under `min`/`max`/`maxlength` or a type the
  // stored value lacks, each answer would tell something of a value the caller may not read.
  for (const operator of STORED_VALUE_OPERATORS) {
    const fields = operators[operator];
    // $min and $max compare the whole stored value, and may replace it: a dict or list holding
    // a hidden field is as much a probe as the field itself.
    const whole = operator === "$min" || operator === "$max";
    for (const path of isPlainObject(fields) ? Object.keys(fields) : []) {
      const visibility = pathVisibility(mask, path);
      if (visibility === "hidden" || (whole && visibility === "partly")) throw invalidField("filter", path);
    }
  }
  for (const [path, operand] of Object.entries(isPlainObject(operators.$pull) ? operators.$pull : {})) {
    // As `{"list": {"$elemMatch": operand}}` would test it: fields of the items, or the items whole.
    const condition = isPlainObject(operand) ? operand : { $eq: operand };
    if (probesWithheld(mask, path, { $elemMatch: condition })) throw invalidField("filter", path);
  }
  for (const path of Object.keys(isPlainObject(operators.$addToSet) ? operators.$addToSet : {})) {
    if (pathVisibility(mask, path) !== "shown") throw invalidField("filter", path);
  }
}
