// HATEOAS links with Eve's titles and hrefs: hrefs are relative to the API entry point and
// taken from the request path (so sub-resource segments come out filled in), query strings are
// built as Eve's `querydef` builds them (values not percent-encoded).
import type { RequestContext } from "../context.ts";
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";

export interface Link {
  title: string;
  href: string;
}

/** The request path relative to the entry point, without the item segment. */
export function resourceLink(ctx: RequestContext): string {
  let path = ctx.url.pathname.replace(/^\/+|\/+$/g, "");
  if (ctx.endpoint.kind === "item") path = path.slice(0, Math.max(0, path.lastIndexOf("/")));
  const base = ctx.app.config.basePath.replace(/^\/+/, "");
  if (base && (path === base || path.startsWith(base + "/"))) path = path.slice(base.length).replace(/^\/+/, "");
  return path;
}

/** Where a resource's items live: this request's path for its own resource, else its url. */
export function resourceHref(ctx: RequestContext, resource: Resource): string {
  return ctx.resource === resource && ctx.endpoint.kind !== "home" ? resourceLink(ctx) : resource.url;
}

export function documentLink(ctx: RequestContext, resource: Resource, id: unknown, version?: unknown): Link {
  const versionPart = version !== undefined && version !== null ? `?version=${version}` : "";
  return { title: resource.item_title, href: `${resourceHref(ctx, resource)}/${idString(id)}${versionPart}` };
}

export function homeLink(): Link {
  return { title: "home", href: "/" };
}

function idString(id: unknown): string {
  return typeof id === "object" && id !== null && "toHexString" in id ? (id as { toHexString(): string }).toHexString() : String(id);
}

export interface PageRequest {
  page: number;
  maxResults: number;
  where: string | null;
  sort: string | null;
  version?: string | null;
}

/** Eve's `querydef`: the query string of a collection link. */
export function querydef(config: Config, req: PageRequest, page: number, other: Array<[string, string]>): string {
  let sortPart = req.sort ? `&sort=${req.sort}` : "";
  if (req.version && req.sort !== null && req.sort === `[("${config.VERSION}", 1)]`) sortPart = "";
  const parts = [
    req.maxResults !== config.PAGINATION_DEFAULT ? `max_results=${req.maxResults}` : "",
    req.where ? `&where=${req.where}` : "",
    sortPart,
    req.version ? `&version=${req.version}` : "",
    page > 1 ? `&page=${page}` : "",
    ...other.map(([k, v]) => `&${k}=${v}`),
  ];
  const query = parts.join("").replace(/^&+/, "");
  return query ? `?${query}` : "";
}

/** Query parameters that links carry through unchanged (Eve's `_other_params`). */
export function otherParams(ctx: RequestContext): Array<[string, string]> {
  const config = ctx.app.config;
  const own = new Set([config.QUERY_WHERE, config.QUERY_SORT, config.QUERY_PAGE, config.QUERY_MAX_RESULTS, config.QUERY_EMBEDDED, config.QUERY_PROJECTION]);
  return [...ctx.args].filter(([key]) => !own.has(key));
}

/** Eve's `_pagination_links` for a collection (or a version listing when itemId is given). */
export function paginationLinks(ctx: RequestContext, req: PageRequest, total: number | null, itemId?: unknown): Record<string, Link> {
  const resource = ctx.resource!;
  const config = ctx.app.config;
  const other = otherParams(ctx).filter(([key]) => key !== config.VERSION_PARAM);
  const base = resourceLink(ctx);
  const q = (page: number) => querydef(config, req, page, other);
  const links: Record<string, Link> = { parent: homeLink(), self: { title: resource.resource_title, href: base } };
  if (itemId !== undefined) {
    links.self = documentLink(ctx, resource, itemId);
    links.collection = { title: resource.resource_title, href: base + q(req.page) };
    if (req.version === "all" || req.version === "diffs") {
      links.parent = { title: resource.resource_title, href: base };
      links.collection = documentLink(ctx, resource, itemId);
    }
  }
  if (total) links.self = { ...links.self, href: links.self!.href + q(req.page) };
  if (resource.pagination) {
    const stem = links.self!.href.split("?")[0]!;
    const optimize = resource.optimize_pagination_for_speed;
    if (req.page * req.maxResults < (total ?? 0) || optimize) {
      links.next = { title: "next page", href: stem + q(req.page + 1) };
      if (total) links.last = { title: "last page", href: stem + q(Math.ceil(total / req.maxResults)) };
    }
    if (req.page > 1) links.prev = { title: "previous page", href: stem + q(req.page - 1) };
  }
  return links;
}

/** `_links.related` for data_relation fields present in a document. */
export function relatedLinks(ctx: RequestContext, resource: Resource, document: Doc): Record<string, Link | Link[]> | null {
  const config = ctx.app.config;
  const related: Record<string, Link | Link[]> = {};
  for (const [field, rules] of Object.entries(resource.schema)) {
    const relation = rules?.data_relation ?? (rules?.type === "list" ? (rules.schema as { data_relation?: typeof rules.data_relation } | undefined)?.data_relation : undefined);
    if (!relation?.resource || !(field in document)) continue;
    const target = config.DOMAIN[relation.resource];
    if (!target) continue;
    const link = (value: unknown): Link => {
      if (relation.version && value && typeof value === "object" && !(value instanceof Date) && !("toHexString" in value)) {
        const ref = value as Doc;
        return documentLink(ctx, target, ref[relation.field ?? config.ID_FIELD], ref[config.VERSION]);
      }
      const id = value && typeof value === "object" && !("toHexString" in value) ? (value as Doc)[relation.field ?? config.ID_FIELD] : value;
      return documentLink(ctx, target, id);
    };
    const value = document[field];
    if (value === null || value === undefined) continue;
    related[field] = Array.isArray(value) ? value.map(link) : link(value);
  }
  return Object.keys(related).length ? related : null;
}
