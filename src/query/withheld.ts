// Query parameters that name a field the caller may not read (docs/contracts.md §4): `where`
// (either syntax, at any depth, inside $or/$and/$nor/$not/$elemMatch, dotted), `sort`,
// `projection` and `embedded` are refused before anything is read, with the 400 that
// VALIDATE_FILTERS gives a field the schema does not know, so neither a count, an order nor
// the time an answer takes tells anything about the field's values.
import { HttpError } from "../errors.ts";
import { pathVisibility, type Mask } from "../auth/field-masks.ts";
import { isPlainObject } from "../util/objects.ts";

export type NamingParameter = "filter" | "sort" | "projection" | "embedding" | "aggregation parameter";

/** The refusal of a field a parameter may not name: `filter on 'salary' is invalid`. */
export function invalidField(parameter: NamingParameter, field: string): HttpError {
  return new HttpError(400, `${parameter} on '${field}' is invalid`);
}

/** Operators that test a value's shape, never what it holds. */
const SHAPE_ONLY = new Set(["$exists", "$type", "$size"]);

/**
 * Whether a `where` condition on `path` would tell something of a withheld field: it names one,
 * or compares a whole value (a dict, a list of dicts) that holds one.
 */
export function probesWithheld(mask: Mask, path: string, condition: unknown): boolean {
  const visibility = pathVisibility(mask, path);
  if (visibility === "hidden") return true;
  if (!isPlainObject(condition) || !Object.keys(condition).some((key) => key.startsWith("$"))) {
    // A value, or a document compared as a whole (`{"profile": {"city": "Rome"}}`).
    return visibility === "partly";
  }
  for (const [key, operand] of Object.entries(condition)) {
    if (key === "$not") {
      if (probesWithheld(mask, path, operand)) return true;
    } else if (key === "$elemMatch" && isPlainObject(operand)) {
      for (const [inner, value] of Object.entries(operand)) {
        // `{"lines": {"$elemMatch": {"cost": …}}}` names `lines.cost`; an operator tests the items whole.
        const probes = inner.startsWith("$") ? probesWithheld(mask, path, { [inner]: value }) : probesWithheld(mask, `${path}.${inner}`, value);
        if (probes) return true;
      }
    } else if (visibility === "partly" && !SHAPE_ONLY.has(key)) {
      return true;
    }
  }
  return false;
}
