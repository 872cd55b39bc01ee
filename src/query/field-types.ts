// The types and rules a `where` condition is read by (src/query/where.ts): the rule a dotted
// path follows through dicts and lists, the types its scalars may have (to convert strings to
// ObjectIds and dates), and VALIDATE_FILTERS' test of whether a condition suits the field.
import { ObjectId } from "bson";
import type { Config, Resource } from "../settings/normalize.ts";
import type { FieldSchema } from "../settings/types.ts";
import { dictFields, elementRules, isList, isRule, metaRule, typesOf, type Types } from "../settings/rule-types.ts";
import { isPlainObject } from "../util/objects.ts";

export class FieldTypes {
  constructor(
    private readonly resource: Resource,
    private readonly config: Config,
  ) {}

  /** The rule a (dotted) path follows, through dicts and lists; undefined when the schema has none. */
  ruleAt(path: string): FieldSchema | undefined {
    const [first, ...rest] = path.split(".");
    let rule: FieldSchema | undefined = this.resource.schema[first!] ?? metaRule(this.resource, this.config, first!);
    for (const segment of rest) {
      if (!rule) return undefined;
      if (isList(rule)) {
        const elements = elementRules(rule);
        if (/^\d+$/.test(segment)) {
          rule = isRule(rule.schema) ? rule.schema : elements[Number(segment)];
          continue;
        }
        rule = elements.map((element) => dictFields(element)?.[segment]).find(Boolean);
      } else {
        rule = dictFields(rule)?.[segment];
      }
    }
    return rule;
  }

  /** The types a scalar at `path` may have: a list's element types for list fields. */
  scalarTypes(path: string): Types {
    const rule = this.ruleAt(path);
    if (!rule || !isList(rule)) return typesOf(rule);
    const elements = elementRules(rule).map(typesOf);
    if (elements.length === 0 || elements.some((types) => types === undefined)) return undefined;
    return new Set(elements.flatMap((types) => [...types!]));
  }
}


export function conditionFits(rule: FieldSchema, condition: unknown): boolean {
  if (!isPlainObject(condition)) return valueFits(rule, condition);
  const keys = Object.keys(condition);
  if (!keys.some((key) => key.startsWith("$"))) return valueFits(rule, condition);
  return keys.every((operator) => {
    const operand = condition[operator];
    switch (operator) {
      case "$eq": case "$ne": case "$gt": case "$gte": case "$lt": case "$lte":
        return valueFits(rule, operand);
      case "$in": case "$nin":
        return Array.isArray(operand) && operand.every((item) => valueFits(rule, item));
      case "$all":
        return Array.isArray(operand) && operand.every((item) => elementFits(rule, item));
      case "$not":
        return conditionFits(rule, operand);
      case "$exists":
        return typeof operand === "boolean";
      default:
        return true;
    }
  });
}

/** Cerberus' view of a value for a field: type, nullable, allowed, a dict's fields. */
function valueFits(rule: FieldSchema, value: unknown): boolean {
  if (value === null) return rule.nullable === true;
  const types = typesOf(rule);
  if (types?.has("list") && !Array.isArray(value)) return elementFits(rule, value);
  if (types && ![...types].some((type) => typeFits(type, value))) return false;
  if (Array.isArray(rule.allowed)) {
    const values = Array.isArray(value) ? value : [value];
    if (!values.every((v) => rule.allowed!.includes(v))) return false;
  }
  const fields = dictFields(rule);
  if (fields && isPlainObject(value)) {
    return Object.entries(value).every(([key, member]) => fields[key] !== undefined && valueFits(fields[key]!, member));
  }
  return true;
}

/** A scalar compared with a list field matches its elements. */
function elementFits(rule: FieldSchema, value: unknown): boolean {
  const elements = elementRules(rule);
  if (elements.length === 0) return !Array.isArray(rule.allowed) || rule.allowed.includes(value);
  return elements.some((element) => valueFits({ ...element, allowed: element.allowed ?? rule.allowed }, value));
}

function typeFits(type: string, value: unknown): boolean {
  switch (type) {
    case "string": return typeof value === "string";
    case "integer": return Number.isInteger(value);
    case "number": case "float": return typeof value === "number";
    case "boolean": return typeof value === "boolean";
    case "datetime": case "date": return value instanceof Date;
    case "objectid": return value instanceof ObjectId;
    case "list": case "set": return Array.isArray(value);
    case "dict": return isPlainObject(value);
    default: return true;
  }
}
