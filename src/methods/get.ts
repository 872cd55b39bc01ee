// GET and HEAD on collections and items (Eve's eve/methods/get.py).
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter, Projection, Sort } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { combineFilters } from "../data/layer.ts";
import { embedDocuments, resolveEmbeddedFields } from "../read/embedding.ts";
import { homeLink, paginationLinks, resourceLink } from "../render/hateoas.ts";
import { parseWhere } from "../query/where.ts";
import { parseSort } from "../query/sort.ts";
import { resolveProjection } from "../query/projection.ts";
import { pageMeta, parsePaging, type Paging } from "../query/paging.ts";
import { etagMatches } from "../render/etag.ts";
import { parseHttpDate } from "../render/http-date.ts";
import { isSoftDeleted, softDeletedBody } from "../read/soft-delete.ts";
import { itemEtag, requestedVersion, storedVersion, versionLinks } from "../read/versions.ts";
import { versionListing } from "../endpoints/versions.ts";
import { getAggregation } from "../endpoints/aggregation.ts";
import { buildResponseDocument, lastUpdated } from "../read/document.ts";
import { readsWhole, withholdsFrom } from "../read/visible.ts";
import { fieldMask, type Mask } from "../auth/field-masks.ts";
import type { Reply } from "../render/reply.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** The parsed query of a collection read. */
export interface ReadQuery {
  filter: Filter;
  paging: Paging;
  skip: number;
  limit: number;
}

type ParsedQuery = ReadQuery & { sort: Sort | null };

/**
 * A promise only for a `where` or a `sort` that may be in Python's syntax, whose parsers are
 * imported on first use (src/query/where.ts, src/query/sort.ts). The where's 400 still comes
 * before the sort's, and the sort's before the paging's.
 */
export function parseReadQuery(config: Config, ctx: CallScope, hidden: Mask | null): ParsedQuery | Promise<ParsedQuery> {
  const rawWhere = ctx.args.get(config.QUERY_WHERE);
  const filter = rawWhere ? parseWhere(rawWhere, ctx.resource!, config, hidden) : {};
  return filter instanceof Promise ? filter.then((parsed) => withSort(config, ctx, parsed, hidden)) : withSort(config, ctx, filter, hidden);
}

function withSort(config: Config, ctx: CallScope, filter: Filter, hidden: Mask | null): ParsedQuery | Promise<ParsedQuery> {
  const rawSort = ctx.args.get(config.QUERY_SORT);
  const sort = rawSort !== null ? parseSort(rawSort, ctx.resource!, hidden) : null;
  return sort instanceof Promise ? sort.then((parsed) => readQuery(config, ctx, filter, parsed)) : readQuery(config, ctx, filter, sort);
}

function readQuery(config: Config, ctx: CallScope, filter: Filter, clientSort: Sort | null): ParsedQuery {
  const resource = ctx.resource!;
  // No client sort (absent, empty, `[]`, sorting off) falls back to the resource's default.
  const sort = clientSort ?? (resource.sorting ? resource.datasource.default_sort : null);
  const paging = parsePaging(ctx.args, resource, config);
  return {
    filter,
    sort,
    paging,
    skip: resource.pagination ? (paging.page - 1) * paging.maxResults : 0,
    limit: paging.maxResults,
  };
}

/**
 * The projection a read sends to the store and, for a caller whose documents are read whole
 * (src/read/visible.ts), the client's one to apply once the document is built. A 400 for a
 * projection naming a field the caller may not read.
 */
export function readProjection(config: Config, ctx: CallScope, resource: Resource, hidden: Mask | null): { projection: Projection | null; project?: Projection } {
  const asked = resolveProjection(resource.projection ? ctx.args.get(config.QUERY_PROJECTION) : null, resource, config, hidden);
  if (!readsWhole(ctx, resource)) return { projection: asked };
  const whole = resolveProjection(null, resource, config);
  return asked && asked !== whole ? { projection: whole, project: asked } : { projection: whole };
}

/**
 * Whether a read's documents may share the store's values below their top level
 * (FindQuery.shared): they only become the response's body, and nothing changes them on the
 * way there — no hook or feature is handed them and nothing is embedded in them. The memory
 * store then gives out its values instead of deep copies of them.
 */
function onlyRendered(services: Services, ctx: CallScope, resource: Resource, fetchedEvent: string, embedded: string[]): boolean {
  return ctx.rendered && embedded.length === 0 && !services.hooks.hasForResource(fetchedEvent, resource.name) && !services.features.has("beforeRespond", resource);
}

/**
 * Eve's get_internal: a page of the collection, `lookup` ANDed with the `where` of the call's
 * args. It reads nothing else of a request, so it is the HTTP method as it stands.
 */
export async function getInternal(services: Services, ctx: CallScope, lookup: Filter): Promise<Reply> {
  const resource = ctx.resource!;
  if (resource.datasource.aggregation) return getAggregation(services, ctx);
  const config = services.config;
  const hidden = fieldMask(ctx, resource, "read");
  const parsing = parseReadQuery(config, ctx, hidden);
  const query = parsing instanceof Promise ? await parsing : parsing;
  const { projection, project } = readProjection(config, ctx, resource, hidden);
  const embedded = resolveEmbeddedFields(config, ctx, resource);
  const showDeleted = resource.soft_delete && ctx.args.has(config.SHOW_DELETED_PARAM);
  const shared = onlyRendered(services, ctx, resource, "on_fetched_resource", embedded);
  const { documents, total } = await services.data.find(ctx, resource, {
    filter: combineFilters(lookup, query.filter),
    sort: query.sort,
    projection,
    skip: query.skip,
    limit: query.limit,
    showDeleted,
    count: !resource.optimize_pagination_for_speed,
    shared,
  });

  let lastModified: Date | undefined;
  // A caller shown fewer fields than stored gets no Last-Modified (src/read/visible.ts).
  let withheld = false;
  const items: Doc[] = [];
  for (const stored of documents) {
    const building = buildResponseDocument(services, ctx, stored, resource, project && { project });
    const document = building instanceof Promise ? await building : building;
    if (resource.field_rules !== null && !withheld) withheld = withholdsFrom(ctx, resource, stored);
    const updated = lastUpdated(config, document);
    if (updated.getTime() > 0 && (!lastModified || updated > lastModified)) lastModified = updated;
    items.push(document);
  }
  const embedding = embedDocuments(services, ctx, resource, items, embedded);
  if (embedding) await embedding;

  const response: Doc = { [config.ITEMS]: items };
  if (resource.hateoas) response[config.LINKS] = paginationLinks(config, ctx, query.paging, total);
  if (resource.pagination) response[config.META] = pageMeta(config, query.paging, total);
  const onFetchedResource = services.hooks.emitForResource("on_fetched_resource", resource.name, response);
  if (onFetchedResource) await onFetchedResource;
  const headers: Record<string, string> = {};
  if (total !== null) headers["X-Total-Count"] = String(total);
  return { status: 200, body: response, lastModified: withheld ? undefined : lastModified, headers };
}

/** The cache validators a client sent (If-Modified-Since, If-None-Match); none from server code. */
export interface CacheValidators {
  ifModifiedSince: string | null;
  ifNoneMatch: string | null;
}

const NO_VALIDATORS: CacheValidators = { ifModifiedSince: null, ifNoneMatch: null };

/** The HTTP method: the cache validators of the request, handed to the core. */
export function getItem(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  const headers = ctx.request.headers;
  return getItemInternal(services, ctx, lookup, { ifModifiedSince: headers.get("if-modified-since"), ifNoneMatch: headers.get("if-none-match") });
}

/** Eve's getitem_internal: the core that GET on an item and server code share. */
export async function getItemInternal(services: Services, ctx: CallScope, lookup: Filter, cache: CacheValidators = NO_VALIDATORS): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const embedded = resolveEmbeddedFields(config, ctx, resource);
  const { projection, project } = readProjection(config, ctx, resource, fieldMask(ctx, resource, "read"));
  const shared = onlyRendered(services, ctx, resource, "on_fetched_item", embedded);
  const stored = await services.data.findOne(ctx, resource, lookup, { showDeleted: true, projection, shared });
  if (!stored) throw new HttpError(404);

  // The primary document's time, whichever version is sent; none for a caller shown fewer
  // fields than stored, whose cached copy only its ETag can validate (src/read/visible.ts).
  const withheld = withholdsFrom(ctx, resource, stored);
  let lastModified = withheld ? undefined : lastUpdated(config, stored);
  const version = requestedVersion(config, ctx, resource);
  const source = typeof version === "number" ? await storedVersion(services, ctx, resource, stored, version, projection) : stored;
  const building = buildResponseDocument(services, ctx, source, resource, { latest: stored, project });
  const document = building instanceof Promise ? await building : building;
  const deleted = isSoftDeleted(config, resource, document);
  const listing = version === "all" || version === "diffs";
  const embedding = !deleted && !listing ? embedDocuments(services, ctx, resource, [document], embedded) : undefined;
  if (embedding) await embedding;
  for (const field of embedded) {
    const embeddedDoc = document[field];
    if (embeddedDoc && typeof embeddedDoc === "object" && !Array.isArray(embeddedDoc)) {
      const updated = lastUpdated(config, embeddedDoc as Doc);
      if (lastModified && updated > lastModified) lastModified = updated;
    }
  }
  const etag = itemEtag(config, resource, document, withheld);
  // A soft-deleted item is answered (404) with its self link only, as Eve does.
  if (resource.hateoas && !deleted && document[config.LINKS]) {
    const links =
      typeof version === "number"
        ? versionLinks(config, ctx, resource, document[resource.id_field])
        : { parent: homeLink(), collection: { title: resource.resource_title, href: resourceLink(config, ctx) } };
    document[config.LINKS] = { ...(document[config.LINKS] as Doc), ...links };
  }

  // 304 only when every validator the client sent says the cached copy is current.
  const validators: boolean[] = [];
  const since = parseHttpDate(cache.ifModifiedSince);
  if (since && lastModified) validators.push(Math.floor(lastModified.getTime() / 1000) <= Math.floor(since.getTime() / 1000));
  const noneMatch = cache.ifNoneMatch;
  if (noneMatch && etag) validators.push(etagMatches(noneMatch, etag));
  if (validators.length > 0 && validators.every(Boolean)) return { status: 304, body: null, etag };

  if (listing) return versionListing(services, ctx, resource, stored, version, { built: document, embedded, projection, project, etag, lastModified });
  if (deleted) return { status: 404, body: softDeletedBody(config, document), etag, lastModified };
  const onFetchedItem = services.hooks.emitForResource("on_fetched_item", resource.name, document);
  if (onFetchedItem) await onFetchedItem;
  return { status: 200, body: document, etag, lastModified };
}
