// Picks the documents a filter can possibly match from the collection's indexes, so that the
// full mingo filter only runs on those. Any condition left unplanned is still checked by mingo,
// so a plan only needs to return a superset of the matches; null means "scan everything".
import { typeOf } from "mingo/util";
import type { Filter } from "../types.ts";
import type { Candidates, FieldIndex, RangeBound } from "./indexes.ts";
import { isRangeValue, valueKey } from "./values.ts";
import { isPlainObject } from "../../util/objects.ts";

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  return Object.keys(value).some((key) => key.startsWith("$"));
}

/** A condition that asks for one value (`{field: value}`), which an index answers by its key. */
export function isEquality(condition: unknown): boolean {
  return !(condition instanceof RegExp) && !isOperatorObject(condition);
}

function planField(index: FieldIndex, condition: unknown): Candidates | null {
  if (isEquality(condition)) return index.equal([valueKey(condition)]);
  // A RegExp: no index order answers it.
  if (!isOperatorObject(condition)) return null;
  if ("$eq" in condition) return index.equal([valueKey(condition.$eq)]);
  const list = condition.$in;
  if (Array.isArray(list) && !list.some((v) => v instanceof RegExp)) return index.equal(list.map(valueKey));
  return planRange(index, condition);
}

function planRange(index: FieldIndex, condition: Record<string, unknown>): Candidates | null {
  const bound = (op: string, inclusive: boolean): RangeBound | undefined =>
    op in condition && isRangeValue(condition[op]) ? { value: condition[op], inclusive } : undefined;
  const lower = bound("$gt", false) ?? bound("$gte", true);
  let upper = bound("$lt", false) ?? bound("$lte", true);
  if (!lower && !upper) return null;
  // mingo tests each bound on its own (any array element, values of the bound's type only), so
  // both bounds narrow the scan only when one value must satisfy both.
  if (lower && upper && (index.multikey || typeOf(lower.value) !== typeOf(upper.value))) upper = undefined;
  return index.range(lower, upper);
}

function union(plans: Candidates[]): Candidates {
  return {
    size: plans.reduce((sum, plan) => sum + plan.size, 0),
    *ids() {
      const seen = new Set<string>();
      for (const plan of plans) {
        for (const id of plan.ids()) {
          if (!seen.has(id)) {
            seen.add(id);
            yield id;
          }
        }
      }
    },
  };
}

/**
 * The narrowest candidate set among the top-level AND of the filter's conditions (`$and`
 * branches included; an `$or` counts when every branch can be planned).
 */
export function planFilter(filter: Filter, indexFor: (path: string) => FieldIndex | undefined): Candidates | null {
  let best: Candidates | null = null;
  const consider = (plan: Candidates | null): void => {
    if (plan && (!best || plan.size < best.size)) best = plan;
  };
  for (const [key, condition] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(condition)) {
      for (const branch of condition) consider(planFilter(branch as Filter, indexFor));
    } else if (key === "$or" && Array.isArray(condition) && condition.length > 0) {
      const branches = condition.map((branch) => planFilter(branch as Filter, indexFor));
      if (branches.every((plan) => plan !== null)) consider(union(branches as Candidates[]));
    } else if (!key.startsWith("$")) {
      const index = indexFor(key);
      if (index) consider(planField(index, condition));
    }
  }
  return best;
}
