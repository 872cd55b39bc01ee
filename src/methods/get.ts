// GET and HEAD on collections and items (Eve's eve/methods/get.py).
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { versionOf, type Doc, type Filter, type Projection } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { combineFilters } from "../data/layer.ts";
import { embedDocuments, resolveEmbeddedFields } from "../read/embedding.ts";
import { homeLink, paginationLinks, resourceLink } from "../render/hateoas.ts";
import { linkQuery, querydef } from "../query/links.ts";
import { resolveProjection, widened } from "../query/projection.ts";
import { pageMeta, type Paging } from "../query/paging.ts";
import { parseReadQuery } from "../query/read-query.ts";
import { etagMatches } from "../render/etag.ts";
import { parseHttpDate } from "../render/http-date.ts";
import { isSoftDeleted, softDeletedBody } from "../read/soft-delete.ts";
import { itemEtag, requestedVersion, storedVersion, versionLinks } from "../read/versions.ts";
import { versionListing } from "../endpoints/versions.ts";
import { getAggregation } from "../endpoints/aggregation.ts";
import { buildResponseDocument, lastUpdated } from "../read/document.ts";
import type { RenderedDocument, RenderedDocuments } from "../render/kept-json.ts";
import { readsWhole, withholdsFrom } from "../read/visible.ts";
import { fieldMask, type Mask } from "../auth/field-masks.ts";
import type { Reply } from "../render/reply.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/**
 * The projection a read sends to the store and, for a caller whose documents are read whole
 * (src/read/visible.ts), the client's one to apply once the document is built. A 400 for a
 * projection naming a field the caller may not read.
 */
export function readProjection(config: Config, ctx: CallScope, resource: Resource, hidden: Mask | null): { projection: Projection | null; project?: Projection } {
  const asked = resolveProjection(resource.projection ? ctx.arg(config.QUERY_PROJECTION) : null, resource, config, hidden);
  if (!readsWhole(ctx, resource)) return { projection: asked };
  const whole = resolveProjection(null, resource, config);
  // What the client asks for beyond the default (a field datasource.projection hides) is read too.
  return asked && asked !== whole ? { projection: whole && widened(whole, asked), project: asked } : { projection: whole };
}

/**
 * Whether a read's documents may be the store's own (FindQuery.shared): they only become the
 * response's body, and nothing changes them on the way there — no hook or feature is handed
 * them (a field rule's hook sees the stored document too) and nothing is embedded in them
 * (buildResponseDocument copies what it adds to). The memory store then gives out the
 * documents it holds instead of deep copies of them.
 */
function onlyRendered(services: Services, ctx: CallScope, resource: Resource, fetchedEvent: string, embedded: string[]): boolean {
  return (
    ctx.rendered &&
    embedded.length === 0 &&
    resource.field_rules?.dynamic !== true &&
    !services.hooks.hasForResource(fetchedEvent, resource.name) &&
    !services.features.has("beforeRespond", resource)
  );
}

/**
 * Whether the stored versions of a shared read (onlyRendered; data.find's `versioned`) may be
 * answered with the JSON kept for them (src/render/kept-json.ts): the body will be written as JSON
 * without `?pretty` (CallScope.compactJson), and nothing of the request shapes a document
 * beyond the path its links take (no `?projection=`, no field rules; `?version=` and embedding
 * already rule out onlyRendered's features and fields).
 */
function renderedOnce(config: Config, ctx: CallScope, resource: Resource): boolean {
  // Field rules make a document depend on its caller (src/read/visible.ts).
  return ctx.compactJson && resource.field_rules === null && !(resource.projection && ctx.arg(config.QUERY_PROJECTION) !== null);
}

/** The HTTP method: the core, given the request's `Prefer` where the resource's paging reads it (a count strategy). */
export function getCollection(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  return getInternal(services, ctx, lookup, ctx.resource!.paged ? ctx.request.headers.get("prefer") : null);
}

/**
 * Eve's get_internal: a page of the collection, `lookup` ANDed with the `where` of the call's
 * args. With cursors or count strategies on (docs/paging.md), methods/get-paged.ts reads the
 * page, imported on first use; `prefer` is then a request's Prefer header.
 */
export async function getInternal(services: Services, ctx: CallScope, lookup: Filter, prefer: string | null = null): Promise<Reply> {
  const resource = ctx.resource!;
  if (resource.datasource.aggregation) return getAggregation(services, ctx);
  const config = services.config;
  const hidden = fieldMask(ctx, resource, "read");
  const parsing = parseReadQuery(config, ctx, hidden);
  const query = parsing instanceof Promise ? await parsing : parsing;
  const { projection, project } = readProjection(config, ctx, resource, hidden);
  const embedded = resolveEmbeddedFields(config, ctx, resource);
  const showDeleted = resource.soft_delete && ctx.arg(config.SHOW_DELETED_PARAM) !== null;
  const shared = onlyRendered(services, ctx, resource, "on_fetched_resource", embedded);
  const filter = combineFilters(lookup, query.filter);
  if (resource.paged) {
    // A link's query string: Eve's, with the cursor (if any) in the page number's place.
    const href = (maxResults: number, page: number, cursor?: string) => querydef(linkQuery(ctx.args, resource, config, maxResults, config.PAGINATION_CURSOR_PARAM), page, config, cursor);
    const page = await (await import("./get-paged.ts")).readPage(services, ctx, { query, filter, projection, showDeleted, shared, href }, prefer);
    const links = resource.hateoas ? paginationLinks(config, ctx, query.paging, null, undefined, page.queries) : undefined;
    return render(services, ctx, page.documents, project, embedded, page.headers, (items) => {
      const response: Doc = { [config.ITEMS]: items };
      if (links) response[config.LINKS] = links;
      if (page.meta) response[config.META] = page.meta;
      return response;
    });
  }
  const { documents, total, versioned } = await services.data.find(ctx, resource, {
    filter,
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
  if (versioned && renderedOnce(config, ctx, resource)) {
    const loading = services.rendered.get();
    const kept = loading instanceof Promise ? await loading : loading;
    const base = resourceLink(config, ctx);
    // No hook or feature is handed anything here (onlyRendered): each document is built at once.
    const page = kept.page(ctx.query ? base + ctx.query : base, base, documents, documents.map(versionOf), total, {
      build: (stored) => buildResponseDocument(services, ctx, stored, resource) as Doc,
      updated: (stored) => lastUpdated(config, stored),
      around: (list) => envelope(config, ctx, resource, query.paging, list, total),
    });
    return { status: 200, body: null, json: page.body, text: () => kept.pageText(page), lastModified: page.lastModified, headers };
  }
  return render(services, ctx, documents, project, embedded, headers, (items) => envelope(config, ctx, resource, query.paging, items, total));
}

/** A page's documents built for the caller, embedded into and wrapped (`around`) as the body. */
async function render(services: Services, ctx: CallScope, documents: Doc[], project: Projection | undefined, embedded: string[], headers: Record<string, string>, around: (items: Doc[]) => Doc): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
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

  const response = around(items);
  const onFetchedResource = services.hooks.emitForResource("on_fetched_resource", resource.name, response);
  if (onFetchedResource) await onFetchedResource;
  return { status: 200, body: response, lastModified: withheld ? undefined : lastModified, headers };
}

/** A page's body: its items, links and `_meta`. */
function envelope(config: Config, ctx: CallScope, resource: Resource, paging: Paging, items: unknown, total: number | null): Doc {
  const response: Doc = { [config.ITEMS]: items };
  if (resource.hateoas) response[config.LINKS] = paginationLinks(config, ctx, paging, total);
  if (resource.pagination) response[config.META] = pageMeta(config, paging, total);
  return response;
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
  // A deleted document and a live one may share a value of another lookup field (`unique` leaves
  // deleted documents out): the live one is the item, the deleted one only when none is.
  const preferLive = resource.soft_delete && ctx.endpoint.lookupField !== undefined && ctx.endpoint.lookupField !== resource.id_field;
  let found = await services.data.find(ctx, resource, { filter: lookup, limit: 1, showDeleted: !preferLive, projection, shared, count: false });
  if (preferLive && found.documents.length === 0) found = await services.data.find(ctx, resource, { filter: lookup, limit: 1, showDeleted: true, projection, shared, count: false });
  const { documents, versioned } = found;
  const stored = documents[0];
  if (!stored) throw new HttpError(404);

  // The primary document's time, whichever version is sent; none for a caller shown fewer
  // fields than stored, whose cached copy only its ETag can validate (src/read/visible.ts).
  const withheld = withholdsFrom(ctx, resource, stored);
  let lastModified = withheld ? undefined : lastUpdated(config, stored);
  // Kept JSON only without field rules (renderedOnce): nothing withheld then.
  let rendered: RenderedDocuments | undefined;
  let kept: RenderedDocument | undefined;
  if (versioned && renderedOnce(config, ctx, resource)) {
    const loading = services.rendered.get();
    rendered = loading instanceof Promise ? await loading : loading;
    kept = rendered.of(versionOf(stored), resourceLink(config, ctx));
  }
  if (kept?.item) {
    if (notModified(cache, lastModified, kept.etag)) return { status: 304, body: null, etag: kept.etag };
    const entry = kept;
    return { status: 200, body: null, json: kept.item, text: () => rendered!.itemText(entry), etag: kept.etag, lastModified };
  }
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
  // A soft-deleted item is answered (404) with its self link only, as Eve does; so is the current
  // document a version listing shows when no stored copy matches (Eve's getitem builds it with
  // build_response_document alone).
  if (resource.hateoas && !deleted && !listing && document[config.LINKS]) {
    const links =
      typeof version === "number"
        ? versionLinks(config, ctx, resource, document[resource.id_field])
        : { parent: homeLink(), collection: { title: resource.resource_title, href: resourceLink(config, ctx) } };
    document[config.LINKS] = { ...(document[config.LINKS] as Doc), ...links };
  }

  if (notModified(cache, lastModified, etag)) return { status: 304, body: null, etag };

  if (listing) return versionListing(services, ctx, resource, stored, version, { built: document, embedded, projection, project, etag, lastModified });
  if (deleted) return { status: 404, body: softDeletedBody(config, document), etag, lastModified };
  const onFetchedItem = services.hooks.emitForResource("on_fetched_item", resource.name, document);
  if (onFetchedItem) await onFetchedItem;
  if (kept) return { status: 200, body: null, json: rendered!.keepItem(kept, document, etag), etag, lastModified };
  return { status: 200, body: document, etag, lastModified };
}

/** 304 only when every validator the client sent (and the answer has) says its cached copy is current. */
function notModified(cache: CacheValidators, lastModified: Date | undefined, etag: string | undefined): boolean {
  let validated = false;
  const since = parseHttpDate(cache.ifModifiedSince);
  if (since && lastModified) {
    if (Math.floor(lastModified.getTime() / 1000) > Math.floor(since.getTime() / 1000)) return false;
    validated = true;
  }
  const noneMatch = cache.ifNoneMatch;
  if (noneMatch && etag) {
    if (!etagMatches(noneMatch, etag)) return false;
    validated = true;
  }
  return validated;
}
