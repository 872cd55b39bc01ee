// Field rules as settings give them (docs/auth.md, "Field rules"; docs/contracts.md §4):
// `allowed_read_roles`, `allowed_write_roles` and `field_access` in a field's definition, at the
// top level, in a dict's fields or in the fields of the dicts a list holds. Checked at start-up
// (a malformed rule names its resource and field) and compiled once per resource into a tree
// of the fields that have rules; a resource without any has none (null), which is all the
// request path looks at. What a caller may read or write is worked out from the tree by
// src/auth/field-masks.ts.
import type { Doc } from "../drivers/types.ts";
import { isObject, show } from "./checks.ts";
import { parseUrlParams } from "./urls.ts";

/** What a `field_access` hook is asked, once per field and document (or query). */
export interface FieldAccessRequest {
  /** "read": may the field be shown; "write": may the request set it. */
  mode: "read" | "write";
  /** The request's method (a write's response is read with the write's method). */
  method: string;
  resource: string;
  /** The field's path as the schema nests it, list items not numbered (`lines.price`). */
  field: string;
  /** The authenticated user (BasicAuth's username, TokenAuth's token, …), null if none. */
  user: string | null;
  roles: readonly string[];
  /**
   * A read: the stored document being shown. A write: the stored document being changed, or the
   * new one a POST creates. Undefined when a query (`where`, `sort`, `projection`, `embedded`)
   * names the field: answer true then only if the caller may read it in every document.
   */
  document: Doc | undefined;
  /** What `allowed_read_roles` / `allowed_write_roles` say (true where the field has none). */
  allowed: boolean;
}

/**
 * Decides what role lists cannot (the owner may read their own salary, nobody may change a
 * closed order's price). Returns true to allow; anything else refuses, a promise too: it must
 * answer synchronously, since it is asked for every document a read shows.
 */
export type FieldAccessHook = (request: FieldAccessRequest) => boolean;

export const FIELD_RULE_KEYS = ["allowed_read_roles", "allowed_write_roles", "field_access"] as const;

/** A field with rules at or below it. */
export interface FieldRule {
  path: string;
  read: readonly string[] | null;
  write: readonly string[] | null;
  hook: FieldAccessHook | null;
  /** A dict's fields that have rules. */
  fields: FieldRules | null;
  /** The fields with rules of the dicts a list holds. */
  items: FieldRules | null;
}

export type FieldRules = ReadonlyMap<string, FieldRule>;

export interface FieldRuleTree {
  resource: string;
  fields: FieldRules;
  /** Some rule is a hook, so what a caller may see depends on the document. */
  dynamic: boolean;
  /**
   * The oplog only (OPLOG_AUDIT): its entries' changes `c` are documents of the resource their
   * `r` names, shown under that resource's rules. Keyed by `r`.
   */
  changes?: ReadonlyMap<string, FieldRuleTree>;
}

/** Whether a field's `schema` holds its list items' rules rather than a dict's fields. */
export function schemaHoldsItems(rule: Record<string, unknown>): boolean {
  const schema = rule.schema;
  const types = Array.isArray(rule.type) ? rule.type : [rule.type];
  return isObject(schema) && (types.includes("list") || (!types.includes("dict") && typeof schema.type === "string"));
}

const roleList = (value: unknown): readonly string[] | null => (Array.isArray(value) ? Object.freeze([...(value as string[])]) : null);

/** A resource schema's rules; null when no field has any. */
export function compileFieldRules(resource: string, schema: Record<string, unknown>): FieldRuleTree | null {
  let dynamic = false;
  const mapping = (definitions: Record<string, unknown>, prefix: string): FieldRules | null => {
    const out = new Map<string, FieldRule>();
    for (const [name, definition] of Object.entries(definitions)) {
      if (!isObject(definition)) continue;
      const rule = field(definition, prefix ? `${prefix}.${name}` : name);
      if (rule) out.set(name, rule);
    }
    return out.size ? out : null;
  };
  const field = (definition: Record<string, unknown>, path: string): FieldRule | null => {
    let fields: FieldRules | null = null;
    let items: FieldRules | null = null;
    const nested = definition.schema;
    if (isObject(nested)) {
      if (!schemaHoldsItems(definition)) fields = mapping(nested, path);
      else if (isObject(nested.schema) && !schemaHoldsItems(nested)) items = mapping(nested.schema, path);
    }
    const hook = typeof definition.field_access === "function" ? (definition.field_access as FieldAccessHook) : null;
    if (hook) dynamic = true;
    const read = roleList(definition.allowed_read_roles);
    const write = roleList(definition.allowed_write_roles);
    if (!read && !write && !hook && !fields && !items) return null;
    return { path, read, write, hook, fields, items };
  };
  const fields = mapping(schema, "");
  return fields ? { resource, fields, dynamic } : null;
}

/**
 * A resource's rules with those its siblings over the same collection give the fields it does
 * not declare: otherwise a resource without rules, over a collection another rules, lets any
 * caller filter or sort on the fields the other withholds (VALIDATE_FILTERS is off by default)
 * and learn them. A field the resource declares is its author's to rule. The first sibling that
 * rules a field rules it here.
 */
export function withSiblingRules(own: FieldRuleTree | null, resource: string, declared: Record<string, unknown>, siblings: FieldRuleTree[]): FieldRuleTree | null {
  const fields = new Map(own?.fields);
  let dynamic = own?.dynamic ?? false;
  for (const sibling of siblings) {
    for (const [name, rule] of sibling.fields) {
      if (Object.hasOwn(declared, name) || fields.has(name)) continue;
      fields.set(name, rule);
      dynamic ||= sibling.dynamic;
    }
  }
  return fields.size === (own?.fields.size ?? 0) ? own : { resource, fields, dynamic };
}

/** Whether a schema carries any field rule, at any depth (the cheap test before compiling). */
export function hasFieldRules(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasFieldRules);
  if (!isObject(value)) return false;
  return FIELD_RULE_KEYS.some((key) => key in value) || Object.values(value).some(hasFieldRules);
}

/** Whether the rule at a (dotted) path, or one above or below it, restricts reading. */
export function readRestricted(tree: FieldRuleTree, path: string): boolean {
  let rules: FieldRules | null = tree.fields;
  let rule: FieldRule | undefined;
  for (const part of path.split(".")) {
    if (/^\d+$/.test(part) && rule?.items) continue;
    rule = rules?.get(part);
    if (!rule) return false;
    if (rule.read || rule.hook) return true;
    rules = rule.fields ?? rule.items;
  }
  const below = (nested: FieldRules | null): boolean => [...(nested ?? new Map<string, FieldRule>()).values()].some((r) => r.read !== null || r.hook !== null || below(r.fields) || below(r.items));
  return rule !== undefined && (below(rule.fields) || below(rule.items));
}

const ROLE_RULE = "must be a non-empty list of role names (to hide a field from every client, use field_access: () => false)";

/**
 * Start-up problems of a resource's field rules, each naming the field: malformed values, rules
 * where they cannot be enforced, and settings that would reveal a field to callers who may not
 * read it (ordering every page by it, a URL that answers whether a value exists).
 */
export function fieldRuleProblems(at: string, def: Record<string, unknown>, idField: string): string[] {
  const problems: string[] = [];
  const schema = def.schema;
  if (!isObject(schema) || !hasFieldRules(schema)) return problems;
  // "field": a field of the document, of a dict or of a list's dicts, where rules are enforced;
  // "item": a list's item definition; "other": inside items, *of, keysrules or valuesrules.
  type Place = "field" | "item" | "other";
  const definition = (rule: unknown, path: string, place: Place, label: string): void => {
    if (!isObject(rule)) return;
    for (const key of FIELD_RULE_KEYS) {
      if (!(key in rule)) continue;
      const value = rule[key];
      if (place !== "field") problems.push(`${at} field '${label}': '${key}' is not enforced here; put it on the field that holds this value`);
      else if (key === "field_access" && typeof value !== "function") problems.push(`${at} field '${label}': 'field_access' must be a function (got ${show(value)})`);
      else if (key !== "field_access" && !(Array.isArray(value) && value.length > 0 && value.every((r) => typeof r === "string" && r !== ""))) {
        problems.push(`${at} field '${label}': '${key}' ${ROLE_RULE} (got ${show(value)})`);
      }
    }
    const nested = rule.schema;
    if (isObject(nested)) {
      if (!schemaHoldsItems(rule)) mapping(nested, path, place === "other" ? "other" : "field");
      else definition(nested, path, place === "field" ? "item" : "other", `${label}[]`);
    }
    for (const key of ["items", "anyof", "allof", "oneof", "noneof"]) {
      const list = rule[key];
      if (Array.isArray(list)) list.forEach((member, i) => definition(member, path, "other", `${label} (${key} ${i})`));
    }
    for (const key of ["keysrules", "valuesrules", "keyschema", "valueschema"]) definition(rule[key], path, "other", `${label} (${key})`);
  };
  const mapping = (fields: Record<string, unknown>, prefix: string, place: Place) => {
    for (const [name, rule] of Object.entries(fields)) {
      const path = prefix ? `${prefix}.${name}` : name;
      definition(rule, path, place, path);
    }
  };
  mapping(schema, "", "field");
  if (problems.length) return problems;

  const tree = compileFieldRules("", schema)!;
  const identifying = (field: string, why: string) => {
    if (readRestricted(tree, field)) problems.push(`${at} field '${field}' has read rules and cannot be ${why}: a caller who may not read it would learn its values`);
  };
  const own = tree.fields.get(idField);
  if (own) problems.push(`${at} field '${idField}' is the id field, which names each document in its URL: it cannot have field rules`);
  const lookup = def.additional_lookup;
  if (isObject(lookup) && typeof lookup.field === "string") identifying(lookup.field, "the additional_lookup field");
  if (typeof def.url === "string") for (const param of parseUrlParams(def.url)) identifying(param.name, "a value in the resource's url");
  const datasource = isObject(def.datasource) ? def.datasource : {};
  for (const field of sortFields(datasource.default_sort ?? def.default_sort)) identifying(field, "in default_sort");
  return problems;
}

/** The fields a `default_sort` setting names (`"-a,b"` or `[["a", -1]]`). */
function sortFields(setting: unknown): string[] {
  if (typeof setting === "string") return setting.split(",").map((part) => part.trim().replace(/^-/, "")).filter(Boolean);
  if (Array.isArray(setting)) return setting.flatMap((pair) => (Array.isArray(pair) && typeof pair[0] === "string" ? [pair[0]] : []));
  return [];
}
