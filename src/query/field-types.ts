// The types and rules a `where` condition is read by (src/query/where.ts): the rule a dotted
// path follows through dicts and lists, the types its scalars may have (to convert strings to
// ObjectIds and dates), and VALIDATE_FILTERS' test of whether a condition suits the field.
import { ObjectId } from "bson";
import type { Config, Resource } from "../settings/normalize.ts";
import type { FieldSchema, Schema } from "../settings/types.ts";
import { isPlainObject } from "../util/objects.ts";

type Types = Set<string> | undefined;

/** Per rule object: a where clause asks for the same fields' types on every request. */
const typesByRule = new WeakMap<FieldSchema, Set<string>>();

function typesOf(rule: FieldSchema | undefined): Types {
  const type = rule?.type;
  if (type === undefined) return undefined;
  let types = typesByRule.get(rule!);
  if (!types) typesByRule.set(rule!, (types = new Set(Array.isArray(type) ? type : [type])));
  return types;
}

/** A `schema` that is one rule (a list's items) rather than a mapping of fields. */
function isRule(schema: unknown): schema is FieldSchema {
  if (!isPlainObject(schema)) return false;
  return typeof schema.type === "string" || (Array.isArray(schema.type) && schema.type.every((t) => typeof t === "string"));
}

function isList(rule: FieldSchema): boolean {
  return typesOf(rule)?.has("list") === true;
}

/** The fields of a dict rule (or of a rule whose `schema` is a mapping). */
function dictFields(rule: FieldSchema | undefined): Schema | undefined {
  if (!rule || !isPlainObject(rule.schema) || isList(rule) || isRule(rule.schema)) return undefined;
  return rule.schema as Schema;
}

/** Every rule an element of a list rule may follow. */
function elementRules(rule: FieldSchema): FieldSchema[] {
  if (isRule(rule.schema)) return [rule.schema];
  return Array.isArray(rule.items) ? rule.items.filter(isPlainObject) : [];
}

/** The rules of meta fields, shared, so that their types are worked out once (typesOf). */
const META_RULES = Object.fromEntries(["objectid", "datetime", "string", "boolean", "integer"].map((type) => [type, { type }])) as Record<
  "objectid" | "datetime" | "string" | "boolean" | "integer",
  FieldSchema
>;

export class FieldTypes {
  constructor(
    private readonly resource: Resource,
    private readonly config: Config,
  ) {}

  /** Meta fields are typed even where the schema does not declare them. */
  private metaRule(name: string): FieldSchema | undefined {
    const c = this.config;
    if (name === this.resource.id_field || name === this.resource.id_field + c.VERSION_ID_SUFFIX) return META_RULES.objectid;
    if (name === c.DATE_CREATED || name === c.LAST_UPDATED) return META_RULES.datetime;
    if (name === c.ETAG) return META_RULES.string;
    if (name === c.DELETED) return META_RULES.boolean;
    if (name === c.VERSION || name === c.LATEST_VERSION) return META_RULES.integer;
    return undefined;
  }

  /** The rule a (dotted) path follows, through dicts and lists; undefined when the schema has none. */
  ruleAt(path: string): FieldSchema | undefined {
    const [first, ...rest] = path.split(".");
    let rule: FieldSchema | undefined = this.resource.schema[first!] ?? this.metaRule(first!);
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
