// Start-up validation of a resource schema (Cerberus validates a schema against its rules'
// own schemas; Eve adds checks of its own). Problems name the resource, the field and the
// rule, with the closest valid name where a name is mistyped.
import type { Config, Resource } from "../settings/normalize.ts";
import type { FieldSchema, Schema } from "../settings/types.ts";
import { compileDateFormat } from "../render/dates.ts";
import { BUILTIN_TYPE_NAMES, builtinTypes } from "./datatypes.ts";
import { customRule, type ValidatorExtensions } from "./extensions.ts";
import { pyRepr } from "./pyrepr.ts";
import { didYouMean } from "../settings/suggest.ts";
import { compilePattern } from "./rules.ts";
import { expandDefinition, KNOWN_RULES, LOGIC_RULES, RULE_ALIASES, schemaIsForItems } from "./vocabulary.ts";
import { isPlainObject } from "../util/objects.ts";


interface Problem {
  field: string;
  rule?: string;
  message: string;
  /** Reported even with transparent_schema_rules: the schema cannot work as written. */
  fatal: boolean;
}

type ValueCheck = (value: unknown) => string | undefined;

const isBoolean: ValueCheck = (v) => (typeof v === "boolean" ? undefined : "must be a boolean");
const isCount: ValueCheck = (v) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? undefined : "must be a non-negative integer");
const isList: ValueCheck = (v) => (Array.isArray(v) ? undefined : "must be a list");
const isString: ValueCheck = (v) => (typeof v === "string" ? undefined : "must be a string");
const isOrderable: ValueCheck = (v) => (typeof v === "number" || typeof v === "string" || v instanceof Date ? undefined : "must be a number, a string or a date");
const isNames: ValueCheck = (v) => (typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string")) ? undefined : "must be a field name or a list of field names");
const anything: ValueCheck = () => undefined;
const isRoles: ValueCheck = (v) => (Array.isArray(v) && v.every((x) => typeof x === "string" && x !== "") ? undefined : "must be a list of role names");

const BOOLEAN_RULES = ["required", "readonly", "nullable", "empty", "unique", "unique_to_user", "unique_within_resource", "allow_unknown", "require_all", "purge_unknown", "versioned"];

const VALUE_CHECKS: Record<string, ValueCheck> = {
  ...Object.fromEntries(BOOLEAN_RULES.map((rule) => [rule, isBoolean])),
  minlength: isCount,
  maxlength: isCount,
  min: isOrderable,
  max: isOrderable,
  allowed: isList,
  forbidden: isList,
  rename: isString,
  excludes: isNames,
  dependencies: (v) => (typeof v === "string" || isPlainObject(v) || (Array.isArray(v) && v.every((x) => typeof x === "string")) ? undefined : "must be a field name, a list of them or a mapping"),
  contains: anything,
  default: anything,
  meta: anything,
  // Documentation only (OpenAPI), never checked against documents.
  description: isString,
  // Field rules, enforced by access control (docs/contracts.md) and checked with the settings
  // (src/settings/field-rules.ts), never by validation.
  allowed_read_roles: isRoles,
  allowed_write_roles: isRoles,
  field_access: anything,
};

class SchemaInspector {
  readonly problems: Problem[] = [];
  private readonly typeNames: string[];
  private readonly ruleNames: string[];
  /** The built-in types, made once per schema for the checks of numeric bounds. */
  private types?: ReturnType<typeof builtinTypes>;

  constructor(
    private readonly resource: Resource,
    private readonly config: Config,
    private readonly ext: ValidatorExtensions,
  ) {
    this.typeNames = [...BUILTIN_TYPE_NAMES, ...Object.keys(ext.types ?? {})];
    this.ruleNames = [...KNOWN_RULES, ...Object.keys(RULE_ALIASES), ...Object.keys(ext.rules ?? {})];
  }

  private problem(field: string, message: string, rule?: string, fatal = false): void {
    this.problems.push({ field, rule, message, fatal });
  }

  /** A mapping of fields; returns it with the rules that cannot be used left out. */
  mapping(schema: unknown, prefix: string, atRoot: boolean): Schema {
    const out: Schema = {};
    if (!isPlainObject(schema)) {
      this.problem(prefix || "(root)", `'${pyRepr(schema)}' is not a schema, must be a dict`, "schema", true);
      return out;
    }
    for (const [name, definition] of Object.entries(schema)) {
      const field = prefix ? `${prefix}.${name}` : name;
      if (name.includes("$") || name.includes(".")) this.problem(field, "a field name cannot contain '$' or '.'", undefined, true);
      if (atRoot && this.automaticFields().includes(name)) this.problem(field, "this field is handled automatically and cannot be in the schema", undefined, true);
      out[name] = this.definition(definition, field) as FieldSchema;
    }
    return out;
  }

  private automaticFields(): string[] {
    const c = this.config;
    const fields = [c.DATE_CREATED, c.LAST_UPDATED, c.ETAG];
    if (this.resource.versioning) fields.push(c.VERSION, c.LATEST_VERSION, this.resource.id_field + c.VERSION_ID_SUFFIX);
    if (this.resource.soft_delete) fields.push(c.DELETED);
    return fields;
  }

  /** One field's rules (also a list item's, or an `*of` definition's). */
  definition(raw: unknown, field: string): Record<string, unknown> {
    if (!isPlainObject(raw)) {
      this.problem(field, `schema definition for field '${field}' must be a dict`, undefined, true);
      return {};
    }
    const definition = expandDefinition(raw);
    const out: Record<string, unknown> = {};
    for (const [rule, value] of Object.entries(definition)) {
      const checked = this.rule(rule, value, field, definition);
      if (checked.ok) out[rule] = checked.value;
    }
    return out;
  }

  private bad(field: string, rule: string, message: string, fatal = false): { ok: false } {
    this.problem(field, message, rule, fatal);
    return { ok: false };
  }

  private rule(rule: string, value: unknown, field: string, definition: Record<string, unknown>): { ok: true; value: unknown } | { ok: false } {
    const ok = (v: unknown = value) => ({ ok: true as const, value: v });
    const must = (check: ValueCheck) => {
      const problem = check(value);
      return problem ? this.bad(field, rule, `rule '${rule}' ${problem}, got ${pyRepr(value)}`) : ok();
    };
    if ((rule === "min" || rule === "max") && !this.numericBound(value, definition.type)) {
      return this.bad(field, rule, `rule '${rule}' must be a number or a numeric string for a field of type ${pyRepr(definition.type)}, got ${pyRepr(value)}`);
    }
    if (VALUE_CHECKS[rule]) return must(VALUE_CHECKS[rule]);
    switch (rule) {
      case "type":
        return this.type(value, field);
      case "regex": {
        if (typeof value !== "string") return must(isString);
        try {
          compilePattern(value);
          return ok();
        } catch (error) {
          return this.bad(field, rule, `rule 'regex' is not a valid regular expression: ${pyRepr(value)} (${(error as Error).message})`);
        }
      }
      case "schema": {
        if (!isPlainObject(value)) return this.bad(field, rule, `rule 'schema' must be a dict, got ${pyRepr(value)}`);
        const forItems = schemaIsForItems(definition.type, value, (key) => !!this.ext.rules?.[key]);
        return ok(forItems ? this.definition(value, `${field}[]`) : this.mapping(value, field, false));
      }
      case "items":
        if (!Array.isArray(value)) return must(isList);
        return ok(value.map((d, i) => this.definition(d, `${field}[${i}]`)));
      case "keysrules":
      case "valuesrules":
        return isPlainObject(value) ? ok(this.definition(value, `${field}{${rule === "keysrules" ? "keys" : "values"}}`)) : this.bad(field, rule, `rule '${rule}' must be a dict, got ${pyRepr(value)}`);
      case "coerce":
      case "rename_handler":
        return this.functions(rule, value, field, this.ext.coercers, "coercer", true);
      case "check_with":
        return this.functions(rule, value, field, this.ext.validators, "validator", true);
      case "default_setter":
        return this.functions(rule, value, field, this.ext.defaultSetters, "default setter", false);
      case "data_relation":
        return this.relation(value, field);
    }
    if ((LOGIC_RULES as readonly string[]).includes(rule)) {
      if (!Array.isArray(value) || !value.every(isPlainObject)) return this.bad(field, rule, `rule '${rule}' must be a list of rule definitions, got ${pyRepr(value)}`);
      return ok(value.map((d, i) => this.definition(d, `${field} (${rule} definition ${i})`)));
    }
    const custom = this.ext.rules?.[rule];
    if (custom) {
      const problem = customRule(custom).check?.(value);
      return problem ? this.bad(field, rule, `rule '${rule}' ${problem}`) : ok();
    }
    return this.bad(field, rule, `unknown rule '${rule}'${didYouMean(rule, this.ruleNames)}`);
  }

  /**
   * Whether a bound fits a numeric field: a number, or a string its type converts into one (as
   * compile.ts converts it). Any other string is compared with numbers never, so never enforced.
   */
  private numericBound(value: unknown, type: unknown): boolean {
    const types = (this.types ??= builtinTypes({ dateFormat: this.config.DATE_FORMAT, allowCustomGeoFields: false }));
    const names = (Array.isArray(type) ? type : [type]).map((name) => (typeof name === "string" && Object.hasOwn(types, name) ? types[name]! : null));
    const numeric = names.length > 0 && names.every((t) => t?.json === "integer" || t?.json === "number");
    return !numeric || typeof value !== "string" || names.some((t) => typeof t!.convert?.(value) === "number");
  }

  private type(value: unknown, field: string): { ok: true; value: unknown } | { ok: false } {
    const names = Array.isArray(value) ? value : [value];
    for (const name of names) {
      if (typeof name !== "string") return this.bad(field, "type", `rule 'type' must be a type name or a list of them, got ${pyRepr(value)}`);
      if (!this.typeNames.includes(name)) return this.bad(field, "type", `rule 'type': unknown type '${name}'${didYouMean(name, this.typeNames)}`);
    }
    return { ok: true, value };
  }

  private functions(rule: string, value: unknown, field: string, registry: Record<string, unknown> | undefined, kind: string, list: boolean) {
    const entries = list && Array.isArray(value) ? value : [value];
    for (const entry of entries) {
      if (typeof entry === "function") continue;
      if (typeof entry !== "string") return this.bad(field, rule, `rule '${rule}' must be a function or the name of a registered ${kind}, got ${pyRepr(entry)}`);
      if (!registry?.[entry]) {
        return this.bad(field, rule, `rule '${rule}': no ${kind} named '${entry}' is registered${didYouMean(entry, Object.keys(registry ?? {}))}`, true);
      }
    }
    return { ok: true as const, value };
  }

  private relation(value: unknown, field: string) {
    if (!isPlainObject(value)) return this.bad(field, "data_relation", `rule 'data_relation' must be a dict, got ${pyRepr(value)}`, true);
    const resources = Object.keys(this.config.DOMAIN);
    const target = value.resource;
    if (typeof target !== "string") return this.bad(field, "data_relation", "rule 'data_relation' needs a 'resource'", true);
    if (!resources.includes(target)) {
      return this.bad(field, "data_relation", `rule 'data_relation': unknown resource '${target}'${didYouMean(target, resources)}`, true);
    }
    for (const [key, v] of Object.entries(value)) {
      const problem =
        key === "resource" ? undefined
        : key === "field" ? isString(v)
        : key === "embeddable" || key === "version" ? isBoolean(v)
        : `is not a data_relation key${didYouMean(key, ["resource", "field", "embeddable", "version"])}`;
      if (problem) return this.bad(field, "data_relation", `rule 'data_relation': '${key}' ${problem}`);
    }
    return { ok: true as const, value };
  }
}

function describe(resource: Resource, problem: Problem): string {
  return `Schema of resource '${resource.name}', field '${problem.field}': ${problem.message}`;
}

/**
 * The schema as it can be compiled: with transparent_schema_rules, unknown rules and rules
 * with unusable values are left out instead of refused.
 */
export function usableSchema(resource: Resource, config: Config, ext: ValidatorExtensions = {}): Schema {
  const inspector = new SchemaInspector(resource, config, ext);
  const schema = inspector.mapping(resource.schema, "", true);
  const refused = inspector.problems.filter((p) => p.fatal || !resource.transparent_schema_rules);
  if (refused.length) throw new Error(refused.map((p) => describe(resource, p)).join("\n"));
  return schema;
}

/** Start-up validation of a resource's schema; throws an Error listing every problem. */
export function checkSchemaDefinition(resource: Resource, config: Config, ext: ValidatorExtensions = {}): void {
  try {
    compileDateFormat(config.DATE_FORMAT);
  } catch (error) {
    throw new Error(`DATE_FORMAT: ${(error as Error).message}`);
  }
  usableSchema(resource, config, ext);
}
