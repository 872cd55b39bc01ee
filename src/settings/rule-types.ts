// What a schema's rules say of a field's types: the rule a dotted path follows through dicts,
// the meta fields' types where the schema declares none, whether every store sorts a path's
// values alike, and whether a rule keeps values unique. Read by `where`
// (src/query/field-types.ts), the data layer and the write paths.
import type { Config, Resource } from "./normalize.ts";
import type { FieldSchema, Schema } from "./types.ts";
import { isPlainObject } from "../util/objects.ts";

export type Types = Set<string> | undefined;

/** Per rule object: a where clause asks for the same fields' types on every request. */
const typesByRule = new WeakMap<FieldSchema, Set<string>>();

export function typesOf(rule: FieldSchema | undefined): Types {
  const type = rule?.type;
  if (type === undefined) return undefined;
  let types = typesByRule.get(rule!);
  if (!types) typesByRule.set(rule!, (types = new Set(Array.isArray(type) ? type : [type])));
  return types;
}

const NO_TYPES: ReadonlySet<string> = new Set();

/** The types a rule declares, none when it declares no `type` (shared: never change the set). */
export function declaredTypes(rule: FieldSchema | undefined): ReadonlySet<string> {
  return typesOf(rule) ?? NO_TYPES;
}

/** A `schema` that is one rule (a list's items) rather than a mapping of fields. */
export function isRule(schema: unknown): schema is FieldSchema {
  if (!isPlainObject(schema)) return false;
  return typeof schema.type === "string" || (Array.isArray(schema.type) && schema.type.every((t) => typeof t === "string"));
}

export function isList(rule: FieldSchema): boolean {
  return typesOf(rule)?.has("list") === true;
}

/** The fields of a dict rule (or of a rule whose `schema` is a mapping). */
export function dictFields(rule: FieldSchema | undefined): Schema | undefined {
  if (!rule || !isPlainObject(rule.schema) || isList(rule) || isRule(rule.schema)) return undefined;
  return rule.schema as Schema;
}

/** Every rule an element of a list rule may follow. */
export function elementRules(rule: FieldSchema): FieldSchema[] {
  if (isRule(rule.schema)) return [rule.schema];
  return Array.isArray(rule.items) ? rule.items.filter(isPlainObject) : [];
}

/** The rules of meta fields, shared, so that their types are worked out once (typesOf). */
const META_RULES = Object.fromEntries(["objectid", "datetime", "string", "boolean", "integer"].map((type) => [type, { type }])) as Record<
  "objectid" | "datetime" | "string" | "boolean" | "integer",
  FieldSchema
>;

/** Meta fields are typed even where the schema does not declare them. */
export function metaRule(resource: Resource, c: Config, name: string): FieldSchema | undefined {
  if (name === resource.id_field || name === resource.id_field + c.VERSION_ID_SUFFIX) return META_RULES.objectid;
  if (name === c.DATE_CREATED || name === c.LAST_UPDATED) return META_RULES.datetime;
  if (name === c.ETAG) return META_RULES.string;
  if (name === c.DELETED) return META_RULES.boolean;
  if (name === c.VERSION || name === c.LATEST_VERSION) return META_RULES.integer;
  return undefined;
}

/**
 * Whether a rule keeps its field's values unique, in any of Eve's three ways: across the
 * collection, the owner's documents or the resource's filter. Each but `unique` across a whole
 * collection that every resource over it keeps so is checked by a lookup alone, which concurrent
 * writes race (src/methods/unique-claims.ts) and update operators cannot be trusted with.
 */
export function keepsUnique(rule: FieldSchema | undefined): boolean {
  return rule?.unique === true || rule?.unique_within_resource === true || rule?.unique_to_user === true;
}

/** The types every store sorts alike (docs/drivers.md): none is an array or a document. */
const SORTED_ALIKE = new Set(["string", "integer", "float", "number", "boolean", "datetime", "objectid", "media"]);

/**
 * Whether the schema lets `path` hold only values every store sorts alike (or nothing): dicts on
 * the way, and at its end no list, no dict and no field the schema leaves untyped.
 */
export function sortsAlike(resource: Resource, config: Config, path: string): boolean {
  const [first, ...rest] = path.split(".");
  let rule: FieldSchema | undefined = resource.schema[first!] ?? metaRule(resource, config, first!);
  for (const segment of rest) {
    const types: Types = rule && typesOf(rule);
    rule = types?.size === 1 && types.has("dict") ? dictFields(rule)?.[segment] : undefined;
  }
  const types = typesOf(rule);
  return types !== undefined && [...types].every((type) => SORTED_ALIKE.has(type));
}
