// `?version=all` and `?version=diffs` on an item: the listing of its stored versions.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter, Projection } from "../drivers/types.ts";
import { badRequest } from "../errors.ts";
import { shadowResource, synthesize, versionedIdField } from "../features/shadow.ts";
import { pageMeta, parsePaging } from "../query/paging.ts";
import { parseSort } from "../query/sort.ts";
import { parseWhere } from "../query/where.ts";
import { buildResponseDocument } from "../read/document.ts";
import { fieldMask } from "../auth/field-masks.ts";
import { embedDocuments } from "../read/embedding.ts";
import { etagSource } from "../render/etag.ts";
import { paginationLinks } from "../render/hateoas.ts";
import type { Reply } from "../render/reply.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** Eve's `diff_document`: what changed from one version to the next (removed fields not shown). */
function diffDocument(config: Config, resource: Resource, previous: Doc, next: Doc): Doc {
  const fields = [
    ...Object.keys(resource.schema),
    config.VERSION,
    config.LATEST_VERSION,
    resource.id_field,
    config.LAST_UPDATED,
    config.DATE_CREATED,
    config.ETAG,
    config.LINKS,
  ];
  if (resource.soft_delete) fields.push(config.DELETED);
  const diff: Doc = {};
  for (const field of fields) {
    if (field in next && (!(field in previous) || etagSource(next[field]) !== etagSource(previous[field]))) diff[field] = next[field];
  }
  for (const field of config.VERSION_DIFF_INCLUDE) if (field in next) diff[field] = next[field];
  return diff;
}

export interface ListingOptions {
  /** The current document as built for the response (what a legacy document without copies lists). */
  built: Doc;
  embedded: string[];
  projection: Projection | null;
  /** The client's projection, for versions read whole (src/read/visible.ts). */
  project?: Projection;
  etag?: string;
  lastModified?: Date;
}

/**
 * `?version=all` (every version, sortable) and `?version=diffs` (the first version of each page
 * whole, then what each version changed; sorting refused), paginated. The ETag and
 * Last-Modified are the current document's.
 */
export async function versionListing(services: Services, ctx: CallScope, resource: Resource, latest: Doc, version: "all" | "diffs", options: ListingOptions): Promise<Reply> {
  const config = services.config;
  const hidden = fieldMask(ctx, resource, "read");
  // The client's `where` narrows the versions, as Eve's find on `<resource><VERSIONS>` applies
  // it to the stored copies (eve/methods/get.py, getitem_internal): an unversioned field matches none.
  const where = await parseWhere(ctx.arg(config.QUERY_WHERE) ?? "", resource, config, hidden);
  const rawSort = resource.sorting ? ctx.arg(config.QUERY_SORT) : null;
  const sorting = rawSort ? parseSort(rawSort, resource, config.MAX_JSON_DEPTH, hidden) : null;
  const clientSort = sorting instanceof Promise ? await sorting : sorting;
  if (version === "diffs" && clientSort) throw badRequest("version=diffs cannot be sorted");
  const paging = parsePaging(ctx.args, resource, config);
  const pointer: Filter = { [versionedIdField(config, resource)]: latest[resource.id_field] };
  const filter: Filter = Object.keys(where).length > 0 ? { $and: [where, pointer] } : pointer;
  const { documents: copies, total } = await services.data.find(ctx, shadowResource(config, resource), {
    filter,
    sort: clientSort ?? [[config.VERSION, 1]],
    projection: options.projection,
    skip: resource.pagination ? (paging.page - 1) * paging.maxResults : 0,
    limit: paging.maxResults,
    showDeleted: true,
  });

  let items: Doc[];
  if (total === 0) {
    items = [options.built];
  } else {
    const versions: Doc[] = [];
    for (const copy of copies) versions.push(await buildResponseDocument(services, ctx, synthesize(config, resource, latest, copy), resource, { latest, project: options.project }));
    await embedDocuments(services, ctx, resource, versions, options.embedded);
    items = version === "all" ? versions : versions.map((doc, i) => (i === 0 ? doc : diffDocument(config, resource, versions[i - 1]!, doc)));
  }

  const response: Doc = { [config.ITEMS]: items };
  if (resource.hateoas) {
    response[config.LINKS] = paginationLinks(config, ctx, paging, total, latest[resource.id_field]);
    if (resource.pagination) response[config.META] = pageMeta(config, paging, total);
  }
  if (version === "diffs") {
    const onFetchedDiffs = services.hooks.emitForResource("on_fetched_diffs", resource.name, items);
    if (onFetchedDiffs) await onFetchedDiffs;
  } else {
    for (const item of items) await services.hooks.emitForResource("on_fetched_item", resource.name, item);
  }
  return { status: 200, body: response, etag: options.etag, lastModified: options.lastModified };
}

