// Start-up validation of the settings (docs/decisions.md §1): a mistyped name or an unusable value
// fails here, once, with a message naming the setting, the resource and the closest valid name,
// instead of being ignored or failing at request time. Every problem found is reported at once.
// Checks Eve makes at start-up (eve/flaskapp.py: supported methods, roles as lists, auth_field
// not the id field, no meta fields or `$`/`.` in schema field names, data_relation naming a
// resource) are made too. Schema rules themselves are checked by src/validation.
import { compileDateFormat } from "../render/dates.ts";
import { CASCADING_GLOBALS, GLOBAL_DEFAULTS, prefixedDbKey, prefixedNames, RESOURCE_ONLY_KEYS, resourcePrefix, SETTING_ALIASES } from "./defaults.ts";
import { indexDefinition } from "./indexes.ts";
import { anything, bool, int, isObject, listOf, name, nullable, object, oneOf, oneOrMany, show, strings, text, type Check } from "./checks.ts";
import { converterRegex, urlProblem } from "./urls.ts";
import { nameClashes, relationFieldProblem, urlClashes } from "./consistency.ts";
import { datasourceFilterRefusal, queryWhitelist } from "../util/operators.ts";
import { OPT_IN_CHECKS, pagingProblems } from "./opt-in.ts";
import { fieldRuleProblems, schemaHoldsItems } from "./field-rules.ts";
import { PREFIXED_DB_KEYS, type Settings } from "./types.ts";
import { didYouMean } from "./suggest.ts";

export class SettingsError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems.length} problems in the settings:\n- ${problems.join("\n- ")}`);
    this.name = "SettingsError";
    this.problems = problems;
  }
}

/**
 * Settings of Eve 2.3.1 that everest accepts so that a settings.py ports as is, but does not
 * act on: response details it fixes (X-Total-Count), pymongo-only options, and
 * defaults of resource keys it reads per resource only.
 */
export const EVE_SETTINGS_IGNORED = [
  "STANDARD_ERRORS",
  "ITEM_CACHE_CONTROL",
  "ITEM_TITLE",
  "HEADER_TOTAL_COUNT",
  "INTERNAL_RESOURCE",
  "EXTRA_RESPONSE_FIELDS",
  "MONGO_CONNECT",
  "MONGO_AUTH_MECHANISM",
  "MONGO_AUTH_MECHANISM_PROPERTIES",
  "MONGO_DOCUMENT_CLASS",
] as const;

/** Eve < 0.8 switches, which Eve 2.3.1 still translates into RENDERERS. */
const REPLACED: Record<string, string> = {
  JSON: "replaced by RENDERERS in Eve 0.8: list the renderers to keep there",
  XML: "replaced by RENDERERS in Eve 0.8: list the renderers to keep there",
};

const RENDERER_NAMES = ["json", "xml", "eve.render.JSONRenderer", "eve.render.XMLRenderer"];
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
/** Eve's `supported_resource_methods` / `supported_item_methods`. */
const RESOURCE_METHODS = ["GET", "POST", "DELETE"];
const ITEM_METHODS = ["GET", "PATCH", "PUT", "DELETE"];
const WRITE_METHODS = ["DELETE", "POST", "PATCH", "PUT"];

// Checks particular to one setting; the general ones are in ./checks.ts.
const methods = (supported: string[]): Check => (v) => {
  if (!Array.isArray(v)) return `must be a list of methods (${supported.join(", ")})`;
  const bad = v.find((method) => typeof method !== "string" || !supported.includes(method));
  if (bad === undefined) return null;
  // A real method unsupported here is no typo; a misspelt one is.
  const hint = typeof bad === "string" && !HTTP_METHODS.includes(bad) ? didYouMean(bad, supported) : "";
  return `has unsupported method ${show(bad)}${hint} (supported: ${supported.join(", ")})`;
};
/** Eve's collection methods, and PATCH, which writes by filter where `patch_by_filter` is on (checked per resource). */
const resourceMethods: Check = (v) => methods(RESOURCE_METHODS)(Array.isArray(v) ? v.filter((method) => method !== "PATCH") : v);
const operators: Check = listOf((v) => (typeof v === "string" && v.startsWith("$") ? null : "operator"), "operators ($name)");
const regex: Check = (v) => {
  if (typeof v !== "string") return "must be a regular expression (a string)";
  try {
    new RegExp(v);
    return null;
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
};
const urlRule: Check = (v) => (typeof v === "string" ? regex(converterRegex(v)) : "must be a URL rule such as regex(\"[a-f0-9]{24}\")");
const dateFormat: Check = (v) => {
  if (typeof v !== "string") return "must be a strftime format";
  try {
    compileDateFormat(v);
    return null;
  } catch (error) {
    return `is not a usable date format: ${(error as Error).message}`;
  }
};
const renderers: Check = (v) => {
  if (!Array.isArray(v) || v.length === 0) return `must list at least one renderer (${RENDERER_NAMES.join(", ")})`;
  const known = (r: unknown) => typeof r === "string" && (RENDERER_NAMES.includes(r) || ["json", "xml"].includes(r.toLowerCase()));
  const bad = v.find((r) => !known(r));
  return bad === undefined ? null : `has unknown renderer ${show(bad)} (known: ${RENDERER_NAMES.join(", ")})`;
};
const rateLimit: Check = nullable((v) =>
  Array.isArray(v) && v.length === 2 && v.every((n) => Number.isInteger(n) && n > 0) ? null : "must be null or [requests, seconds]",
);
const sortSetting: Check = (v) => {
  if (typeof v === "string") return null;
  const pair = (p: unknown) => Array.isArray(p) && p.length === 2 && typeof p[0] === "string" && (p[1] === 1 || p[1] === -1);
  return Array.isArray(v) && v.every(pair) ? null : 'must be "-field,field" or a list of [field, 1 | -1] pairs';
};

/** Checks for globals whose default does not tell their type, or that need more than it. */
const GLOBAL_CHECKS: Record<string, Check> = {
  URL_PREFIX: text,
  API_VERSION: text,
  SERVER_NAME: nullable(text),
  CACHE_CONTROL: text,
  DATE_FORMAT: dateFormat,
  RESOURCE_METHODS: resourceMethods,
  ITEM_METHODS: methods(ITEM_METHODS),
  PUBLIC_METHODS: methods(HTTP_METHODS),
  PUBLIC_ITEM_METHODS: methods(HTTP_METHODS),
  OPLOG_METHODS: methods(WRITE_METHODS),
  OPLOG_CHANGE_METHODS: methods(WRITE_METHODS),
  PAGINATION_LIMIT: int(1),
  PAGINATION_DEFAULT: int(1),
  MAX_JSON_DEPTH: int(1),
  JSON_REQUEST_CONTENT_TYPES: strings,
  MAX_BODY_SIZE: int(1),
  VALIDATION_ERROR_STATUS: int(400, 599),
  DB_PORT: nullable(int(1, 65535)),
  DB_HOST: nullable(name),
  DB_NAME: nullable(name),
  RENDERERS: renderers,
  INFO: nullable(name),
  ITEM_URL: urlRule,
  MEDIA_URL: urlRule,
  X_DOMAINS: nullable(oneOrMany(text, "a string", "strings")),
  X_DOMAINS_RE: nullable(oneOrMany(regex, "a regular expression", "regular expressions")),
  X_HEADERS: nullable(oneOrMany(text, "a string", "strings")),
  X_EXPOSE_HEADERS: nullable(oneOrMany(text, "a string", "strings")),
  X_ALLOW_CREDENTIALS: nullable(bool),
  JSONP_ARGUMENT: nullable(name),
  MEDIA_BASE_URL: nullable(text),
  SCHEMA_ENDPOINT: nullable(name),
  OPENAPI: nullable(bool),
  OPENAPI_ENDPOINT: name,
  DOCS_ENDPOINT: nullable(name),
  OPLOG_ENDPOINT: nullable(name),
  AUTH: anything,
  AUTH_FIELD: nullable(name),
  DB_DRIVER: nullable(name),
  DB_URI: nullable(name),
  DB_USERNAME: nullable(text),
  DB_PASSWORD: nullable(text),
  DB_AUTH_SOURCE: nullable(name),
  DB_REPLICA_SET: nullable(name),
  DATA_API_KEY: nullable(text),
  DATA_API_SOURCE: nullable(name),
  JOURNAL_COMPACTION_RATIO: nullable((v) => (typeof v === "number" && Number.isFinite(v) && v > 1 ? null : "must be a number greater than 1")),
  JOURNAL_COMPACTION_MIN_SIZE: nullable(int(0)),
  DB_QUERY_BLACKLIST: operators,
  DB_QUERY_WHITELIST: operators,
  RATE_LIMIT_GET: rateLimit,
  RATE_LIMIT_POST: rateLimit,
  RATE_LIMIT_PATCH: rateLimit,
  RATE_LIMIT_DELETE: rateLimit,
  LOG_LEVEL: oneOf(["DEBUG", "INFO", "WARNING", "ERROR"]),
  ACCESS_LOG: nullable((v) => (v === false ? null : oneOf(["text", "json"])(v))),
  ...OPT_IN_CHECKS,
};

/** The check of a global: explicit, or implied by the type of its default. */
function globalCheck(key: string): Check {
  const explicit = GLOBAL_CHECKS[key];
  if (explicit) return explicit;
  const fallback = (GLOBAL_DEFAULTS as Record<string, unknown>)[key];
  if (typeof fallback === "boolean") return bool;
  if (typeof fallback === "number") return int(0);
  if (typeof fallback === "string") return name;
  if (Array.isArray(fallback)) return strings;
  if (isObject(fallback)) return object;
  return anything;
}

const datasourceKeys: Record<string, Check> = {
  source: name,
  // Eve's defaults of these are None: null is their absence.
  filter: nullable(object),
  projection: nullable((v) => (isObject(v) && Object.values(v).every((x) => x === 0 || x === 1) ? null : "must map fields to 0 or 1")),
  default_sort: nullable(sortSetting),
  aggregation: (v) =>
    isObject(v) && Array.isArray(v.pipeline) && v.pipeline.every(isObject) && (v.options === undefined || isObject(v.options))
      ? null
      : "must be {pipeline: [stages…], options?: {…}}",
};

/** Checks of resource keys without a global counterpart. */
const RESOURCE_CHECKS: Record<(typeof RESOURCE_ONLY_KEYS)[number], Check> = {
  url: (v) => name(v) ?? urlProblem(v as string),
  item_title: name,
  resource_title: name,
  additional_lookup: (v) => {
    if (!isObject(v) || typeof v.field !== "string" || !Object.keys(v).every((k) => k === "url" || k === "field")) {
      return 'must be {url: \'regex("…")\', field: name}';
    }
    // Without a url, the field must be an integer (Eve routes it with an int converter): checked with the schema.
    const url = v.url === undefined ? null : urlRule(v.url);
    return url && `has a 'url' that ${url}`;
  },
  authentication: anything,
  schema: (v) => (isObject(v) && Object.values(v).every(isObject) ? null : "must map field names to rule objects"),
  default_sort: sortSetting,
  embedded_fields: strings,
  datasource: object,
  internal_resource: bool,
  db_prefix: nullable(name),
  mongo_prefix: nullable(name),
  db_query_whitelist: operators,
  mongo_query_whitelist: operators,
  mongo_indexes: (v) => (isObject(v) && Object.values(v).every((entry) => indexDefinition(entry) !== null) ? null : "must map names to indexes: [[field, 1]], [[[field, 1]], options] or {key, options}"),
  mongo_write_concern: object,
  query_objectid_as_string: bool,
  normalize_dotted_fields: bool,
  extra_response_fields: strings,
  etag_ignore_fields: nullable(strings),
  versioning_field: name,
  rate_limit: anything,
  description: text,
  id_field: name,
};

const CASCADING_KEYS = new Map<string, string>(CASCADING_GLOBALS.map((key) => [key.toLowerCase(), key]));

// ---------------------------------------------------------------------------------------------

class Validator {
  readonly problems: string[] = [];
  private readonly domain: Record<string, unknown>;
  private readonly globals: Record<string, unknown>;

  constructor(private readonly settings: Record<string, unknown>) {
    this.domain = isObject(settings.DOMAIN) ? settings.DOMAIN : {};
    this.globals = { ...GLOBAL_DEFAULTS };
    for (const [key, value] of Object.entries(settings)) this.globals[SETTING_ALIASES[key] ?? key] = value;
  }

  private declaredPrefixes(): string[] {
    return Object.values(this.domain).flatMap((def) =>
      isObject(def) ? [def.db_prefix, def.mongo_prefix].filter((p): p is string => typeof p === "string") : [],
    );
  }

  run(): void {
    const known = new Set<string>([...Object.keys(GLOBAL_DEFAULTS), ...Object.keys(SETTING_ALIASES), ...EVE_SETTINGS_IGNORED]);
    const suggestions = [...Object.keys(GLOBAL_DEFAULTS), ...this.declaredPrefixes().flatMap((p) => PREFIXED_DB_KEYS.map((k) => `${p}_${k}`))];
    for (const [key, value] of Object.entries(this.settings)) {
      if (value === undefined) continue;
      if (REPLACED[key]) {
        this.problems.push(`Setting '${key}' was ${REPLACED[key]}`);
      } else if (key === "DOMAIN") {
        if (!isObject(value)) this.problems.push(`Setting 'DOMAIN' must be an object mapping resource names to definitions (got ${show(value)})`);
      } else if (!known.has(key)) {
        const prefixed = prefixedDbKey(key);
        if (prefixed) this.checkValue(`Setting '${key}'`, value, globalCheck(prefixed));
        else this.problems.push(`Unknown setting '${key}'${didYouMean(key, suggestions)}`);
      } else if (!(EVE_SETTINGS_IGNORED as readonly string[]).includes(key)) {
        this.checkValue(`Setting '${key}'`, value, globalCheck(SETTING_ALIASES[key] ?? key));
      }
    }
    for (const [resource, def] of Object.entries(this.domain)) {
      if (!isObject(def)) this.problems.push(`Resource '${resource}': the definition must be an object (got ${show(def)})`);
      else this.resource(resource, def);
    }
    this.problems.push(...urlClashes(this.domain), ...nameClashes(this.domain, this.globals));
  }

  private checkValue(label: string, value: unknown, check: Check): void {
    const problem = check(value);
    if (problem) this.problems.push(`${label} ${problem} (got ${show(value)})`);
  }

  private resource(resource: string, def: Record<string, unknown>): void {
    const at = `Resource '${resource}':`;
    const keys = [...CASCADING_KEYS.keys(), ...RESOURCE_ONLY_KEYS];
    for (const [key, value] of Object.entries(def)) {
      if (value === undefined) continue;
      const global = CASCADING_KEYS.get(key);
      if (global) this.checkValue(`${at} setting '${key}'`, value, globalCheck(global));
      else if (key in RESOURCE_CHECKS) this.checkValue(`${at} setting '${key}'`, value, RESOURCE_CHECKS[key as keyof typeof RESOURCE_CHECKS]);
      else this.problems.push(`${at} unknown setting '${key}'${didYouMean(key, keys)}`);
    }
    if (isObject(def.datasource)) {
      for (const [key, value] of Object.entries(def.datasource)) {
        const check = datasourceKeys[key];
        if (check) this.checkValue(`${at} datasource '${key}'`, value, check);
        else this.problems.push(`${at} unknown datasource setting '${key}'${didYouMean(key, Object.keys(datasourceKeys))}`);
      }
      const refusal = datasourceFilterRefusal(def.datasource.filter, queryWhitelist(def, this.globals.DB_QUERY_WHITELIST as string[]));
      if (refusal) this.problems.push(`${at} datasource 'filter' cannot be run: ${refusal}`);
    }

    this.problems.push(...pagingProblems(at, def, this.globals));
    const methods = def.resource_methods !== undefined ? def.resource_methods : this.globals.RESOURCE_METHODS;
    const byFilter = def.patch_by_filter !== undefined ? def.patch_by_filter : this.globals.PATCH_BY_FILTER;
    if (Array.isArray(methods) && methods.includes("PATCH") && byFilter !== true) {
      this.problems.push(`${at} PATCH on the collection needs patch_by_filter: it writes every document a 'where' matches (docs/updates.md)`);
    }

    const idField = (typeof def.id_field === "string" ? def.id_field : this.globals.ID_FIELD) as string;
    const authField = def.auth_field !== undefined ? def.auth_field : this.globals.AUTH_FIELD;
    if (authField === idField) this.problems.push(`${at} auth_field cannot be the id field '${idField}'`);
    // Writes set it as a top-level key and reads filter on it as a path: `meta.owner` would be neither's.
    if (typeof authField === "string" && authField.includes(".")) this.problems.push(`${at} auth_field '${authField}' must be a top-level field`);

    const prefixKey = def.db_prefix !== undefined ? "db_prefix" : "mongo_prefix";
    const prefix = resourcePrefix(def);
    if (typeof prefix === "string") {
      const present = (["DB_URI", "DB_NAME", "DB_HOST"] as const).some((key) => prefixedNames(prefix, key).some((name) => this.settings[name] !== undefined));
      if (!present) this.problems.push(`${at} ${prefixKey} '${prefix}' needs a ${prefix}_DB_URI, ${prefix}_DB_NAME or ${prefix}_DB_HOST setting`);
    }

    if (isObject(def.schema)) {
      this.checkAutomaticFields(at, def, idField);
      this.problems.push(...fieldRuleProblems(at, def, idField));
      this.fields(at, def.schema, "");
      const lookup = def.additional_lookup;
      if (isObject(lookup) && typeof lookup.field === "string" && !(lookup.field in def.schema)) {
        this.problems.push(`${at} additional_lookup field '${lookup.field}' is not in the schema${didYouMean(lookup.field, Object.keys(def.schema))}`);
      } else if (isObject(lookup) && lookup.url === undefined && (def.schema[lookup.field as string] as { type?: unknown }).type !== "integer") {
        this.problems.push(`${at} additional_lookup needs a 'url' unless its field is an integer`);
      }
    }
  }

  /** Eve handles these fields itself and refuses them in a schema. */
  private checkAutomaticFields(at: string, def: Record<string, unknown>, idField: string): void {
    const g = this.globals;
    const automatic = [g.DATE_CREATED, g.LAST_UPDATED, g.ETAG];
    if ((def.versioning ?? g.VERSIONING) === true) automatic.push(g.VERSION, g.LATEST_VERSION, idField + String(g.VERSION_ID_SUFFIX));
    if ((def.soft_delete ?? g.SOFT_DELETE) === true) automatic.push(g.DELETED);
    const schema = def.schema as Record<string, unknown>;
    const offenders = automatic.filter((field): field is string => typeof field === "string" && field in schema);
    if (offenders.length) this.problems.push(`${at} schema field(s) ${offenders.map((f) => `'${f}'`).join(", ")} are handled automatically and cannot be defined`);
  }

  /** A mapping of field names to rules, at `path` ("" for the resource's schema). */
  private fields(at: string, schema: Record<string, unknown>, path: string): void {
    for (const [field, rule] of Object.entries(schema)) {
      const fieldPath = path ? `${path}.${field}` : field;
      if (/[$.]/.test(field)) this.problems.push(`${at} field '${fieldPath}' cannot contain '$' or '.'`);
      if (isObject(rule)) this.rule(at, rule, fieldPath);
    }
  }

  /** One rule set: its data_relation, then every rule set nested in it. */
  private rule(at: string, rule: Record<string, unknown>, path: string): void {
    if (rule.data_relation !== undefined) this.relation(at, rule.data_relation, path);
    const schema = rule.schema;
    if (isObject(schema)) {
      if (schemaHoldsItems(rule)) this.rule(at, schema, path);
      else this.fields(at, schema, path);
    }
    for (const key of ["items", "anyof", "allof", "oneof", "noneof"]) {
      const list = rule[key];
      if (Array.isArray(list)) for (const member of list) if (isObject(member)) this.rule(at, member, path);
    }
    for (const key of ["keysrules", "valuesrules", "keyschema", "valueschema"]) {
      const member = rule[key];
      if (isObject(member)) this.rule(at, member, path);
    }
  }

  private relation(at: string, relation: unknown, path: string): void {
    const label = `${at} field '${path}': data_relation`;
    if (!isObject(relation)) {
      this.problems.push(`${label} must be an object such as {resource: "people"} (got ${show(relation)})`);
      return;
    }
    const allowed = ["resource", "field", "embeddable", "version"];
    for (const key of Object.keys(relation)) {
      if (!allowed.includes(key)) this.problems.push(`${label} has unknown key '${key}'${didYouMean(key, allowed)}`);
    }
    const target = relation.resource;
    if (typeof target !== "string") this.problems.push(`${label} needs 'resource', the name of a resource`);
    else if (!(target in this.domain)) this.problems.push(`${label} names unknown resource '${target}'${didYouMean(target, Object.keys(this.domain))}`);
    else if (typeof relation.field === "string") {
      const problem = relationFieldProblem(relation.field, target, this.domain[target], this.globals);
      if (problem) this.problems.push(`${label} ${problem}`);
    }
    if (relation.field !== undefined && typeof relation.field !== "string") this.problems.push(`${label} 'field' must be a field name`);
    for (const flag of ["embeddable", "version"]) {
      if (relation[flag] !== undefined && typeof relation[flag] !== "boolean") this.problems.push(`${label} '${flag}' must be true or false`);
    }
  }
}

/** Throws a SettingsError listing every problem of `settings`; returns when there is none. */
export function validateSettings(settings: Settings): void {
  if (!isObject(settings)) throw new SettingsError([`Settings must be an object (got ${show(settings)})`]);
  const validator = new Validator(settings);
  validator.run();
  if (validator.problems.length) throw new SettingsError(validator.problems);
}
