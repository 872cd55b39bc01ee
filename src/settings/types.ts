// User-facing settings types. Names are Eve's so that a settings.py ports almost verbatim:
// upper-case globals, lower-case resource keys.
import type { OptInResourceSettings, OptInSettings } from "./opt-in.ts";
import type { FieldAccessHook } from "./field-rules.ts";

/** Database settings a db prefix may have its own of (`<PREFIX>_DB_URI`, …), by their unprefixed name. */
export const PREFIXED_DB_KEYS = ["DB_URI", "DB_HOST", "DB_PORT", "DB_USERNAME", "DB_PASSWORD", "DB_NAME", "DB_AUTH_SOURCE", "DB_REPLICA_SET", "DB_OPTIONS", "DB_DRIVER"] as const;
export type PrefixedDbKey = (typeof PREFIXED_DB_KEYS)[number];

/** Eve's own spelling after a mongo_prefix (`MONGO1_DBNAME`, `MONGO1_HOST`): no `DB_`, `DBNAME` for the name. */
export const EVE_DB_SUFFIXES = {
  DB_URI: "URI",
  DB_HOST: "HOST",
  DB_PORT: "PORT",
  DB_USERNAME: "USERNAME",
  DB_PASSWORD: "PASSWORD",
  DB_NAME: "DBNAME",
  DB_AUTH_SOURCE: "AUTH_SOURCE",
  DB_REPLICA_SET: "REPLICA_SET",
  DB_OPTIONS: "OPTIONS",
} as const satisfies Partial<Record<PrefixedDbKey, string>>;

type Unprefixed<K> = K extends `DB_${infer Suffix}` ? Suffix : never;

/** `TENANT_A_DB_URI`, `TENANT_A_MONGO_NAME`, `MONGO1_DBNAME` …: any prefix, since a setDbPrefix may name it at request time. */
export type PrefixedDatabaseSetting =
  | `${string}_DB_${Unprefixed<PrefixedDbKey>}`
  | `${string}_MONGO_${Unprefixed<PrefixedDbKey>}`
  | `${string}_${(typeof EVE_DB_SUFFIXES)[keyof typeof EVE_DB_SUFFIXES]}`;

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

export type FieldType =
  | "string"
  | "integer"
  | "number"
  | "float"
  | "boolean"
  | "list"
  | "dict"
  | "datetime"
  | "date"
  | "objectid"
  | "media"
  | "decimal128"
  | "decimal"
  | "dbref"
  | "binary"
  | "set"
  | "point"
  | "multipoint"
  | "linestring"
  | "multilinestring"
  | "polygon"
  | "multipolygon"
  | "geometrycollection"
  | "feature"
  | "featurecollection"
  | keyof CustomTypes;

/**
 * The names of custom types (HandlerOptions.validation.types), added by augmenting this interface:
 *   declare module "everest-api" { interface CustomTypes { phone: true } }
 */
export interface CustomTypes {}

/**
 * Custom rules (HandlerOptions.validation.rules) and their values, added by augmenting this interface:
 *   declare module "everest-api" { interface CustomRules { isodd?: boolean } }
 */
export interface CustomRules {}

type LogicRule = "allof" | "anyof" | "noneof" | "oneof";

export interface DataRelation {
  resource: string;
  field?: string;
  embeddable?: boolean;
  version?: boolean;
}

/** One field's rules, Cerberus/Eve style. Unknown keys are refused at start-up unless transparent. */
export interface FieldSchema extends CustomRules {
  type?: FieldType | FieldType[];
  required?: boolean;
  readonly?: boolean;
  nullable?: boolean;
  empty?: boolean;
  minlength?: number;
  maxlength?: number;
  min?: number | string;
  max?: number | string;
  allowed?: unknown[];
  forbidden?: unknown[];
  regex?: string;
  contains?: unknown;
  items?: FieldSchema[];
  schema?: FieldSchema | Record<string, FieldSchema>;
  keysrules?: FieldSchema;
  valuesrules?: FieldSchema;
  keyschema?: FieldSchema;
  valueschema?: FieldSchema;
  dependencies?: string | string[] | Record<string, unknown>;
  excludes?: string | string[];
  anyof?: FieldSchema[];
  allof?: FieldSchema[];
  noneof?: FieldSchema[];
  oneof?: FieldSchema[];
  coerce?: string | ((value: unknown) => unknown) | Array<string | ((value: unknown) => unknown)>;
  default?: unknown;
  default_setter?: string | ((document: Record<string, unknown>) => unknown);
  unique?: boolean;
  unique_to_user?: boolean;
  unique_within_resource?: boolean;
  data_relation?: DataRelation;
  allow_unknown?: boolean;
  validator?: unknown;
  check_with?: unknown;
  require_all?: boolean;
  purge_unknown?: boolean;
  meta?: unknown;
  /** Feeds the OpenAPI document; otherwise ignored. */
  description?: string;
  versioned?: boolean;
  rename?: string;
  rename_handler?: unknown;
  /** Field rules (docs/contracts.md): the roles that may read / write this field; absent: everyone who may use the resource. */
  allowed_read_roles?: string[];
  allowed_write_roles?: string[];
  /** Field rules: decides per user, document and method what role lists cannot (docs/auth.md). */
  field_access?: FieldAccessHook;
  /** Cerberus' type savers: `anyof_type: ["string", "integer"]` … */
  [typeSaver: `${LogicRule}_${string}`]: unknown[] | undefined;
}

export type Schema = Record<string, FieldSchema>;

export type SortSetting = Array<[string, 1 | -1]> | string;

export interface DatasourceSettings {
  source?: string;
  /** null, Eve's default, is the same as absent. */
  filter?: Record<string, unknown> | null;
  projection?: Record<string, 0 | 1> | null;
  default_sort?: SortSetting | null;
  aggregation?: { pipeline: Record<string, unknown>[] };
}

/** A resource definition in DOMAIN. Every global listed here is the default of its lower-case key. */
export interface ResourceSettings extends OptInResourceSettings {
  url?: string;
  item_title?: string;
  resource_title?: string;
  item_url?: string;
  item_lookup?: boolean;
  item_lookup_field?: string;
  /** The field that names a document (defaults to ID_FIELD); stored next to the database's `_id`. */
  id_field?: string;
  /** `url` may be left out for an integer field (routed as digits). */
  additional_lookup?: { url?: string; field: string };
  resource_methods?: HttpMethod[];
  item_methods?: HttpMethod[];
  public_methods?: HttpMethod[];
  public_item_methods?: HttpMethod[];
  allowed_roles?: string[];
  allowed_item_roles?: string[];
  allowed_read_roles?: string[];
  allowed_write_roles?: string[];
  allowed_item_read_roles?: string[];
  allowed_item_write_roles?: string[];
  authentication?: unknown;
  auth_field?: string | null;
  cache_control?: string;
  cache_expires?: number;
  schema?: Schema;
  allow_unknown?: boolean;
  transparent_schema_rules?: boolean;
  normalize_on_patch?: boolean;
  sorting?: boolean;
  default_sort?: SortSetting;
  pagination?: boolean;
  pagination_limit?: number;
  pagination_default?: number;
  projection?: boolean;
  embedding?: boolean;
  embedded_fields?: string[];
  hateoas?: boolean;
  datasource?: DatasourceSettings;
  internal_resource?: boolean;
  soft_delete?: boolean;
  versioning?: boolean;
  db_prefix?: string | null;
  mongo_prefix?: string | null;
  db_query_whitelist?: string[];
  mongo_query_whitelist?: string[];
  mongo_indexes?: Record<string, unknown>;
  mongo_write_concern?: Record<string, unknown>;
  bandwidth_saver?: boolean;
  bulk_enabled?: boolean;
  allowed_filters?: string[];
  validate_filters?: boolean;
  optimize_pagination_for_speed?: boolean;
  query_objectid_as_string?: boolean;
  merge_nested_documents?: boolean;
  upsert_on_put?: boolean;
  versioning_field?: string;
  rate_limit?: unknown;
  if_match?: boolean;
  enforce_if_match?: boolean;
  normalize_dotted_fields?: boolean;
  etag_ignore_fields?: string[];
  extra_response_fields?: string[];
  /** Feeds the OpenAPI document; otherwise ignored. */
  description?: string;
}

/**
 * Eve's per-method limits (RATE_LIMIT_GET, …): the RATE_LIMIT_ settings that hold a
 * `[requests, seconds]` window, derived from Settings below so the four names live there alone.
 */
export type RateLimitSetting = {
  [K in keyof Settings]-?: K extends `RATE_LIMIT_${string}` ? (Settings[K] extends [number, number] | null | undefined ? K : never) : never;
}[keyof Settings];

export interface Settings extends OptInSettings {
  DOMAIN?: Record<string, ResourceSettings>;
  URL_PREFIX?: string;
  API_VERSION?: string;
  SERVER_NAME?: string | null;
  RESOURCE_METHODS?: HttpMethod[];
  ITEM_METHODS?: HttpMethod[];
  PUBLIC_METHODS?: HttpMethod[];
  PUBLIC_ITEM_METHODS?: HttpMethod[];
  ALLOWED_ROLES?: string[];
  ALLOWED_ITEM_ROLES?: string[];
  ALLOWED_READ_ROLES?: string[];
  ALLOWED_WRITE_ROLES?: string[];
  ALLOWED_ITEM_READ_ROLES?: string[];
  ALLOWED_ITEM_WRITE_ROLES?: string[];
  AUTH?: unknown;
  AUTH_FIELD?: string | null;
  ALLOW_UNKNOWN?: boolean;
  TRANSPARENT_SCHEMA_RULES?: boolean;
  VALIDATION_ERROR_STATUS?: number;
  VALIDATION_ERROR_AS_LIST?: boolean;
  DATE_FORMAT?: string;
  ITEM_URL?: string;
  ITEM_LOOKUP?: boolean;
  ITEM_LOOKUP_FIELD?: string;
  ALLOWED_FILTERS?: string[];
  VALIDATE_FILTERS?: boolean;
  DB_QUERY_BLACKLIST?: string[];
  /** Operators accepted in `where` besides Eve's list (Eve's MONGO_QUERY_WHITELIST). */
  DB_QUERY_WHITELIST?: string[];
  SORTING?: boolean;
  PAGINATION?: boolean;
  PAGINATION_LIMIT?: number;
  PAGINATION_DEFAULT?: number;
  OPTIMIZE_PAGINATION_FOR_SPEED?: boolean;
  PROJECTION?: boolean;
  EMBEDDING?: boolean;
  HATEOAS?: boolean;
  IF_MATCH?: boolean;
  ENFORCE_IF_MATCH?: boolean;
  NORMALIZE_DOTTED_FIELDS?: boolean;
  NORMALIZE_ON_PATCH?: boolean;
  BANDWIDTH_SAVER?: boolean;
  BULK_ENABLED?: boolean;
  UPSERT_ON_PUT?: boolean;
  MERGE_NESTED_DOCUMENTS?: boolean;
  ALLOW_OVERRIDE_HTTP_METHOD?: boolean;
  CACHE_CONTROL?: string;
  CACHE_EXPIRES?: number;
  X_DOMAINS?: string | string[] | null;
  X_DOMAINS_RE?: string | string[] | null;
  X_HEADERS?: string | string[] | null;
  X_EXPOSE_HEADERS?: string | string[] | null;
  X_ALLOW_CREDENTIALS?: boolean | null;
  X_MAX_AGE?: number;
  JSONP_ARGUMENT?: string | null;
  RENDERERS?: string[];
  /** Sorts the keys of JSON bodies, as Flask's JSON_SORT_KEYS. */
  JSON_SORT_KEYS?: boolean;
  /** Content types read as JSON payloads. */
  JSON_REQUEST_CONTENT_TYPES?: string[];
  /** The home endpoint's key for a `{server, version, api_version}` block; null for none. */
  INFO?: string | null;
  SOFT_DELETE?: boolean;
  DELETED?: string;
  SHOW_DELETED_PARAM?: string;
  VERSIONING?: boolean;
  VERSION?: string;
  VERSIONS?: string;
  VERSION_PARAM?: string;
  LATEST_VERSION?: string;
  VERSION_ID_SUFFIX?: string;
  VERSION_DIFF_INCLUDE?: string[];
  ID_FIELD?: string;
  DATE_CREATED?: string;
  LAST_UPDATED?: string;
  ETAG?: string;
  LINKS?: string;
  ITEMS?: string;
  META?: string;
  STATUS?: string;
  STATUS_OK?: string;
  STATUS_ERR?: string;
  ISSUES?: string;
  ERROR?: string;
  QUERY_WHERE?: string;
  QUERY_SORT?: string;
  QUERY_PAGE?: string;
  QUERY_MAX_RESULTS?: string;
  QUERY_EMBEDDED?: string;
  QUERY_PROJECTION?: string;
  QUERY_AGGREGATION?: string;
  RETURN_MEDIA_AS_BASE64_STRING?: boolean;
  RETURN_MEDIA_AS_URL?: boolean;
  MEDIA_BASE_URL?: string | null;
  MEDIA_ENDPOINT?: string;
  MEDIA_URL?: string;
  EXTENDED_MEDIA_INFO?: string[];
  MULTIPART_FORM_FIELDS_AS_JSON?: boolean;
  AUTO_COLLAPSE_MULTI_KEYS?: boolean;
  AUTO_CREATE_LISTS?: boolean;
  ALLOW_CUSTOM_FIELDS_IN_GEOJSON?: boolean;
  OPLOG?: boolean;
  OPLOG_NAME?: string;
  OPLOG_METHODS?: string[];
  OPLOG_ENDPOINT?: string | null;
  OPLOG_AUDIT?: boolean;
  OPLOG_CHANGE_METHODS?: string[];
  OPLOG_RETURN_EXTRA_FIELD?: boolean;
  SCHEMA_ENDPOINT?: string | null;
  /** Serve the OpenAPI document: true, false, or null (default) where the home endpoint is public. */
  OPENAPI?: boolean | null;
  /** Where the OpenAPI document is served, under URL_PREFIX/API_VERSION. */
  OPENAPI_ENDPOINT?: string;
  /** Where the API explorer page is served (when the document is); null turns it off. */
  DOCS_ENDPOINT?: string | null;
  MAX_BODY_SIZE?: number;
  MAX_JSON_DEPTH?: number;
  DB_DRIVER?: string | null;
  DB_URI?: string | null;
  DB_HOST?: string | null;
  DB_PORT?: number | null;
  DB_USERNAME?: string | null;
  DB_PASSWORD?: string | null;
  DB_NAME?: string | null;
  DB_AUTH_SOURCE?: string | null;
  /** The replica set to connect to (`replicaSet` in the URI everest builds). */
  DB_REPLICA_SET?: string | null;
  DB_OPTIONS?: Record<string, unknown>;
  DB_WRITE_CONCERN?: Record<string, unknown>;
  /** Eve's MONGO_* spellings of the DB_* settings. */
  MONGO_URI?: string | null;
  MONGO_HOST?: string | null;
  MONGO_PORT?: number | null;
  MONGO_USERNAME?: string | null;
  MONGO_PASSWORD?: string | null;
  MONGO_DBNAME?: string | null;
  MONGO_NAME?: string | null;
  MONGO_AUTH_SOURCE?: string | null;
  MONGO_REPLICA_SET?: string | null;
  MONGO_OPTIONS?: Record<string, unknown>;
  MONGO_QUERY_BLACKLIST?: string[];
  MONGO_QUERY_WHITELIST?: string[];
  MONGO_WRITE_CONCERN?: Record<string, unknown>;
  /** Eve settings accepted so that a settings.py ports as is, without effect (src/settings/validate.ts). */
  STANDARD_ERRORS?: unknown;
  ITEM_CACHE_CONTROL?: unknown;
  ITEM_TITLE?: unknown;
  HEADER_TOTAL_COUNT?: unknown;
  INTERNAL_RESOURCE?: unknown;
  EXTRA_RESPONSE_FIELDS?: unknown;
  MONGO_CONNECT?: unknown;
  MONGO_AUTH_MECHANISM?: unknown;
  MONGO_AUTH_MECHANISM_PROPERTIES?: unknown;
  MONGO_DOCUMENT_CLASS?: unknown;
  DATA_API_KEY?: string | null;
  DATA_API_SOURCE?: string | null;
  /** The memory driver compacts its journal when it is longer than this many times the live data (> 1; default 2)… */
  JOURNAL_COMPACTION_RATIO?: number | null;
  /** …and than this many bytes (default 4 MiB). */
  JOURNAL_COMPACTION_MIN_SIZE?: number | null;
  RATE_LIMIT_GET?: [number, number] | null;
  RATE_LIMIT_POST?: [number, number] | null;
  RATE_LIMIT_PATCH?: [number, number] | null;
  RATE_LIMIT_DELETE?: [number, number] | null;
  DEBUG?: boolean;
  LOG_LEVEL?: "DEBUG" | "INFO" | "WARNING" | "ERROR";
  /** One line per request: "text", "json" (JSON lines) or off (false / null, the default; `everest serve` turns "text" on). */
  ACCESS_LOG?: "text" | "json" | false | null;
  /** Database settings under a prefix (db_prefix, setDbPrefix): `TENANT_A_DB_URI`, Eve's `MONGO1_DBNAME` … */
  [prefixed: PrefixedDatabaseSetting]: unknown;
}
