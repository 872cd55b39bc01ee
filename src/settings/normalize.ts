// Settings in, a fully resolved Config out: every default applied, every resource normalised
// into a `Resource` once at start-up so that no request ever looks a default up again.
import type { Filter, Projection, Sort } from "../drivers/types.ts";
import { CASCADING_GLOBALS, GLOBAL_DEFAULTS, resourcePrefix, SETTING_ALIASES, type GlobalConfig } from "./defaults.ts";
import { oplogDefinition } from "./oplog.ts";
import { converterRegex, parseUrlParams, displayUrl, resourceUrl, type PathParam } from "./urls.ts";
import { compileFieldRules, withSiblingRules, type FieldRuleTree } from "./field-rules.ts";
import type { CountStrategy, UpdateOperatorName } from "./opt-in.ts";
import type { HttpMethod, ResourceSettings, Schema, Settings, SortSetting } from "./types.ts";

export interface Resource {
  name: string;
  /** As configured, converters included (`lists/<regex("…"):list_id>/items`). */
  url: string;
  /** Named regex segments of `url`, in order (sub-resources). */
  urlParams: PathParam[];
  resource_title: string;
  item_title: string;
  schema: Schema;
  resource_methods: HttpMethod[];
  item_methods: HttpMethod[];
  public_methods: HttpMethod[];
  public_item_methods: HttpMethod[];
  allowed_roles: string[];
  allowed_read_roles: string[];
  allowed_write_roles: string[];
  allowed_item_roles: string[];
  allowed_item_read_roles: string[];
  allowed_item_write_roles: string[];
  authentication: unknown;
  auth_field: string | null;
  cache_control: string;
  cache_expires: number;
  allow_unknown: boolean;
  transparent_schema_rules: boolean;
  normalize_on_patch: boolean;
  sorting: boolean;
  pagination: boolean;
  pagination_limit: number;
  pagination_default: number;
  projection: boolean;
  embedding: boolean;
  embedded_fields: string[];
  hateoas: boolean;
  soft_delete: boolean;
  versioning: boolean;
  bandwidth_saver: boolean;
  bulk_enabled: boolean;
  allowed_filters: string[];
  validate_filters: boolean;
  optimize_pagination_for_speed: boolean;
  merge_nested_documents: boolean;
  upsert_on_put: boolean;
  if_match: boolean;
  enforce_if_match: boolean;
  /** Field rules (docs/contracts.md §4), compiled once; null for a resource without any. */
  field_rules: FieldRuleTree | null;
  /** Beyond Eve (docs/decisions.md §9, docs/contracts.md); all off by default. */
  change_feed: boolean;
  pagination_cursor: boolean;
  /** Null: Eve's count, no choice per request (docs/paging.md). */
  pagination_count: CountStrategy | null;
  /**
   * Whether collection pages are read with cursors or count strategies (methods/get-paged.ts)
   * rather than as Eve reads them: a paginated resource, not an aggregation, with either on.
   */
  paged: boolean;
  update_operators: UpdateOperatorName[];
  patch_by_filter: boolean;
  delete_by_filter: boolean;
  update_operators_enforce_if_match: boolean;
  by_filter_max_affected: number | null;
  item_lookup: boolean;
  item_lookup_field: string;
  /** The field that names a document in its URL, links and Location (Eve's `id_field`). */
  id_field: string;
  /** Regex source of the item segment. */
  item_url: string;
  additional_lookup: { url: string; field: string } | null;
  datasource: {
    source: string;
    filter: Filter | null;
    /** Applied when the client sends no projection; null serves documents as stored. */
    projection: Projection | null;
    default_sort: Sort | null;
    aggregation: { pipeline: Record<string, unknown>[] } | null;
  };
  internal_resource: boolean;
  db_prefix: string | null;
  mongo_indexes: Record<string, unknown>;
  query_objectid_as_string: boolean;
  etag_ignore_fields: string[] | null;
  extra_response_fields: string[];
  /** The raw definition, for features that read keys of their own. */
  raw: ResourceSettings;
}

export interface Config extends GlobalConfig {
  DOMAIN: Record<string, Resource>;
  /** Path prefix every route sits under: `/<URL_PREFIX>/<API_VERSION>`, or "". */
  basePath: string;
  /** Where the OpenAPI document and the explorer page are served (under basePath), or null. */
  openApiPath: string | null;
  docsPath: string | null;
}

/** `-a,b`, `[("a", -1)]` or a list of pairs → ordered pairs. */
export function sortSettingToPairs(value: SortSetting | null | undefined): Sort | null {
  if (value == null) return null;
  if (Array.isArray(value)) return value.map(([field, dir]) => [field, dir === -1 ? -1 : 1]);
  return value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => (part.startsWith("-") ? [part.slice(1), -1] : [part, 1]));
}

/** Resolves aliases and defaults of the globals; DOMAIN is left to normalizeResource. */
export function resolveGlobals(settings: Settings): GlobalConfig {
  const resolved: Record<string, unknown> = { ...GLOBAL_DEFAULTS };
  for (const [key, value] of Object.entries(settings)) {
    if (key === "DOMAIN" || value === undefined) continue;
    resolved[SETTING_ALIASES[key] ?? key] = value;
  }
  return resolved as unknown as GlobalConfig;
}

/** Every cascading global under its resource-level name (`PAGINATION` → `pagination`). */
type Cascaded = { [K in (typeof CASCADING_GLOBALS)[number] as Lowercase<K>]: GlobalConfig[K] };

/** Eve's cascade: a resource's own value wins over the global one. */
function cascade(def: ResourceSettings, globals: GlobalConfig): Cascaded {
  const out: Record<string, unknown> = {};
  for (const key of CASCADING_GLOBALS) {
    const own = def[key.toLowerCase() as keyof ResourceSettings];
    out[key.toLowerCase()] = own !== undefined ? own : globals[key];
  }
  return out as Cascaded;
}

export function normalizeResource(name: string, def: ResourceSettings, globals: GlobalConfig): Resource {
  const empty = Object.keys(def).length === 0;
  const cascaded = cascade(def, globals);
  const url = resourceUrl(name, def.url);
  const schema: Schema = { ...(def.schema ?? {}) };
  const allowUnknown = cascaded.allow_unknown as boolean;
  const datasource = def.datasource ?? {};
  const aggregation = datasource.aggregation ?? null;
  const idField = def.id_field ?? globals.ID_FIELD;
  const autoFields = [idField, globals.DATE_CREATED, globals.LAST_UPDATED, globals.ETAG];
  const versioning = cascaded.versioning as boolean;
  const softDelete = cascaded.soft_delete as boolean;
  if (versioning) autoFields.push(globals.VERSION);
  if (softDelete) autoFields.push(globals.DELETED);

  // Eve serves only schema fields (plus meta fields) unless unknown fields are allowed.
  let projection: Projection | null = datasource.projection ? { ...datasource.projection } : null;
  if (!projection && !allowUnknown) {
    projection = {};
    for (const field of [...Object.keys(schema), ...autoFields]) projection[field] = 1;
    const authField = cascaded.auth_field;
    if (typeof authField === "string") projection[authField] = 1;
  }

  const defaultSort = sortSettingToPairs(datasource.default_sort ?? def.default_sort);

  return {
    ...cascaded,
    name,
    url,
    urlParams: parseUrlParams(url),
    resource_title: def.resource_title ?? url,
    item_title: def.item_title ?? capitalize(name.replace(/s+$/, "")),
    schema,
    resource_methods: empty ? ["GET"] : aggregation ? ["GET"] : (cascaded.resource_methods as HttpMethod[]),
    item_methods: empty ? ["GET"] : aggregation ? [] : (cascaded.item_methods as HttpMethod[]),
    authentication: def.authentication !== undefined ? def.authentication : globals.AUTH,
    auth_field: (cascaded.auth_field as string | null) ?? null,
    allow_unknown: allowUnknown,
    embedded_fields: (def.embedded_fields as string[] | undefined) ?? [],
    soft_delete: softDelete,
    versioning,
    paged: !aggregation && (cascaded.pagination as boolean) && (cascaded.pagination_cursor || cascaded.pagination_count !== null),
    id_field: idField,
    item_url: converterRegex(cascaded.item_url as string),
    additional_lookup: def.additional_lookup ? additionalLookup(def.additional_lookup, schema) : null,
    datasource: {
      source: datasource.source ?? name,
      filter: datasource.filter ?? null,
      projection,
      default_sort: defaultSort,
      aggregation,
    },
    internal_resource: def.internal_resource === true,
    db_prefix: resourcePrefix(def) as string | null,
    mongo_indexes: (def.mongo_indexes as Record<string, unknown> | undefined) ?? {},
    query_objectid_as_string: def.query_objectid_as_string === true,
    etag_ignore_fields: (def.etag_ignore_fields as string[] | undefined) ?? null,
    extra_response_fields: (def.extra_response_fields as string[] | undefined) ?? [],
    field_rules: compileFieldRules(name, schema),
    raw: def,
  };
}

/**
 * The log's entries carry the changes `c` of the resource their `r` names: the log's rules are
 * those resources' rules, applied to `c` (null when none of the resources it logs has any).
 */
function oplogRules(log: Resource, resources: Resource[]): FieldRuleTree | null {
  const changes = new Map<string, FieldRuleTree>();
  for (const resource of resources) {
    if (resource !== log && !resource.internal_resource && resource.field_rules) changes.set(displayUrl(resource.url), resource.field_rules);
  }
  return changes.size ? { resource: log.name, fields: new Map(), dynamic: true, changes } : null;
}

/** An integer field is routed by Werkzeug's int converter whatever the url says, as Eve does. */
function additionalLookup(lookup: { url?: string; field: string }, schema: Schema): { url: string; field: string } {
  const url = schema[lookup.field]?.type === "integer" ? "\\d+" : converterRegex(lookup.url!);
  return { url, field: lookup.field };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
}

export function basePathOf(globals: GlobalConfig): string {
  const parts = [globals.URL_PREFIX, globals.API_VERSION]
    .map((p) => String(p ?? "").replace(/^\/+|\/+$/g, ""))
    .filter(Boolean);
  return parts.length ? "/" + parts.join("/") : "";
}

/** Settings → Config. Start-up validation (settings/validate.ts) runs before this. */
export function normalizeSettings(settings: Settings): Config {
  const globals = resolveGlobals(settings);
  const domain: Record<string, Resource> = {};
  for (const [name, def] of Object.entries(settings.DOMAIN ?? {})) {
    domain[name] = normalizeResource(name, def ?? {}, globals);
  }
  const compiled = new Map(Object.values(domain).map((resource) => [resource, resource.field_rules]));
  for (const resource of Object.values(domain)) {
    const siblings = Object.values(domain).filter((other) => other !== resource && compiled.get(other) && !other.datasource.aggregation && other.datasource.source === resource.datasource.source && other.db_prefix === resource.db_prefix);
    if (siblings.length) resource.field_rules = withSiblingRules(resource.field_rules, resource.name, resource.schema, siblings.map((other) => compiled.get(other)!));
  }
  if (globals.OPLOG) {
    const name = globals.OPLOG_NAME;
    const log = (domain[name] = normalizeResource(name, oplogDefinition(globals, settings.DOMAIN?.[name]), globals));
    if (globals.OPLOG_AUDIT) log.field_rules = oplogRules(log, Object.values(domain));
  }
  // By default the document is as public as the home endpoint, which lists the resources anyway.
  const homeIsPublic = globals.AUTH == null || globals.AUTH === false || globals.PUBLIC_METHODS.includes("GET");
  const openApiPath = (globals.OPENAPI ?? homeIsPublic) ? globals.OPENAPI_ENDPOINT : null;
  // Media types are case-insensitive (RFC 9110 §8.3.1); payload.ts compares the request's lowercased.
  const jsonTypes = globals.JSON_REQUEST_CONTENT_TYPES.map((type) => type.toLowerCase());
  return { ...globals, JSON_REQUEST_CONTENT_TYPES: jsonTypes, DOMAIN: domain, basePath: basePathOf(globals), openApiPath, docsPath: openApiPath === null ? null : globals.DOCS_ENDPOINT };
}
