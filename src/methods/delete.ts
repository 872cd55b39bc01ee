// DELETE on items and collections (Eve's eve/methods/delete.py): hard delete, or soft delete
// (the document kept with `_deleted: true`) when the resource asks for it.
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter, Update } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";
import { documentEtag } from "../render/etag.ts";
import type { Reply } from "../render/reply.ts";
import { now } from "../util/clock.ts";
import { conditionalWriteFailed, loadOriginal, writeCondition, requestPrecondition, requiredEtag, type Precondition } from "./conditional.ts";

const NO_CONTENT: Reply = { status: 204, body: null };

/**
 * What marking changed, as operators: the stored document ends as Eve's replacement leaves it,
 * but values the marking left alone are not sent back. Read as JavaScript values and written
 * again, MongoDB's Int64 and whole doubles would come back as int32 (docs/decisions.md).
 */
function markings(original: Doc, marked: Doc): Update {
  const $set: Doc = {};
  for (const key of Object.keys(marked)) if (!Object.hasOwn(original, key) || !Object.is(marked[key], original[key])) $set[key] = marked[key];
  const gone = Object.keys(original).filter((key) => !Object.hasOwn(marked, key));
  return gone.length === 0 ? { $set } : { $set, $unset: Object.fromEntries(gone.map((key) => [key, ""])) };
}

/** Marks one document deleted, atomically against `etag` when given. */
async function softDelete(services: Services, ctx: CallScope, resource: Resource, original: Doc, etag: string | undefined, where: Filter): Promise<void> {
  const config = services.config;
  const marked: Doc = { ...original, [config.DELETED]: true, [config.LAST_UPDATED]: now() };
  // Eve hashes the marked document before features move it on (its version number among them).
  if (config.IF_MATCH) marked[config.ETAG] = documentEtag(marked, resource.etag_ignore_fields);
  const beforeSoftDelete = services.features.run("beforeSoftDelete", ctx, resource, marked, original);
  if (beforeSoftDelete) await beforeSoftDelete;
  const conditional = writeCondition(config, resource, original, etag);
  if (!(await services.data.update(ctx, resource, conditional, markings(original, marked)))) await conditionalWriteFailed(services.data, ctx, where, etag);
  const afterSoftDelete = services.features.run("afterSoftDelete", ctx, resource, marked, original);
  if (afterSoftDelete) await afterSoftDelete;
}

/** The HTTP method: the If-Match of the request, handed to the core. */
export function deleteItem(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  return deleteItemInternal(services, ctx, lookup, requestPrecondition(ctx.request));
}

/** Eve's deleteitem_internal: the core that DELETE on an item and server code share. */
export async function deleteItemInternal(services: Services, ctx: CallScope, lookup: Filter, precondition: Precondition): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const where = lookup;
  const original = await loadOriginal(services.data, ctx, where);
  const etag = requiredEtag(config, ctx, resource, original, precondition);
  // Deleting a flagged document again changes nothing, and succeeds (Eve's deleteitem_internal,
  // tests/methods/delete.py TestSoftDelete.test_multiple_softdelete): no hook, no version.
  if (resource.soft_delete && original[config.DELETED] === true) return NO_CONTENT;
  const onDeleteItem = services.hooks.emitForResource("on_delete_item", resource.name, original);
  if (onDeleteItem) await onDeleteItem;
  if (resource.soft_delete) {
    await softDelete(services, ctx, resource, original, etag, where);
  } else {
    const conditional = writeCondition(config, resource, original, etag);
    if (!(await services.data.remove(ctx, resource, conditional))) await conditionalWriteFailed(services.data, ctx, where, etag);
    const afterDelete = services.features.run("afterDelete", ctx, resource, original);
    if (afterDelete) await afterDelete;
  }
  const onDeletedItem = services.hooks.emitForResource("on_deleted_item", resource.name, original);
  if (onDeletedItem) await onDeletedItem;
  return NO_CONTENT;
}

/**
 * Eve's delete: every document matching `lookup` — the HTTP method and server code alike (nothing
 * of the request is read). A collection with nothing (live) to delete is 204 like Eve 2.3.1's
 * `all_done()`, without the after-events: docs/decisions.md §5 reads the specification's 404
 * for a missing collection as the item endpoints', the only ones PATCH and PUT have.
 */
export async function deleteInternal(services: Services, ctx: CallScope, lookup: Filter): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const onDeleteResource = services.hooks.emitForResource("on_delete_resource", resource.name);
  if (onDeleteResource) await onDeleteResource;
  const filter = lookup;
  const { documents: originals } = await services.data.find(ctx, resource, { filter, showDeleted: true, count: false });
  if (originals.length === 0) return NO_CONTENT;
  const onDeleteResourceOriginals = services.hooks.emitForResource("on_delete_resource_originals", resource.name, originals, lookup);
  if (onDeleteResourceOriginals) await onDeleteResourceOriginals;
  if (resource.soft_delete) {
    const live = originals.filter((d) => d[config.DELETED] !== true);
    if (live.length === 0) return NO_CONTENT;
    for (const original of live) await softDelete(services, ctx, resource, original, undefined, { [resource.id_field]: original[resource.id_field] });
  } else {
    await services.data.removeMany(ctx, resource, filter);
    const afterDeleteMany = services.features.run("afterDeleteMany", ctx, resource, originals);
    if (afterDeleteMany) await afterDeleteMany;
  }
  const onDeletedResource = services.hooks.emitForResource("on_deleted_resource", resource.name);
  if (onDeletedResource) await onDeletedResource;
  return NO_CONTENT;
}
