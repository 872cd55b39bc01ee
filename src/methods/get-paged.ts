// A collection page where cursors (pagination_cursor) or count strategies (pagination_count)
// are on (docs/paging.md); every other page is Eve's. methods/get.ts parses the query, builds
// the documents and imports this module on a paged resource's first read; what it needs of
// the start-up bundle (a link's query string) get.ts passes in, so that a Worker without these
// features carries none of this, and one with them keeps its start-up chunk whole
// (docs/architecture.md, "Features beyond Eve").
// - Count strategies: exact (a count of the scoped filter), estimated (the store's statistics,
//   where the scoped filter is empty; otherwise it counts), none. `_meta.count` says which the
//   client got; X-Total-Count is sent for an exact total only (X-Total-Count-Estimate for an
//   estimate), and the `last` link only with an exact total. Without a total, one document
//   more than the page is read to know whether a next page exists, except under
//   OPTIMIZE_PAGINATION_FOR_SPEED, whose `next` is always there, as in Eve.
// - Cursors: every page is read afresh with the data layer's scope and the cursor's position
//   (docs/contracts.md §5), in the sort's order with `_id` last (query/keyset.ts); `next` and
//   `prev` carry cursors sealed for this resource, sort and where (query/cursor.ts).
import { positiveWhole } from "../util/numbers.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter, Projection } from "../drivers/types.ts";
import type { FindOptions } from "../data/layer.ts";
import { HttpError } from "../errors.ts";
import { countChoice } from "../query/count.ts";
import { openCursor, sealCursor, cursorFingerprint, type CursorDirection } from "../query/cursor.ts";
import { keysetSort, reverseSort, withSortFields } from "../query/keyset.ts";
import type { PaginationQueries } from "../query/links.ts";
import type { ParsedQuery } from "../query/read-query.ts";
import { sortFields } from "../drivers/sort-order.ts";
import type { Resource } from "../settings/normalize.ts";
import type { CountStrategy } from "../settings/opt-in.ts";

/** What get.ts has made of the request. */
export interface PageRequest {
  query: ParsedQuery;
  /** The URL's lookup and the where. */
  filter: Filter;
  projection: Projection | null;
  showDeleted: boolean;
  shared: boolean;
  /** The query string of a link to a page, by its number or its cursor (query/links.ts querydef). */
  href: (maxResults: number, page: number, cursor?: string) => string;
}

/** Where a link leads: a page number or a cursor. */
type Place = { page: number; cursor?: string };

interface Places {
  self: Place;
  next?: Place;
  prev?: Place;
  last?: Place;
}

/** The page's documents as stored, its links' query strings, its _meta and its headers. */
export interface Page {
  documents: Doc[];
  queries: PaginationQueries;
  meta: Record<string, unknown>;
  headers: Record<string, string>;
}

/** What a read found. */
interface Read {
  documents: Doc[];
  total: number | null;
  estimated: boolean;
  places: Places;
  /** Null when the read was by cursor, which knows no page number. */
  page: number | null;
  maxResults: number;
}

/** What each read passes to the data layer, besides its own filter, order and window. */
type Common = Omit<FindOptions, "filter" | "sort" | "skip" | "limit" | "after">;

export async function readPage(services: Services, ctx: CallScope, request: PageRequest, prefer: string | null): Promise<Page> {
  const resource = ctx.resource!;
  const config = services.config;
  const count = countChoice(config, resource, ctx.args, prefer);
  const strategy = count.strategy;
  const common: Common = { projection: request.projection, showDeleted: request.showDeleted, count: strategy !== "none", estimate: strategy === "estimated", shared: request.shared };
  const read = resource.pagination_cursor ? await cursorRead(services, ctx, request, common) : await numberRead(services, ctx, request, common, strategy);

  const meta: Record<string, unknown> = {};
  if (read.page !== null) meta[config.QUERY_PAGE] = read.page;
  meta[config.QUERY_MAX_RESULTS] = read.maxResults;
  if (read.total !== null) meta.total = read.total;
  meta.count = read.total === null ? "none" : read.estimated ? "estimated" : "exact";
  const headers: Record<string, string> = { Vary: "Prefer" };
  if (read.total !== null) headers[read.estimated ? "X-Total-Count-Estimate" : "X-Total-Count"] = String(read.total);
  if (count.preferred) headers["Preference-Applied"] = `count=${strategy}`;
  const to = (place: Place | undefined) => place && request.href(read.maxResults, place.page, place.cursor);
  const { self, next, prev, last } = read.places;
  return { documents: read.documents, queries: { self: to(self)!, next: to(next), prev: to(prev), last: to(last) }, meta, headers };
}

/** Eve's page numbers, counted as the strategy says. */
async function numberRead(services: Services, ctx: CallScope, { query, filter }: PageRequest, common: Common, strategy: CountStrategy): Promise<Read> {
  const resource = ctx.resource!;
  const { page, maxResults } = query.paging;
  const alwaysNext = strategy === "none" && resource.optimize_pagination_for_speed;
  const probe = strategy !== "exact" && !alwaysNext;
  const found = await services.data.find(ctx, resource, { ...common, filter, sort: query.sort, skip: query.skip, limit: maxResults + (probe ? 1 : 0) });
  let documents = found.documents;
  const total = found.total;
  let more = alwaysNext || (total !== null && !probe && page * maxResults < total);
  if (probe && documents.length > maxResults) {
    more = true;
    documents = documents.slice(0, maxResults);
  }
  const places: Places = { self: { page } };
  if (more) places.next = { page: page + 1 };
  if (more && total !== null && !found.estimated) places.last = { page: Math.max(1, Math.ceil(total / maxResults)) };
  if (page > 1) places.prev = { page: page - 1 };
  return { documents, total, estimated: found.estimated === true, places, page, maxResults };
}

/** max_results on a cursor resource: a whole number from 1, cut to the resource's limit as Eve cuts it. */
function strictMaxResults(resource: Resource, raw: string | null, name: string): number {
  if (raw === null) return resource.pagination_default;
  // Digits only: a cursor resource answers anything else with a 400 rather than Eve's guess.
  const value = positiveWhole(raw);
  if (value === null) throw new HttpError(400, `${name} must be a whole number from 1 (values over ${resource.pagination_limit} are cut to it)`);
  return Math.min(value, resource.pagination_limit);
}

/** A page by cursor, or by page number on a cursor resource, in the keyset order. */
async function cursorRead(services: Services, ctx: CallScope, { query, filter }: PageRequest, common: Common): Promise<Read> {
  const resource = ctx.resource!;
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
  const { projection, restore } = withSortFields(common.projection ?? null, sort);
  const found = await services.data.find(ctx, resource, {
    ...common,
    // The sort fields read for the cursor are removed from the documents: never from the store's own.
    shared: common.shared === true && restore === null,
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
    page: 1,
    cursor: await sealCursor(secret, { direction, position: doc ? sortFields(doc, sort) : null }, fingerprint),
  });
  const places: Places = { self: token === null ? { page } : { page: 1, cursor: token } };
  // Forwards, a next page exists when the read found more; backwards, the page the client came from follows.
  if (!backward ? more : cursor!.direction === "before") places.next = last ? await seal("after", last) : { page: 1 };
  if (backward ? more : token !== null || page > 1) places.prev = first ? await seal("before", first) : await seal("end");
  if (places.next && found.total !== null && !found.estimated) places.last = await seal("end");
  if (restore) for (const doc of documents) restore(doc);
  return { documents, total: found.total, estimated: found.estimated === true, places, page: token === null ? page : null, maxResults };
}
