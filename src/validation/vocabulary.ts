// The rule names of Cerberus 1.3 and Eve 2.3, and how Cerberus rewrites a definition before
// using it (deprecated names, `*of_*` type savers).

/** Rules Cerberus evaluates first, in this order, whatever their place in the definition. */
export const PRIORITY_RULES = ["nullable", "readonly", "type", "empty"] as const;

export const LOGIC_RULES = ["allof", "anyof", "noneof", "oneof"] as const;
export type LogicRule = (typeof LOGIC_RULES)[number];

/** Validation rules run from the rule queue, after the priority ones. */
export const QUEUE_RULES = [
  "allowed",
  "forbidden",
  "contains",
  "dependencies",
  "excludes",
  "items",
  "min",
  "max",
  "minlength",
  "maxlength",
  "regex",
  "schema",
  "keysrules",
  "valuesrules",
  ...LOGIC_RULES,
  "check_with",
  "unique",
  "unique_to_user",
  "unique_within_resource",
  "data_relation",
] as const;

/** Rules that never run from the queue: normalization, and definitions read by others. */
export const PASSIVE_RULES = [
  "required",
  "allow_unknown",
  "require_all",
  "purge_unknown",
  "meta",
  "description",
  "versioned",
  "coerce",
  "default",
  "default_setter",
  "rename",
  "rename_handler",
  // Field rules, read by access control rather than by validation (docs/contracts.md).
  "allowed_read_roles",
  "allowed_write_roles",
  "field_access",
] as const;

export const KNOWN_RULES: readonly string[] = [...PRIORITY_RULES, ...QUEUE_RULES, ...PASSIVE_RULES];

/** Cerberus 1.3 still accepts these older names and renames them. */
export const RULE_ALIASES: Record<string, string> = {
  keyschema: "keysrules",
  valueschema: "valuesrules",
  validator: "check_with",
};

/** A null value skips these (Cerberus' `_validate_nullable`). */
export const NULL_DROPS = new Set(["allowed", "empty", "forbidden", "items", "keysrules", "min", "max", "minlength", "maxlength", "regex", "schema", "type", "valuesrules"]);

/** An empty value (with `empty` defined) skips these (Cerberus' `_validate_empty`). */
export const EMPTY_DROPS = new Set(["allowed", "forbidden", "items", "minlength", "maxlength", "regex", "check_with"]);

/** Queue positions of the priority rules; the others follow from 4 in definition order. */
export const Q = { nullable: 0, readonly: 1, type: 2, empty: 3 } as const;

const TYPE_SAVER = /^(allof|anyof|noneof|oneof)_(.+)$/;

/**
 * A definition as Cerberus sees it once its schema is normalized: deprecated names renamed and
 * `anyof_type: [a, b]` expanded to `anyof: [{type: a}, {type: b}]`, order kept.
 */
export function expandDefinition(definition: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(definition)) {
    const saver = TYPE_SAVER.exec(key);
    if (saver && Array.isArray(value)) {
      const rule = RULE_ALIASES[saver[2]!] ?? saver[2]!;
      out[saver[1]!] = value.map((v) => ({ [rule]: v }));
    } else {
      out[RULE_ALIASES[key] ?? key] = value;
    }
  }
  return out;
}

/**
 * Whether a field's `schema` holds the rules of its list items (rather than the fields of a
 * sub-document): decided by the field's type, else by whether its keys read as rule names.
 */
export function schemaIsForItems(type: unknown, schema: Record<string, unknown>, isCustomRule: (name: string) => boolean): boolean {
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type];
  if (types.includes("dict")) return false;
  if (types.includes("list")) return true;
  const keys = Object.keys(schema);
  return keys.length > 0 && keys.every((key) => KNOWN_RULES.includes(RULE_ALIASES[key] ?? key) || TYPE_SAVER.test(key) || isCustomRule(key));
}
