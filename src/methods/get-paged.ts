// A collection page where cursors (pagination_cursor) or count strategies (pagination_count)
// are on (docs/paging.md); every other page is Eve's (methods/get.ts), unchanged.
// - Count strategies: exact (a count of the scoped filter), estimated (the store's statistics,
//   where the scoped filter is empty; otherwise it counts), none. `_meta.count` says which the
//   client got; X-Total-Count is sent for an exact total only (X-Total-Count-Estimate for an
//   estimate), and the `last` link only with an exact total. Without a total, one document
//   more than the page is read to know whether a next page exists, except under
//   OPTIMIZE_PAGINATION_FOR_SPEED, whose `next` is always there, as in Eve.
// - Cursors: every page is read afresh with the data layer's scope and the cursor's position
//   (docs/contracts.md §5), in the sort's order with `_id` last (query/keyset.ts); `next` and
//   `prev` carry cursors sealed for this resource, sort and where (query/cursor.ts).
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { combineFilters, type FindOptions } from "../data/layer.ts";
import { resolveEmbeddedFields } from "../read/embedding.ts";
import { onlyRendered, renderPage } from "../read/page.ts";
import { placeLinks } from "../render/hateoas.ts";
import type { Reply } from "../render/reply.ts";
import { countChoice, type CountChoice } from "../query/count.ts";
import { openCursor, sealCursor, cursorFingerprint, type CursorDirection } from "../query/cursor.ts";
import { keysetSort, reverseSort, withSortFields } from "../query/keyset.ts";
import type { Place, Places } from "../query/links.ts";
import { resolveProjection } from "../query/projection.ts";
import { parseReadQuery, type ParsedQuery } from "../query/read-query.ts";
import { sortFields } from "../drivers/sort-order.ts";
import type { Resource } from "../settings/normalize.ts";

/** Whether a resource's pages are read here: decided by its settings alone. */
export function pagedResource(resource: Resource): boolean {
  return resource.pagination && (resource.pagination_cursor || resource.pagination_count !== null);
}

/** What a read gives the page's envelope. */
interface Read {
  documents: Doc[];
  total: number | null;
  estimated: boolean;
  places: Places;
  /** Null when the read was by cursor, which knows no page number. */
  page: number | null;
  maxResults: number;
}

interface Common {
  services: Services;
  ctx: CallScope;
  resource: Resource;
  query: ParsedQuery;
  filter: Filter;
  count: CountChoice;
  /** What every find of the page shares. */
  find: Omit<FindOptions, "filter" | "sort" | "skip" | "limit" | "after">;
}

export async function getPaged(services: Services, ctx: CallScope, lookup: Filter, prefer: string | null): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const parsing = parseReadQuery(config, ctx);
  const query = parsing instanceof Promise ? await parsing : parsing;
  const count = countChoice(config, resource, ctx.args, prefer);
  const projection = resolveProjection(resource.projection ? ctx.args.get(config.QUERY_PROJECTION) : null, resource, config);
  const embedded = resolveEmbeddedFields(config, ctx, resource);
  const strategy = count.strategy;
  const common: Common = {
    services,
    ctx,
    resource,
    query,
    filter: combineFilters(lookup, query.filter),
    count,
    find: {
      projection,
      showDeleted: resource.soft_delete && ctx.args.has(config.SHOW_DELETED_PARAM),
      count: strategy !== "none",
      estimate: strategy === "estimated",
      shared: onlyRendered(services, ctx, resource, "on_fetched_resource", embedded),
    },
  };
  const read = resource.pagination_cursor ? await cursorRead(common) : await numberRead(common);

  const kind = read.total === null ? "none" : read.estimated ? "estimated" : "exact";
  const meta: Record<string, unknown> = {};
  if (read.page !== null) meta[config.QUERY_PAGE] = read.page;
  meta[config.QUERY_MAX_RESULTS] = read.maxResults;
  if (read.total !== null) meta.total = read.total;
  meta.count = kind;
  const headers: Record<string, string> = { Vary: "Prefer" };
  if (read.total !== null) headers[read.estimated ? "X-Total-Count-Estimate" : "X-Total-Count"] = String(read.total);
  if (count.preferred) headers["Preference-Applied"] = `count=${strategy}`;
  return renderPage(services, ctx, resource, read.documents, embedded, {
    links: resource.hateoas ? placeLinks(config, ctx, read.maxResults, read.places) : undefined,
    meta,
    headers,
  });
}

/** Eve's page numbers, counted as the strategy says. */
async function numberRead({ services, ctx, resource, query, filter, count, find }: Common): Promise<Read> {
  const { page, maxResults } = query.paging;
  const alwaysNext = count.strategy === "none" && resource.optimize_pagination_for_speed;
  const probe = count.strategy !== "exact" && !alwaysNext;
  const found = await services.data.find(ctx, resource, { ...find, filter, sort: query.sort, skip: query.skip, limit: maxResults + (probe ? 1 : 0) });
  let documents = found.documents;
  const total = found.total;
  let more = alwaysNext || (total !== null && !probe && page * maxResults < total);
  if (probe && documents.length > maxResults) {
    more = true;
    documents = documents.slice(0, maxResults);
  }
  const exact = total !== null && !found.estimated;
  const places: Places = { self: { page } };
  if (more) places.next = { page: page + 1 };
  if (more && exact) places.last = { page: Math.max(1, Math.ceil(total / maxResults)) };
  if (page > 1) places.prev = { page: page - 1 };
  return { documents, total, estimated: found.estimated === true, places, page, maxResults };
}

/** Digits only: a cursor resource answers anything else with a 400 rather than Eve's guess. */
const WHOLE = /^\d{1,15}$/;

/** max_results on a cursor resource: a whole number from 1, cut to the resource's limit as Eve cuts it. */
function strictMaxResults(resource: Resource, raw: string | null, name: string): number {
  if (raw === null) return resource.pagination_default;
  const value = WHOLE.test(raw.trim()) ? Number(raw.trim()) : 0;
  if (value < 1) throw new HttpError(400, `${name} must be a whole number from 1 (values over ${resource.pagination_limit} are cut to it)`);
  return Math.min(value, resource.pagination_limit);
}

/** A page by cursor, or by page number on a cursor resource, in the keyset order. */
async function cursorRead({ services, ctx, resource, query, filter, find }: Common): Promise<Read> {
  const config = services.config;
  const args = ctx.args;
  const maxResults = strictMaxResults(resource, args.get(config.QUERY_MAX_RESULTS), config.QUERY_MAX_RESULTS);
  const token = args.get(config.PAGINATION_CURSOR_PARAM) || null;
  if (token !== null && args.has(config.QUERY_PAGE)) throw new HttpError(400, `${config.PAGINATION_CURSOR_PARAM} and ${config.QUERY_PAGE} cannot be combined: a cursor names its page`);
  const sort = keysetSort(query.sort);
  const secret = config.PAGINATION_CURSOR_SECRET;
  const fingerprint = await cursorFingerprint(resource.name, sort, filter);
  const cursor = token === null ? null : await openCursor(secret, token, fingerprint);
  const backward = cursor !== null && cursor.direction !== "after";
  const page = query.paging.page;
  const { projection, restore } = withSortFields(find.projection ?? null, sort);
  const found = await services.data.find(ctx, resource, {
    ...find,
    projection,
    filter,
    sort: backward ? reverseSort(sort) : sort,
    after: cursor?.position ?? null,
    skip: cursor ? 0 : (page - 1) * maxResults,
    limit: maxResults + 1,
  });
  let documents = found.documents;
  const more = documents.length > maxResults;
  if (more) documents = documents.slice(0, maxResults);
  if (backward) documents.reverse();
  const first = documents[0];
  const last = documents[documents.length - 1];
  const seal = async (direction: CursorDirection, doc?: Doc): Promise<Place> => ({
    cursor: await sealCursor(secret, { direction, position: doc ? sortFields(doc, sort) : null }, fingerprint),
  });
  const places: Places = { self: token === null ? { page } : { cursor: token } };
  // Forwards, a next page exists when the read found more; backwards, the page the client came from follows.
  if (!backward ? more : cursor!.direction === "before") places.next = last ? await seal("after", last) : { page: 1 };
  if (backward ? more : token !== null || page > 1) places.prev = first ? await seal("before", first) : await seal("end");
  if (places.next && found.total !== null && !found.estimated) places.last = await seal("end");
  if (restore) for (const doc of documents) restore(doc);
  return { documents, total: found.total, estimated: found.estimated === true, places, page: token === null ? page : null, maxResults };
}
