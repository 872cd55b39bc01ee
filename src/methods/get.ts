// GET and HEAD on collections and items (Eve's eve/methods/get.py).
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { combineFilters } from "../data/layer.ts";
import { embedDocuments, resolveEmbeddedFields } from "../read/embedding.ts";
import { homeLink, paginationLinks, resourceLink } from "../render/hateoas.ts";
import { resolveProjection } from "../query/projection.ts";
import { pageMeta } from "../query/paging.ts";
import { parseReadQuery } from "../query/read-query.ts";
import { etagMatches } from "../render/etag.ts";
import { parseHttpDate } from "../render/http-date.ts";
import { isSoftDeleted, softDeletedBody } from "../read/soft-delete.ts";
import { itemEtag, requestedVersion, storedVersion, versionLinks } from "../read/versions.ts";
import { versionListing } from "../endpoints/versions.ts";
import { getAggregation } from "../endpoints/aggregation.ts";
import { buildResponseDocument, lastUpdated } from "../read/document.ts";
import { onlyRendered, renderPage } from "../read/page.ts";
import { getPaged, pagedResource } from "./get-paged.ts";
import type { Reply } from "../render/reply.ts";

/** The HTTP method: the core, given the request's `Prefer` where the resource's paging reads it (a count strategy). */
export function getCollection(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  return getInternal(services, ctx, lookup, pagedResource(ctx.resource!) ? ctx.request.headers.get("prefer") : null);
}

/**
 * Eve's get_internal: a page of the collection, `lookup` ANDed with the `where` of the call's
 * args; with cursors or count strategies on, methods/get-paged.ts reads it. `prefer`: a
 * request's Prefer header, which may choose a count strategy.
 */
export async function getInternal(services: Services, ctx: CallScope, lookup: Filter, prefer: string | null = null): Promise<Reply> {
  const resource = ctx.resource!;
  if (resource.datasource.aggregation) return getAggregation(services, ctx);
  if (pagedResource(resource)) return getPaged(services, ctx, lookup, prefer);
  const config = services.config;
  const parsing = parseReadQuery(config, ctx);
  const query = parsing instanceof Promise ? await parsing : parsing;
  const projection = resolveProjection(resource.projection ? ctx.args.get(config.QUERY_PROJECTION) : null, resource, config);
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

  const headers: Record<string, string> = {};
  if (total !== null) headers["X-Total-Count"] = String(total);
  return renderPage(services, ctx, resource, documents, embedded, {
    links: resource.hateoas ? paginationLinks(config, ctx, query.paging, total) : undefined,
    meta: resource.pagination ? pageMeta(config, query.paging, total) : undefined,
    headers,
  });
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
  const projection = resolveProjection(resource.projection ? ctx.args.get(config.QUERY_PROJECTION) : null, resource, config);
  const shared = onlyRendered(services, ctx, resource, "on_fetched_item", embedded);
  const stored = await services.data.findOne(ctx, resource, lookup, { showDeleted: true, projection, shared });
  if (!stored) throw new HttpError(404);

  // The primary document's time, whichever version is sent.
  let lastModified = lastUpdated(config, stored);
  const version = requestedVersion(config, ctx, resource);
  const source = typeof version === "number" ? await storedVersion(services, ctx, resource, stored, version, projection) : stored;
  const building = buildResponseDocument(services, ctx, source, resource, { latest: stored });
  const document = building instanceof Promise ? await building : building;
  const deleted = isSoftDeleted(config, resource, document);
  const listing = version === "all" || version === "diffs";
  const embedding = !deleted && !listing ? embedDocuments(services, ctx, resource, [document], embedded) : undefined;
  if (embedding) await embedding;
  for (const field of embedded) {
    const embeddedDoc = document[field];
    if (embeddedDoc && typeof embeddedDoc === "object" && !Array.isArray(embeddedDoc)) {
      const updated = lastUpdated(config, embeddedDoc as Doc);
      if (updated > lastModified) lastModified = updated;
    }
  }
  const etag = itemEtag(config, resource, document);
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
  if (since) validators.push(Math.floor(lastModified.getTime() / 1000) <= Math.floor(since.getTime() / 1000));
  const noneMatch = cache.ifNoneMatch;
  if (noneMatch && etag) validators.push(etagMatches(noneMatch, etag));
  if (validators.length > 0 && validators.every(Boolean)) return { status: 304, body: null, etag };

  if (listing) return versionListing(services, ctx, resource, stored, version, { built: document, embedded, projection, etag, lastModified });
  if (deleted) return { status: 404, body: softDeletedBody(config, document), etag, lastModified };
  const onFetchedItem = services.hooks.emitForResource("on_fetched_item", resource.name, document);
  if (onFetchedItem) await onFetchedItem;
  return { status: 200, body: document, etag, lastModified };
}
