// The query strings of HATEOAS links, built as Eve builds them (eve/utils.py `querydef`,
// eve/methods/get.py `_pagination_links` and `_other_params`): parameters in a fixed order
// (max_results, where, sort, version, page, then the others), values as the client sent them
// and not percent-encoded (exchange 5: `people?where={"lastname":"Doe"}`), max_results only
// when not the default, page only past 1, embedded and projection dropped. Unlike Eve, the four
// characters that would change what a followed link asks (`%`, `&`, `#`, `+`) are escaped.
import type { Config, Resource } from "../settings/normalize.ts";
import type { Paging } from "./paging.ts";

export interface LinkQuery {
  maxResults: number;
  /** The page size that goes without saying (the resource's pagination default). */
  defaultMaxResults: number;
  where: string | null;
  sort: string | null;
  version: string | null;
  /** Parameters everest does not interpret, carried through (`show_deleted`, a JSONP callback …). */
  other: Array<[string, string]>;
}

/** A value as a link carries it: what a query string would read otherwise escaped, the rest as sent. */
const linkValue = (value: string): string => value.replace(/[%&#+]/g, encodeURIComponent);

/**
 * Eve's `querydef`: `?max_results=…&where=…&sort=…&version=…&page=…&…`, or "" when empty. A
 * cursor (docs/paging.md) takes the page number's place.
 */
export function querydef(query: LinkQuery, page: number, config: Config, cursor?: string): string {
  const parts: string[] = [];
  if (query.maxResults !== query.defaultMaxResults) parts.push(`${config.QUERY_MAX_RESULTS}=${query.maxResults}`);
  if (query.where) parts.push(`${config.QUERY_WHERE}=${linkValue(query.where)}`);
  // The sort Eve itself sets for version listings is not the client's and stays out.
  if (query.sort && !(query.version && query.sort === `[("${config.VERSION}", 1)]`)) parts.push(`${config.QUERY_SORT}=${linkValue(query.sort)}`);
  if (query.version) parts.push(`${config.VERSION_PARAM}=${linkValue(query.version)}`);
  if (cursor !== undefined) parts.push(`${config.PAGINATION_CURSOR_PARAM}=${cursor}`);
  else if (page > 1) parts.push(`${config.QUERY_PAGE}=${page}`);
  for (const [key, value] of query.other) parts.push(`${linkValue(key)}=${linkValue(value)}`);
  return parts.length ? "?" + parts.join("&") : "";
}

const ownParamsByConfig = new WeakMap<Config, Set<string>>();

/** The query parameters Eve reads itself, per configuration (every read's links ask). */
function ownParams(config: Config): Set<string> {
  let own = ownParamsByConfig.get(config);
  if (!own) {
    own = new Set([
      config.QUERY_WHERE, config.QUERY_SORT, config.QUERY_PAGE, config.QUERY_MAX_RESULTS,
      config.QUERY_EMBEDDED, config.QUERY_PROJECTION, config.VERSION_PARAM,
    ]);
    ownParamsByConfig.set(config, own);
  }
  return own;
}

/**
 * Eve's `_other_params`: every parameter but its own, values of a repeated key kept together.
 * `cursor`: the cursor parameter, which a cursor resource's links set themselves.
 */
export function otherParams(args: URLSearchParams, config: Config, cursor?: string): Array<[string, string]> {
  const own = ownParams(config);
  const grouped = new Map<string, string[]>();
  for (const [key, value] of args) {
    if (own.has(key) || key === cursor) continue;
    const values = grouped.get(key);
    if (values) values.push(value);
    else grouped.set(key, [value]);
  }
  return [...grouped].flatMap(([key, values]) => values.map((value): [string, string] => [key, value]));
}

/**
 * What the links of a read carry. where and sort only when the resource honours them (Eve drops
 * a `where` on a resource without allowed filters, a `sort` on one without sorting), version
 * only on a versioned resource.
 */
export function linkQuery(args: URLSearchParams, resource: Resource, config: Config, maxResults: number, cursor?: string): LinkQuery {
  return {
    maxResults,
    defaultMaxResults: resource.pagination_default,
    where: resource.allowed_filters.length ? args.get(config.QUERY_WHERE) : null,
    sort: resource.sorting ? args.get(config.QUERY_SORT) : null,
    version: resource.versioning ? args.get(config.VERSION_PARAM) : null,
    other: otherParams(args, config, cursor),
  };
}

export interface PaginationQueries {
  /** Appended to the self link: "" when nothing matched (Eve shows the bare link then). */
  self: string;
  next?: string;
  prev?: string;
  last?: string;
}

/**
 * The query strings of a collection's self/next/prev/last links (Eve's `_pagination_links`).
 * `total` is null when no count was made (OPTIMIZE_PAGINATION_FOR_SPEED): next is then always
 * offered and last never.
 */
export function paginationQueries(args: URLSearchParams, resource: Resource, config: Config, paging: Paging, total: number | null): PaginationQueries {
  const query = linkQuery(args, resource, config, paging.maxResults);
  const { page, maxResults } = paging;
  const queries: PaginationQueries = { self: total ? querydef(query, page, config) : "" };
  if (!resource.pagination) return queries;
  if (page * maxResults < (total ?? 0) || resource.optimize_pagination_for_speed) {
    queries.next = querydef(query, page + 1, config);
    if (total) queries.last = querydef(query, Math.ceil(total / maxResults), config);
  }
  if (page > 1) queries.prev = querydef(query, page - 1, config);
  return queries;
}
