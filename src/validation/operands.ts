// What each update operator may do to a field of the schema (docs/updates.md): the field types
// it works on, the operand it takes, the rules of the field it can keep atomically (as guards on
// the stored value, ./guards.ts) and the rules it cannot, which refuse it. Values an operand
// carries (a $set's value, a $push's items) are left to the resource's validator (operators.ts).
import { declaredTypes } from "../settings/rule-types.ts";
import type { FieldSchema } from "../settings/types.ts";
import { isPlainObject } from "../util/objects.ts";
import { MESSAGES } from "./errors.ts";
import { boundGuard, guard, kindGuard, lengthGuard, oneOfGuard, type Guard } from "./guards.ts";
import { pyEqual } from "./walk.ts";

/** Rules every operator leaves alone: they describe the field rather than constrain its value, or are checked elsewhere. */
const DESCRIPTIVE = [
  "type",
  "nullable",
  "required",
  "default",
  "default_setter",
  "description",
  "meta",
  "coerce",
  "unique",
  "readonly",
  "versioned",
  // Field rules: who may write the path is checked before the operators (src/auth/field-writes.ts).
  "allowed_read_roles",
  "allowed_write_roles",
  "field_access",
];

/** Per operator, the further rules of its field that it keeps (checked statically or by a guard). */
const KEPT: Record<string, readonly string[]> = {
  $inc: ["min", "max", "allowed"],
  $mul: ["min", "max"],
  $push: ["schema", "allowed", "minlength", "maxlength", "contains", "empty"],
  $addToSet: ["schema", "allowed", "minlength", "maxlength", "contains", "empty"],
  $pull: ["schema", "allowed", "maxlength"],
};

const NUMBER_TYPES = new Set(["integer", "float", "number"]);
const COMPARISONS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/** What an operator on one field makes: a refusal, or the operand to send, its guards and the values the validator must check. */
export interface OperandPlan {
  issue?: string;
  operand?: unknown;
  guards?: Guard[];
  /** Values the resource's validator checks as the field's own (converted values replace them). */
  values?: unknown[];
  /** Values the validator checks as items of the list (converted values replace them). */
  items?: unknown[];
  /** Puts the converted values back into the operand. */
  rebuild?: (values: unknown[]) => unknown;
}

/** The first rule of the field the operator cannot keep, if any. */
function unkeptRule(operator: string, def: FieldSchema): string | undefined {
  const kept = KEPT[operator] ?? [];
  return Object.keys(def).find((rule) => !DESCRIPTIVE.includes(rule) && !kept.includes(rule));
}

const cannotKeep = (rule: string, operator: string) => `rule '${rule}' cannot be kept by ${operator}`;

/**
 * Why the operator cannot change a field of this definition at all, whatever its operand: the
 * field's type, or a rule it could not keep; null when it can.
 */
export function fieldIssue(operator: string, def: FieldSchema): string | null {
  const types = declaredTypes(def);
  const only = (wanted: ReadonlySet<string> | string) =>
    types.size > 0 && [...types].every((type) => (typeof wanted === "string" ? type === wanted : wanted.has(type)));
  switch (operator) {
    case "$currentDate":
      return types.has("datetime") ? null : "$currentDate needs a field of datetime type";
    case "$unset":
      return def.required ? MESSAGES.required : null;
    case "$inc":
    case "$mul":
      if (!only(NUMBER_TYPES)) return `${operator} needs a field of number type`;
      break;
    case "$push":
    case "$addToSet":
    case "$pull":
      if (!only("list")) return `${operator} needs a field of list type`;
      if (operator === "$pull" && def.empty === false) return cannotKeep("empty", operator);
      break;
    default:
      return null;
  }
  const rule = unkeptRule(operator, def);
  return rule ? cannotKeep(rule, operator) : null;
}

/** `now` is the time a $currentDate writes. */
export function plan(operator: string, path: string, operand: unknown, def: FieldSchema, now: Date): OperandPlan {
  const issue = fieldIssue(operator, def);
  if (issue) return { issue };
  const types = declaredTypes(def);
  switch (operator) {
    case "$set":
    case "$min":
    case "$max":
      return { values: [operand], rebuild: ([value]) => value };
    case "$currentDate":
      if (operand !== true && !(isPlainObject(operand) && Object.keys(operand).length === 1 && operand.$type === "date")) return { issue: 'must be true or {"$type": "date"}' };
      return { values: [now], rebuild: ([value]) => value };
    case "$unset":
      return { operand: "" };
    case "$inc":
    case "$mul":
      return arithmetic(operator, path, operand, def, types);
    case "$push":
    case "$addToSet":
      return growth(operator, path, operand, def);
    case "$pull":
      return pull(path, operand, def);
  }
  return { issue: "unknown update operator" };
}

function arithmetic(operator: "$inc" | "$mul", path: string, operand: unknown, def: FieldSchema, types: ReadonlySet<string>): OperandPlan {
  const integral = types.has("integer") && !types.has("float") && !types.has("number");
  if (typeof operand !== "number" || !Number.isFinite(operand) || (integral && !Number.isInteger(operand))) return { issue: MESSAGES.type(integral ? "integer" : "number") };
  const guards = [kindGuard(operator, path, "number", MESSAGES.type(def.type))];
  // What a missing field becomes: the operand for $inc, 0 for $mul.
  const fresh = operator === "$inc" ? operand : 0;
  for (const [bound, upper] of [["min", false], ["max", true]] as const) {
    const limit = def[bound];
    if (limit === undefined) continue;
    if (typeof limit !== "number") return { issue: cannotKeep(bound, operator) };
    const message = upper ? MESSAGES.max(limit) : MESSAGES.min(limit);
    const keeps = (value: number) => (upper ? value <= limit : value >= limit);
    if (operator === "$mul" && operand === 0) {
      if (!keeps(0)) return { issue: message };
      continue;
    }
    // Whether the operator can take a stored value past this bound: $inc only towards it.
    if (operator === "$mul" || (upper ? operand > 0 : operand < 0)) {
      // The stored values whose result keeps the bound: v + d ≥ min is v ≥ min - d, v·k ≥ min
      // is v ≥ min / k, the other way round when k < 0.
      const edge = operator === "$inc" ? limit - operand : limit / operand;
      guards.push(boundGuard(operator, path, message, edge, operator === "$mul" && operand < 0 ? !upper : upper, keeps(fresh)));
    } else if (!keeps(fresh)) {
      guards.push(guard(operator, path, message, { $exists: true }, () => true, false));
    }
  }
  guards.push(...overflowGuards(operator, path, operand));
  if (def.allowed !== undefined) {
    const allowed = def.allowed;
    if (operator !== "$inc" || !integral || !allowed.every(Number.isInteger)) return { issue: cannotKeep("allowed", operator) };
    const values = (allowed as number[]).map((value) => value - operand);
    guards.push(oneOfGuard(operator, path, "unallowed value", values, (allowed as number[]).includes(operand)));
  }
  return { operand, guards };
}

/** The largest result $inc and $mul may leave: half the way to 2^1024, where a double becomes Infinity. */
const LARGEST_RESULT = 2 ** 1023;

/**
 * Conditions that keep the result finite: Infinity stored would make every later read of the
 * document invalid JSON. $inc can get there only by an operand past 2^969 (a finite value plus
 * less rounds to at most the largest double), $mul by a factor past 1. A missing field becomes
 * the operand or 0, both finite.
 */
function overflowGuards(operator: "$inc" | "$mul", path: string, operand: number): Guard[] {
  const size = Math.abs(operand);
  if (operator === "$inc") {
    if (size < 2 ** 969) return [];
    return [boundGuard(operator, path, MESSAGES.tooLarge, (operand > 0 ? LARGEST_RESULT : -LARGEST_RESULT) - operand, operand > 0, true)];
  }
  if (size <= 1) return [];
  const edge = LARGEST_RESULT / size;
  return [boundGuard(operator, path, MESSAGES.tooLarge, edge, true, true), boundGuard(operator, path, MESSAGES.tooLarge, -edge, false, true)];
}

/** `$each` and the modifiers beside it, or one value. */
function eachOf(operator: "$push" | "$addToSet", operand: unknown): { values: unknown[]; modifiers: Record<string, number> } | string {
  if (!isPlainObject(operand) || !Object.keys(operand).some((key) => key.startsWith("$"))) return { values: [operand], modifiers: {} };
  const allowed = operator === "$push" ? ["$each", "$position", "$slice"] : ["$each"];
  const unknown = Object.keys(operand).find((key) => !allowed.includes(key));
  if (unknown !== undefined) return `unknown modifier ${unknown} (${operator} takes ${allowed.join(", ")})`;
  if (!Array.isArray(operand.$each)) return "$each must be a list";
  const modifiers: Record<string, number> = {};
  for (const key of ["$position", "$slice"]) {
    const value = operand[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value)) return `${key} must be an integer`;
    modifiers[key] = value as number;
  }
  return { values: operand.$each, modifiers };
}

function growth(operator: "$push" | "$addToSet", path: string, operand: unknown, def: FieldSchema): OperandPlan {
  const each = eachOf(operator, operand);
  if (typeof each === "string") return { issue: each };
  const guards = [kindGuard(operator, path, "array", MESSAGES.type("list"))];
  const most = def.maxlength;
  const slice = each.modifiers.$slice;
  // $addToSet adds at most each distinct value: counted whole, as if none were there yet.
  const adding = operator === "$push" ? each.values.length : distinctCount(each.values);
  if (typeof most === "number" && !(slice !== undefined && Math.abs(slice) <= most)) {
    if (adding > most) return { issue: MESSAGES.maxlength(most) };
    guards.push(lengthGuard(operator, path, MESSAGES.maxlength(most), most - adding));
  }
  const wrapped = isPlainObject(operand) && Array.isArray(operand.$each);
  return { items: each.values, guards, rebuild: (items) => (wrapped ? { ...(operand as Record<string, unknown>), $each: items } : items[0]) };
}

function distinctCount(values: unknown[]): number {
  const seen: unknown[] = [];
  for (const value of values) if (!seen.some((other) => pyEqual(other, value))) seen.push(value);
  return seen.length;
}

/** The item rules of a list's `schema` (a single rule, not a mapping). */
function itemRules(def: FieldSchema): FieldSchema | null {
  const schema = def.schema;
  return isPlainObject(schema) && (typeof schema.type === "string" || Array.isArray(schema.type)) ? (schema as unknown as FieldSchema) : null;
}

/**
 * A $pull operand: a value, comparison operators on the items, or, for items that are
 * documents, a document of their fields' values or comparisons. Each value is checked as an
 * item (or as the item's field), so `$where`, `$expr` and the like never reach the store.
 */
function pull(path: string, operand: unknown, def: FieldSchema): OperandPlan {
  const guards = [kindGuard("$pull", path, "array", MESSAGES.type("list"))];
  const items = itemRules(def);
  const condition = comparison(operand);
  if (typeof condition === "string") return { issue: condition };
  if (condition) return { items: condition.values, guards, rebuild: condition.rebuild };
  if (!isPlainObject(operand) || !items || !declaredTypes(items).has("dict")) return { items: [operand], guards, rebuild: ([value]) => value };
  // A query on the fields of document items: each field's value (or comparison values) checked as a partial item.
  const fields = Object.keys(operand);
  const parts: Array<{ field: string; values: unknown[]; rebuild: (values: unknown[]) => unknown }> = [];
  for (const field of fields) {
    const inner = comparison(operand[field]);
    if (typeof inner === "string") return { issue: inner };
    parts.push(inner ? { field, ...inner } : { field, values: [operand[field]], rebuild: ([value]) => value });
  }
  const partials = parts.flatMap(({ field, values }) => values.map((value) => ({ [field]: value })));
  return {
    items: partials,
    guards,
    rebuild: (checked) => {
      const query: Record<string, unknown> = {};
      let at = 0;
      for (const { field, values, rebuild } of parts) {
        query[field] = rebuild(checked.slice(at, at + values.length).map((item) => (item as Record<string, unknown>)[field]));
        at += values.length;
      }
      return query;
    },
  };
}

/** Comparison operators (`{$gte: 5}`, `{$in: [1, 2]}`) and the values they compare with; null for a plain value. */
function comparison(operand: unknown): { values: unknown[]; rebuild: (values: unknown[]) => unknown } | string | null {
  if (!isPlainObject(operand)) return null;
  const keys = Object.keys(operand);
  if (!keys.some((key) => key.startsWith("$"))) return null;
  const refused = keys.find((key) => !COMPARISONS.has(key));
  if (refused !== undefined) return `unknown operator ${refused} (a $pull condition compares with ${[...COMPARISONS].join(", ")})`;
  const values: unknown[] = [];
  const shape: Array<[string, number]> = [];
  for (const key of keys) {
    const value = operand[key];
    if (key === "$in" || key === "$nin") {
      if (!Array.isArray(value)) return `${key} must be a list`;
      values.push(...value);
      shape.push([key, value.length]);
    } else {
      values.push(value);
      shape.push([key, -1]);
    }
  }
  return {
    values,
    rebuild: (checked) => {
      const out: Record<string, unknown> = {};
      let at = 0;
      for (const [key, length] of shape) {
        out[key] = length < 0 ? checked[at++] : checked.slice(at, (at += length));
      }
      return out;
    },
  };
}
