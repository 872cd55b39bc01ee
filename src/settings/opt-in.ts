// The settings of the features everest has beyond Eve (docs/decisions.md §9): their types, their
// defaults (every one off, so an Eve settings file behaves as on Eve) and their start-up checks.
// One home for them, so types.ts, defaults.ts and validate.ts stay Eve's lists. How the features
// meet each other is docs/contracts.md.
import { bool, int, name, nullable, oneOf, text, type Check } from "./checks.ts";

/**
 * `PAGINATION_COUNT` / `pagination_count`: how a page's total is found (docs/paging.md,
 * docs/contracts.md §5). Unset (null), a resource counts as Eve does and offers no choice.
 */
export type CountStrategy = "exact" | "estimated" | "none";

export const COUNT_STRATEGIES: readonly CountStrategy[] = ["exact", "estimated", "none"];

/** The update operators a PATCH may carry where UPDATE_OPERATORS lists them. */
export const UPDATE_OPERATOR_NAMES = ["$set", "$unset", "$inc", "$mul", "$min", "$max", "$push", "$pull", "$addToSet", "$currentDate"] as const;

export type UpdateOperatorName = (typeof UPDATE_OPERATOR_NAMES)[number];

/** Switches that can differ per resource: each global is the default of its lower-case key. */
export interface OptInResourceSettings {
  /** Live changes: GET with `Accept: text/event-stream` streams the resource's changes. */
  change_feed?: boolean;
  /** Keyset paging: `_links.next` carries an opaque cursor instead of a page number. */
  pagination_cursor?: boolean;
  /** Set (to any strategy): the default count, which a client may change per request. */
  pagination_count?: CountStrategy | null;
  /** Update operators a PATCH may use on this resource; none by default. */
  update_operators?: UpdateOperatorName[];
  /** PATCH on the collection URL with `where`. */
  patch_by_filter?: boolean;
  /** DELETE on the collection URL with `where` deletes only what matches. */
  delete_by_filter?: boolean;
  /**
   * Whether an item PATCH made of update operators alone needs If-Match where ENFORCE_IF_MATCH
   * says so (true, Eve's rule for every PATCH); false lets such a PATCH skip it (docs/updates.md).
   */
  update_operators_enforce_if_match?: boolean;
  /** The most documents a write by filter may change; one matching more is refused whole. null: no limit. */
  by_filter_max_affected?: number | null;
}

export interface OptInSettings {
  CHANGE_FEED?: boolean;
  /** The change log keeps changes this many seconds (null: no time bound); docs/feed.md. */
  CHANGE_FEED_RETENTION?: number | null;
  /** …and at most this many changes per database (null: no count bound). */
  CHANGE_FEED_RETENTION_COUNT?: number | null;
  /** Seconds between heartbeat comments on an idle stream. */
  CHANGE_FEED_HEARTBEAT?: number;
  /** The `retry:` advice sent when a stream opens, in milliseconds. */
  CHANGE_FEED_RETRY?: number;
  /** Bytes of events a stream may hold for a reader that does not read, before it is dropped. */
  CHANGE_FEED_BUFFER?: number;
  /** Open streams per process; one more is answered 503 with Retry-After. */
  CHANGE_FEED_MAX_STREAMS?: number;
  /** Milliseconds between reads of the change log where the store cannot push (other processes' writes). */
  CHANGE_FEED_POLL?: number;
  /** The query parameter a browser's EventSource may carry its credentials in (docs/auth.md); null: none. */
  CHANGE_FEED_AUTH_PARAM?: string | null;
  PAGINATION_CURSOR?: boolean;
  PAGINATION_COUNT?: CountStrategy | null;
  /**
   * The key that seals cursors (docs/paging.md): instances given the same one accept each
   * other's cursors. A list rotates keys: the first seals, every one opens. Null: cursors are
   * sealed with a key everest derives, which detects damage but not forgery.
   */
  PAGINATION_CURSOR_SECRET?: string | string[] | null;
  /** The query parameter that carries a cursor. */
  PAGINATION_CURSOR_PARAM?: string;
  /** The query parameter that chooses a count strategy (also `Prefer: count=…`). */
  PAGINATION_COUNT_PARAM?: string;
  UPDATE_OPERATORS?: UpdateOperatorName[];
  PATCH_BY_FILTER?: boolean;
  DELETE_BY_FILTER?: boolean;
  UPDATE_OPERATORS_ENFORCE_IF_MATCH?: boolean;
  BY_FILTER_MAX_AFFECTED?: number | null;
  /** Where an orchestrator probes liveness and readiness; null: no such endpoint. */
  HEALTH_ENDPOINT?: string | null;
  /** Where Prometheus scrapes metrics; null: no such endpoint. */
  METRICS_ENDPOINT?: string | null;
  /** How long readiness waits for each database before it answers 503, in seconds. */
  HEALTH_TIMEOUT?: number;
  /** Where rate-limit counts live: this process ("memory"), the database, or a Redis server. */
  RATE_LIMIT_STORE?: string;
  /**
   * How long `App.close()` (SIGTERM, SIGINT) lets requests in flight finish before it closes
   * the databases, in seconds (docs/deploy.md).
   */
  SHUTDOWN_TIMEOUT?: number;
}

export const OPT_IN_DEFAULTS = {
  CHANGE_FEED: false,
  CHANGE_FEED_RETENTION: 86_400 as number | null,
  CHANGE_FEED_RETENTION_COUNT: 100_000 as number | null,
  CHANGE_FEED_HEARTBEAT: 15,
  CHANGE_FEED_RETRY: 2000,
  CHANGE_FEED_BUFFER: 1024 * 1024,
  CHANGE_FEED_MAX_STREAMS: 10_000,
  CHANGE_FEED_POLL: 500,
  CHANGE_FEED_AUTH_PARAM: "access_token" as string | null,
  PAGINATION_CURSOR: false,
  PAGINATION_COUNT: null as CountStrategy | null,
  PAGINATION_CURSOR_SECRET: null as string | string[] | null,
  PAGINATION_CURSOR_PARAM: "cursor",
  PAGINATION_COUNT_PARAM: "count",
  UPDATE_OPERATORS: [] as UpdateOperatorName[],
  PATCH_BY_FILTER: false,
  DELETE_BY_FILTER: false,
  UPDATE_OPERATORS_ENFORCE_IF_MATCH: true,
  BY_FILTER_MAX_AFFECTED: 1000 as number | null,
  HEALTH_ENDPOINT: null as string | null,
  METRICS_ENDPOINT: null as string | null,
  HEALTH_TIMEOUT: 1,
  RATE_LIMIT_STORE: "memory",
  SHUTDOWN_TIMEOUT: 10,
} satisfies OptInSettings;

/** The switches that cascade to a resource key of the same name in lower case. */
export const OPT_IN_CASCADING = [
  "CHANGE_FEED",
  "PAGINATION_CURSOR",
  "PAGINATION_COUNT",
  "UPDATE_OPERATORS",
  "PATCH_BY_FILTER",
  "DELETE_BY_FILTER",
  "UPDATE_OPERATORS_ENFORCE_IF_MATCH",
  "BY_FILTER_MAX_AFFECTED",
] as const;

const endpointPath: Check = nullable((v) =>
  typeof v === "string" && /^[A-Za-z0-9_.~-]+(\/[A-Za-z0-9_.~-]+)*$/.test(v.replace(/^\/+|\/+$/g, ""))
    ? null
    : "must be null or a path such as \"health\" (letters, digits, '-', '_', '.', '~' and '/')",
);

const updateOperators: Check = (v) => {
  if (!Array.isArray(v)) return `must be a list of update operators (${UPDATE_OPERATOR_NAMES.join(", ")})`;
  const bad = v.find((op) => !(UPDATE_OPERATOR_NAMES as readonly unknown[]).includes(op));
  return bad === undefined ? null : `has unsupported operator ${JSON.stringify(bad)} (supported: ${UPDATE_OPERATOR_NAMES.join(", ")})`;
};

/** A secret of at least 16 characters (shorter ones are guessable), or a non-empty list of them. */
const secret: Check = nullable((v) => {
  const keys = [v].flat();
  return keys.length > 0 && keys.every((key) => typeof key === "string" && key.length >= 16) ? null : "must be null, or a secret (or a list of them) of 16 characters or more";
});

const seconds = (max: number): Check => (v) =>
  typeof v === "number" && Number.isFinite(v) && v > 0 && v <= max ? null : `must be a number of seconds above 0, at most ${max}`;

const rateLimitStore: Check = (v) =>
  v === "memory" || v === "database" || (typeof v === "string" && /^rediss?:\/\/./.test(v))
    ? null
    : 'must be "memory", "database" or a redis:// URI';

export const OPT_IN_CHECKS: Record<keyof typeof OPT_IN_DEFAULTS, Check> = {
  CHANGE_FEED: bool,
  CHANGE_FEED_RETENTION: nullable(int(1)),
  CHANGE_FEED_RETENTION_COUNT: nullable(int(1)),
  CHANGE_FEED_HEARTBEAT: int(1, 3600),
  CHANGE_FEED_RETRY: int(0),
  CHANGE_FEED_BUFFER: int(1024),
  CHANGE_FEED_MAX_STREAMS: int(0),
  CHANGE_FEED_POLL: int(10, 60_000),
  CHANGE_FEED_AUTH_PARAM: nullable((v) => (text(v) === null && /^[A-Za-z0-9_.-]+$/.test(v as string) ? null : "must be null or a query parameter name (letters, digits, '_', '.', '-')")),
  PAGINATION_CURSOR: bool,
  PAGINATION_COUNT: nullable(oneOf([...COUNT_STRATEGIES])),
  PAGINATION_CURSOR_SECRET: secret,
  PAGINATION_CURSOR_PARAM: name,
  PAGINATION_COUNT_PARAM: name,
  UPDATE_OPERATORS: updateOperators,
  PATCH_BY_FILTER: bool,
  DELETE_BY_FILTER: bool,
  UPDATE_OPERATORS_ENFORCE_IF_MATCH: bool,
  BY_FILTER_MAX_AFFECTED: nullable(int(1)),
  HEALTH_ENDPOINT: endpointPath,
  METRICS_ENDPOINT: endpointPath,
  HEALTH_TIMEOUT: seconds(60),
  RATE_LIMIT_STORE: rateLimitStore,
  SHUTDOWN_TIMEOUT: seconds(3600),
};

/**
 * Start-up checks of paging that involve several settings of a resource (`def`, raw; `globals`
 * with their defaults): OPTIMIZE_PAGINATION_FOR_SPEED is Eve's "no count", which a strategy
 * that counts contradicts; and a cursor carries the values of the fields its page is sorted by,
 * so where fields have read rules only a secret key keeps them sealed (a derived key can be
 * forged, and a forged position probes a field's values).
 */
export function pagingProblems(at: string, def: Record<string, unknown>, globals: Record<string, unknown>): string[] {
  const get = (key: string) => (def[key] !== undefined ? def[key] : globals[key.toUpperCase()]);
  const count = get("pagination_count");
  return [
    get("optimize_pagination_for_speed") && count && count !== "none" && `${at} optimize_pagination_for_speed contradicts pagination_count '${count}'`,
    get("pagination_cursor") && globals.PAGINATION_CURSOR_SECRET == null && /"(allowed_read_roles|field_access)"/.test(JSON.stringify(def.schema ?? {}, (_, v) => (typeof v === "function" ? true : v)) ?? "") && `${at} has field read rules: cursors need PAGINATION_CURSOR_SECRET`,
  ].filter((problem): problem is string => typeof problem === "string");
}
