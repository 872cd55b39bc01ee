// PUT on an item (Eve's eve/methods/put.py): whole-document replacement, or creation at the
// given id when UPSERT_ON_PUT is on and the item does not exist.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { Services } from "../services.ts";
import { DuplicateKeyError, type Doc, type Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { documentEtag } from "../render/etag.ts";
import { buildResponseDocument } from "../read/document.ts";
import { postCollection, validationEnv } from "./post.ts";
import { duplicateFailure, validationFailure } from "./patch.ts";
import type { Reply } from "../render/reply.ts";
import { readDocument } from "../request/payload.ts";
import { pathFields } from "../routing/lookup.ts";
import { now } from "../util/clock.ts";
import { marshalWriteResponse } from "./bandwidth.ts";
import { checkImmutableId, conditionalWriteFailed, etagCondition, immutableIdError, requiredEtag } from "./conditional.ts";
import { isObjectIdHex } from "../util/objectid.ts";

export async function putItem(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const where = lookup;
  const original = await services.data.findOne(ctx, resource, where, { showDeleted: true });
  if (!original) return upsert(services, ctx);

  const etag = await requiredEtag(config, ctx, original);
  const payload = await readDocument(ctx, config);
  checkImmutableId(config.ID_FIELD, payload, original);
  const { [config.ID_FIELD]: _id, ...fields } = payload;
  const path = pathFields(ctx, resource, config);
  const result = await services.validators.get(resource.name)!.validate({ ...fields, ...path.declared }, "PUT", validationEnv(services, ctx, original));
  if (!result.valid) throw validationFailure(config, result.issues);

  const stamp = now();
  const document: Doc = { ...result.document, ...path.undeclared, [config.LAST_UPDATED]: stamp, [config.DATE_CREATED]: original[config.DATE_CREATED] };
  if (resource.soft_delete) document[config.DELETED] = false;
  document[config.ID_FIELD] = original[config.ID_FIELD];
  if (resource.auth_field && original[resource.auth_field] !== undefined) document[resource.auth_field] = original[resource.auth_field];
  await services.features.beforeReplace(ctx, resource, document, original);
  await services.hooks.emitForResource("on_replace", resource.name, document, original);
  if (config.IF_MATCH) document[config.ETAG] = await documentEtag(document, resource.etag_ignore_fields);

  const conditional: Filter = { [config.ID_FIELD]: original[config.ID_FIELD], ...etagCondition(config, original, etag) };
  let written: boolean;
  try {
    written = await services.data.replace(ctx, resource, conditional, document);
  } catch (error) {
    if (error instanceof DuplicateKeyError) throw duplicateFailure(config, error);
    throw error;
  }
  if (!written) await conditionalWriteFailed(services.data, ctx, where, etag);

  await services.features.afterReplace(ctx, resource, document, original);
  await services.hooks.emitForResource("on_replaced", resource.name, document, original);
  const response = await buildResponseDocument(services, ctx, document, resource);
  response[config.STATUS] = config.STATUS_OK;
  return { status: 200, body: marshalWriteResponse(config, resource, response), etag: config.IF_MATCH ? (document[config.ETAG] as string) : undefined, lastModified: stamp };
}

/** PUT to a missing item creates it at the requested id, answering as POST does. */
async function upsert(services: Services, ctx: RequestContext): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  if (!resource.upsert_on_put || ctx.endpoint.lookupField !== resource.item_lookup_field) throw new HttpError(404);
  // If-Match names a representation, and none exists: the precondition is false. Upserting here
  // would bring back a document another client just deleted (a lost delete).
  if (config.IF_MATCH && resource.if_match && ctx.request.headers.has("if-match")) throw new HttpError(412, "Client and server etags don't match");
  const payload = await readDocument(ctx, config);
  const raw = ctx.params.lookup!;
  const idType = resource.schema[config.ID_FIELD]?.type ?? "objectid";
  const id = idType === "objectid" && isObjectIdHex(raw) ? new ObjectId(raw) : raw;
  if (config.ID_FIELD in payload && String(payload[config.ID_FIELD]) !== raw) {
    throw immutableIdError(config.ID_FIELD);
  }
  return postCollection(services, ctx, { ...payload, [config.ID_FIELD]: id });
}
