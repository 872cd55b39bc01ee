// Rules an update operator's result must keep (docs/updates.md), as conditions on the stored
// document before the update: `min: 0` under `$inc: -1` is `value ≥ 1`. Each guard is both a
// MongoDB filter, which the store checks in the write's own atomic step (the driver's
// `require`), and the same test in JavaScript, which says which rule a refused document broke.
import type { Doc, Filter } from "../drivers/types.ts";
import { isPlainObject } from "../util/objects.ts";
import type { Issues } from "./types.ts";

export interface Guard {
  /** The operator and the path as the client wrote them, where a refusal is reported ("" for a plain field's). */
  operator: string;
  path: string;
  filter: Filter;
  /** Cerberus' wording of the rule. */
  message: string;
  holds(document: Doc): boolean;
}

/** The value at a dotted path, and whether there is one. */
export function valueAtPath(document: Doc, path: string): { present: boolean; value: unknown } {
  let current: unknown = document;
  for (const segment of path.split(".")) {
    if (!isPlainObject(current) || !Object.hasOwn(current, segment)) return { present: false, value: undefined };
    current = current[segment];
  }
  return { present: true, value: current };
}

const isNumber = (value: unknown): value is number => typeof value === "number";

/** `path` holds a value `test` accepts (a condition on it in `filter`), or, where `absentOk`, none at all. */
export function guard(operator: string, path: string, message: string, condition: Filter, test: (value: unknown) => boolean, absentOk: boolean): Guard {
  const filter = absentOk ? { $or: [{ [path]: condition }, { [path]: { $exists: false } }] } : { [path]: condition };
  return {
    operator,
    path,
    filter,
    message,
    holds: (document) => {
      const { present, value } = valueAtPath(document, path);
      return present ? test(value) : absentOk;
    },
  };
}

/** The stored value is of the kind the operator works on (or absent: the operator creates it). */
export function kindGuard(operator: string, path: string, kind: "number" | "array" | "object", message: string): Guard {
  const test =
    kind === "number" ? (value: unknown) => isNumber(value) : kind === "array" ? Array.isArray : (value: unknown) => isPlainObject(value);
  return guard(operator, path, message, { $type: kind }, test, true);
}

/** value ≥ bound (or ≤ with `below`): the number the result stays within, moved back by the operator. */
export function boundGuard(operator: string, path: string, message: string, bound: number, below: boolean, absentOk: boolean): Guard {
  const condition = below ? { $lte: bound } : { $gte: bound };
  return guard(operator, path, message, condition, (value) => isNumber(value) && (below ? value <= bound : value >= bound), absentOk);
}

/** The value is one of `values`. */
export function oneOfGuard(operator: string, path: string, message: string, values: number[], absentOk: boolean): Guard {
  return guard(operator, path, message, { $in: values }, (value) => isNumber(value) && values.includes(value), absentOk);
}

/** The list holds at most `most` items (or there is none): the element at index `most` does not exist. */
export function lengthGuard(operator: string, path: string, message: string, most: number): Guard {
  return {
    operator,
    path,
    filter: { [`${path}.${most}`]: { $exists: false } },
    message,
    holds: (document) => {
      const { present, value } = valueAtPath(document, path);
      return !present || !Array.isArray(value) || value.length <= most;
    },
  };
}

/** The condition a write must meet for all of its guards, for the driver; undefined without any. */
export function requirementOf(guards: Guard[]): Filter | undefined {
  if (guards.length === 0) return undefined;
  return guards.length === 1 ? guards[0]!.filter : { $and: guards.map((g) => g.filter) };
}

/**
 * The rules a document breaks (all of them, for none), the first broken one per path: `{operator: {path: message}}`,
 * or `{path: message}` for a guard of the plain fields (operator "").
 */
export function brokenGuards(guards: Guard[], document: Doc | null): Issues | null {
  const issues: Record<string, string | Record<string, string>> = {};
  let broken = false;
  for (const g of guards) {
    // No document: every guard counts as broken (the store refused one its tests pass).
    if (document && g.holds(document)) continue;
    const section = g.operator === "" ? issues : ((issues[g.operator] ??= {}) as Record<string, string>);
    if (section[g.path] !== undefined) continue;
    section[g.path] = g.message;
    broken = true;
  }
  return broken ? (issues as Issues) : null;
}
