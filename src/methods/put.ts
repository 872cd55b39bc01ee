// PUT on an item (Eve's eve/methods/put.py): whole-document replacement, or creation at the
// given id when UPSERT_ON_PUT is on and the item does not exist.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { documentEtag } from "../render/etag.ts";
import { postInternal } from "./post.ts";
import { validateWrite, writeConditionally } from "./patch.ts";
import type { Reply } from "../render/reply.ts";
import { requireDocument, type PayloadSource } from "../request/payload.ts";
import { convertPathValue, pathFields } from "../routing/lookup.ts";
import { now } from "../util/clock.ts";
import { writeResponse } from "./bandwidth.ts";
import { checkImmutableId, writeCondition, itemWriteMethod, requiredEtag, type Precondition } from "./conditional.ts";
import { withoutKey } from "../util/objects.ts";

/** The HTTP method (src/methods/conditional.ts reads the request for the core). */
export const putItem = itemWriteMethod(putInternal);

/** Eve's put_internal: the core that PUT and server code (src/internal.ts) share. */
export async function putInternal(services: Services, ctx: CallScope, lookup: Filter, source: PayloadSource, precondition: Precondition): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const where = lookup;
  const original = await services.data.findOne(ctx, resource, where, { showDeleted: true });
  if (!original) return upsert(services, ctx, source, precondition);

  const etag = requiredEtag(config, ctx, resource, original, precondition);
  const payload = requireDocument(await source());
  checkImmutableId(resource.id_field, payload, original);
  // An id field the schema declares is validated as sent, as Eve's put_internal does (it may be required).
  const fields = Object.hasOwn(resource.schema, resource.id_field) ? payload : withoutKey(payload, resource.id_field);
  const path = pathFields(ctx, resource, config);
  // Held from the lookups of `unique` to the write where no index guards it (unique-claims.ts).
  const held = services.claims.hold(resource, [fields]);
  const release = held && (await held);
  let stamp: Date;
  let document: Doc;
  try {
    const validating = validateWrite(services, ctx, { ...fields, ...path.declared }, original, "PUT");
    const validated = validating instanceof Promise ? await validating : validating;

    stamp = now();
    document = { ...validated, ...path.undeclared, [config.LAST_UPDATED]: stamp };
    // A document another program stored without one keeps none (read as the epoch), never null.
    if (original[config.DATE_CREATED] !== undefined) document[config.DATE_CREATED] = original[config.DATE_CREATED];
    if (resource.soft_delete) document[config.DELETED] = false;
    document[resource.id_field] = original[resource.id_field];
    if (resource.auth_field && original[resource.auth_field] !== undefined) document[resource.auth_field] = original[resource.auth_field];
    const beforeReplace = services.features.run("beforeReplace", ctx, resource, document, original);
    if (beforeReplace) await beforeReplace;
    const onReplace = services.hooks.emitForResource("on_replace", resource.name, document, original);
    if (onReplace) await onReplace;
    if (config.IF_MATCH) document[config.ETAG] = documentEtag(document, resource.etag_ignore_fields);

    const conditional = writeCondition(config, resource, original, etag);
    const replacement = document;
    await writeConditionally(services, ctx, where, etag, () => services.data.replace(ctx, resource, conditional, replacement));
  } finally {
    if (release) release();
  }

  const afterReplace = services.features.run("afterReplace", ctx, resource, document, original);

  if (afterReplace) await afterReplace;
  const onReplaced = services.hooks.emitForResource("on_replaced", resource.name, document, original);
  if (onReplaced) await onReplaced;
  const answering = writeResponse(services, ctx, resource, document);
  const answer = answering instanceof Promise ? await answering : answering;
  return { status: 200, body: answer, etag: config.IF_MATCH ? (answer[config.ETAG] as string) : undefined, lastModified: stamp };
}

/** PUT to a missing item creates it at the requested id, answering as POST does. */
async function upsert(services: Services, ctx: CallScope, source: PayloadSource, precondition: Precondition): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  // Only a URL that names the id says where to create (Eve's `lookup[id_field]`).
  if (!resource.upsert_on_put || ctx.endpoint.lookupField !== resource.item_lookup_field || resource.item_lookup_field !== resource.id_field) throw new HttpError(404);
  // If-Match names a representation, and none exists: the precondition is false. Upserting here
  // would bring back a document another client just deleted (a lost delete).
  if (config.IF_MATCH && resource.if_match && precondition.ifMatch !== null) throw new HttpError(412, "Client and server etags don't match");
  const payload = requireDocument(await source());
  // The URL's id wins over one in the body, as in Eve: the document is created where it was put.
  const id = convertPathValue(resource, resource.id_field, ctx.params.lookup!, config);
  return postInternal(services, ctx, { ...payload, [resource.id_field]: id });
}
