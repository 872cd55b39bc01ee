// Eve 2.3.1's defaults (docs/decisions.md §2), under Eve's names. Resource keys default to the
// lower-case global of the same name; RESOURCE_KEY_DEFAULTS lists which globals cascade.
import { OPT_IN_CASCADING, OPT_IN_DEFAULTS } from "./opt-in.ts";
import { EVE_DB_SUFFIXES, PREFIXED_DB_KEYS, type PrefixedDbKey, type Settings } from "./types.ts";

export const GLOBAL_DEFAULTS = {
  DOMAIN: {},
  URL_PREFIX: "",
  API_VERSION: "",
  SERVER_NAME: null,
  DEBUG: false,
  DATE_FORMAT: "%a, %d %b %Y %H:%M:%S GMT",

  STATUS_OK: "OK",
  STATUS_ERR: "ERR",
  LAST_UPDATED: "_updated",
  DATE_CREATED: "_created",
  ISSUES: "_issues",
  STATUS: "_status",
  ERROR: "_error",
  ITEMS: "_items",
  LINKS: "_links",
  ETAG: "_etag",
  VERSION: "_version",
  DELETED: "_deleted",
  META: "_meta",
  ID_FIELD: "_id",

  VALIDATION_ERROR_STATUS: 422,
  VALIDATION_ERROR_AS_LIST: false,

  VERSIONING: false,
  VERSIONS: "_versions",
  VERSION_PARAM: "version",
  LATEST_VERSION: "_latest_version",
  VERSION_ID_SUFFIX: "_document",
  VERSION_DIFF_INCLUDE: [] as string[],

  CACHE_CONTROL: "",
  CACHE_EXPIRES: 0,

  X_DOMAINS: null,
  X_DOMAINS_RE: null,
  X_HEADERS: null,
  X_EXPOSE_HEADERS: null,
  X_ALLOW_CREDENTIALS: null,
  X_MAX_AGE: 21600,

  HATEOAS: true,
  IF_MATCH: true,
  ENFORCE_IF_MATCH: true,
  ALLOWED_FILTERS: ["*"],
  VALIDATE_FILTERS: false,
  SORTING: true,
  EMBEDDING: true,
  PROJECTION: true,
  PAGINATION: true,
  PAGINATION_LIMIT: 50,
  PAGINATION_DEFAULT: 25,
  OPTIMIZE_PAGINATION_FOR_SPEED: false,
  JSONP_ARGUMENT: null,
  SOFT_DELETE: false,
  SHOW_DELETED_PARAM: "show_deleted",
  BULK_ENABLED: true,
  BANDWIDTH_SAVER: true,

  OPLOG: false,
  OPLOG_NAME: "oplog",
  OPLOG_METHODS: ["DELETE", "POST", "PATCH", "PUT"],
  OPLOG_CHANGE_METHODS: ["DELETE", "PATCH", "PUT"],
  OPLOG_ENDPOINT: null,
  OPLOG_AUDIT: true,
  OPLOG_RETURN_EXTRA_FIELD: false,

  RESOURCE_METHODS: ["GET"],
  ITEM_METHODS: ["GET"],
  PUBLIC_METHODS: [],
  PUBLIC_ITEM_METHODS: [],
  ALLOWED_ROLES: [],
  ALLOWED_READ_ROLES: [],
  ALLOWED_WRITE_ROLES: [],
  ALLOWED_ITEM_ROLES: [],
  ALLOWED_ITEM_READ_ROLES: [],
  ALLOWED_ITEM_WRITE_ROLES: [],
  AUTH: null,
  AUTH_FIELD: null,
  ALLOW_UNKNOWN: false,
  TRANSPARENT_SCHEMA_RULES: false,

  ALLOW_OVERRIDE_HTTP_METHOD: true,
  ITEM_LOOKUP: true,
  ITEM_LOOKUP_FIELD: "_id",
  ITEM_URL: 'regex("[a-f0-9]{24}")',
  UPSERT_ON_PUT: true,
  MERGE_NESTED_DOCUMENTS: true,
  NORMALIZE_DOTTED_FIELDS: true,
  NORMALIZE_ON_PATCH: true,

  RENDERERS: ["json", "xml"],
  JSON_SORT_KEYS: false,
  JSON_REQUEST_CONTENT_TYPES: ["application/json"],
  INFO: null,

  MEDIA_ENDPOINT: "media",
  MEDIA_URL: 'regex("[a-f0-9]{24}")',
  MEDIA_BASE_URL: null,
  EXTENDED_MEDIA_INFO: [] as string[],
  RETURN_MEDIA_AS_BASE64_STRING: true,
  RETURN_MEDIA_AS_URL: false,
  MULTIPART_FORM_FIELDS_AS_JSON: false,
  AUTO_COLLAPSE_MULTI_KEYS: false,
  AUTO_CREATE_LISTS: false,
  ALLOW_CUSTOM_FIELDS_IN_GEOJSON: false,

  SCHEMA_ENDPOINT: null,

  // The OpenAPI document (src/openapi): null serves it where the home endpoint is public.
  OPENAPI: null,
  OPENAPI_ENDPOINT: "openapi.json",
  // The API explorer page rendering it; null: none (the Workers adapter's default).
  DOCS_ENDPOINT: "docs",

  QUERY_WHERE: "where",
  QUERY_PROJECTION: "projection",
  QUERY_SORT: "sort",
  QUERY_PAGE: "page",
  QUERY_MAX_RESULTS: "max_results",
  QUERY_EMBEDDED: "embedded",
  QUERY_AGGREGATION: "aggregate",

  DB_QUERY_BLACKLIST: ["$where", "$regex"],
  DB_QUERY_WHITELIST: [] as string[],
  DB_WRITE_CONCERN: { w: 1 },
  DB_DRIVER: null,
  DB_URI: null,
  // Unset unless given: any of them given selects the mongodb driver (src/data/pool.ts).
  DB_HOST: null,
  DB_PORT: null,
  DB_USERNAME: null,
  DB_PASSWORD: null,
  DB_NAME: null,
  DB_AUTH_SOURCE: null,
  DB_REPLICA_SET: null,
  DB_OPTIONS: {},
  // The data-api driver's key and dataSource; null leaves them to the driver (src/drivers/data-api).
  DATA_API_KEY: null,
  DATA_API_SOURCE: null,
  // When the memory driver compacts its journal; null leaves it to the driver (src/drivers/memory/compaction.ts).
  JOURNAL_COMPACTION_RATIO: null,
  JOURNAL_COMPACTION_MIN_SIZE: null,

  MAX_BODY_SIZE: 16 * 1024 * 1024,
  MAX_JSON_DEPTH: 64,

  RATE_LIMIT_GET: null,
  RATE_LIMIT_POST: null,
  RATE_LIMIT_PATCH: null,
  RATE_LIMIT_DELETE: null,

  LOG_LEVEL: "WARNING",
  ACCESS_LOG: null,

  // Beyond Eve, every one off (docs/decisions.md §9).
  ...OPT_IN_DEFAULTS,
} satisfies Settings;

/** Settings' named keys; Omit over the `<PREFIX>_DB_*` index signatures would drop them all. */
// A key an empty object satisfies is an index signature (a pattern such as `${string}_DB_URI`).
type NamedSettings = { [K in keyof Settings as {} extends Record<K, 1> ? never : K]: Settings[K] };

/** Every global, resolved: the user's value or the default. */
export type GlobalConfig = Required<Omit<NamedSettings, "DOMAIN">> & { [prefixed: string]: unknown };

/** Globals whose lower-case name is also a resource key defaulting to the global's value. */
export const CASCADING_GLOBALS = [
  "RESOURCE_METHODS",
  "ITEM_METHODS",
  "PUBLIC_METHODS",
  "PUBLIC_ITEM_METHODS",
  "ALLOWED_ROLES",
  "ALLOWED_READ_ROLES",
  "ALLOWED_WRITE_ROLES",
  "ALLOWED_ITEM_ROLES",
  "ALLOWED_ITEM_READ_ROLES",
  "ALLOWED_ITEM_WRITE_ROLES",
  "CACHE_CONTROL",
  "CACHE_EXPIRES",
  "AUTH_FIELD",
  "ALLOW_UNKNOWN",
  "TRANSPARENT_SCHEMA_RULES",
  "NORMALIZE_ON_PATCH",
  "SORTING",
  "PAGINATION",
  "PAGINATION_LIMIT",
  "PAGINATION_DEFAULT",
  "PROJECTION",
  "EMBEDDING",
  "HATEOAS",
  "SOFT_DELETE",
  "VERSIONING",
  "BANDWIDTH_SAVER",
  "BULK_ENABLED",
  "ALLOWED_FILTERS",
  "VALIDATE_FILTERS",
  "OPTIMIZE_PAGINATION_FOR_SPEED",
  "MERGE_NESTED_DOCUMENTS",
  "UPSERT_ON_PUT",
  "ITEM_LOOKUP",
  "ITEM_LOOKUP_FIELD",
  "ITEM_URL",
  "IF_MATCH",
  "ENFORCE_IF_MATCH",
  ...OPT_IN_CASCADING,
] as const;

/** Resource-only keys (no global counterpart) and their defaults. */
export const RESOURCE_ONLY_KEYS = [
  "url",
  "item_title",
  "resource_title",
  "additional_lookup",
  "authentication",
  "schema",
  "default_sort",
  "embedded_fields",
  "datasource",
  "internal_resource",
  "db_prefix",
  "mongo_prefix",
  "db_query_whitelist",
  "mongo_query_whitelist",
  "mongo_indexes",
  "mongo_write_concern",
  "query_objectid_as_string",
  "normalize_dotted_fields",
  "extra_response_fields",
  "etag_ignore_fields",
  "versioning_field",
  "rate_limit",
  "description",
  "id_field",
] as const;

/** Eve's MONGO_* spellings are accepted as aliases of the DB_* settings. */
export const SETTING_ALIASES: Record<string, string> = {
  MONGO_HOST: "DB_HOST",
  MONGO_PORT: "DB_PORT",
  MONGO_USERNAME: "DB_USERNAME",
  MONGO_PASSWORD: "DB_PASSWORD",
  MONGO_DBNAME: "DB_NAME",
  MONGO_NAME: "DB_NAME",
  MONGO_URI: "DB_URI",
  MONGO_AUTH_SOURCE: "DB_AUTH_SOURCE",
  MONGO_REPLICA_SET: "DB_REPLICA_SET",
  MONGO_OPTIONS: "DB_OPTIONS",
  MONGO_QUERY_BLACKLIST: "DB_QUERY_BLACKLIST",
  MONGO_QUERY_WHITELIST: "DB_QUERY_WHITELIST",
  MONGO_WRITE_CONCERN: "DB_WRITE_CONCERN",
};

/**
 * The prefix of a resource's database settings, or null for the unprefixed ones. Eve's default
 * mongo_prefix is "MONGO", naming the unprefixed MONGO_* settings: spelt out, it means none.
 */
export function resourcePrefix(def: { db_prefix?: unknown; mongo_prefix?: unknown }): unknown {
  if (def.db_prefix !== undefined) return def.db_prefix;
  return def.mongo_prefix === "MONGO" ? null : (def.mongo_prefix ?? null);
}

/** The names `key` may have under `prefix`: `<PREFIX>_DB_NAME`, `<PREFIX>_MONGO_NAME`, `<PREFIX>_DBNAME`. */
export function prefixedNames(prefix: string, key: PrefixedDbKey): string[] {
  const names = [`${prefix}_${key}`, `${prefix}_${key.replace(/^DB_/, "MONGO_")}`];
  const eve = (EVE_DB_SUFFIXES as Partial<Record<PrefixedDbKey, string>>)[key];
  if (eve) names.push(`${prefix}_${eve}`);
  return names;
}

const SUFFIXES = new Map<string, PrefixedDbKey>(
  PREFIXED_DB_KEYS.flatMap((key) => {
    const bare = key.replace(/^DB_/, "");
    const pairs: Array<[string, PrefixedDbKey]> = [[`DB_${bare}`, key], [`MONGO_${bare}`, key]];
    const eve = (EVE_DB_SUFFIXES as Partial<Record<PrefixedDbKey, string>>)[key];
    if (eve) pairs.push([eve, key]);
    return pairs;
  }),
);
const PREFIXED_NAME = new RegExp(`^[A-Za-z][A-Za-z0-9_]*?_(${[...SUFFIXES.keys()].sort((a, b) => b.length - a.length).join("|")})$`);

/**
 * The database setting a prefixed name stands for (`TENANT_A_DB_URI`, `MONGO1_DBNAME` → DB_URI,
 * DB_NAME), or null. Any prefix is accepted: a db_prefix or setDbPrefix may name it only at
 * request time (docs/decisions.md §7).
 */
export function prefixedDbKey(name: string): PrefixedDbKey | null {
  const suffix = PREFIXED_NAME.exec(name)?.[1];
  return suffix ? SUFFIXES.get(suffix)! : null;
}
