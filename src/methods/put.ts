// PUT on an item (Eve's eve/methods/put.py): whole-document replacement, or creation at the
// given id when UPSERT_ON_PUT is on and the item does not exist.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import { DuplicateKeyError, type Doc, type Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { documentEtag } from "../render/etag.ts";
import { buildResponseDocument } from "./document.ts";
import { postCollection, validationEnv } from "./post.ts";
import { duplicateFailure, validationFailure } from "./patch.ts";
import { checkImmutableId, conditionalWriteFailed, marshalWriteResponse, now, pathFields, readDocument, requiredEtag, type Reply } from "./common.ts";

export async function putItem(ctx: RequestContext, lookup: Filter): Promise<Reply> {
  const resource = ctx.resource!;
  const config = ctx.app.config;
  const where = lookup;
  const original = await ctx.app.data.findOne(ctx, resource, where, { showDeleted: true });
  if (!original) return upsert(ctx);

  const etag = requiredEtag(ctx, original);
  const payload = await readDocument(ctx);
  checkImmutableId(ctx, payload, original);
  const { [config.ID_FIELD]: _id, ...fields } = payload;
  const path = pathFields(ctx, resource);
  const result = await ctx.app.validators.get(resource.name)!.validate({ ...fields, ...path.declared }, "PUT", validationEnv(ctx, original));
  if (!result.valid) throw validationFailure(ctx, result.issues);

  const stamp = now();
  const document: Doc = { ...result.document, ...path.undeclared, [config.LAST_UPDATED]: stamp, [config.DATE_CREATED]: original[config.DATE_CREATED] };
  if (resource.soft_delete) document[config.DELETED] = false;
  document[config.ID_FIELD] = original[config.ID_FIELD];
  if (resource.auth_field && original[resource.auth_field] !== undefined) document[resource.auth_field] = original[resource.auth_field];
  await ctx.app.features.beforeReplace(ctx, resource, document, original);
  await ctx.app.hooks.emitForResource("on_replace", resource.name, document, original);
  if (config.IF_MATCH) document[config.ETAG] = await documentEtag(document, resource.etag_ignore_fields);

  const conditional: Filter = { [config.ID_FIELD]: original[config.ID_FIELD] };
  if (etag !== undefined) conditional[config.ETAG] = etag;
  let written: boolean;
  try {
    written = await ctx.app.data.replace(ctx, resource, conditional, document);
  } catch (error) {
    if (error instanceof DuplicateKeyError) throw duplicateFailure(ctx, error);
    throw error;
  }
  if (!written) await conditionalWriteFailed(ctx, where, etag);

  await ctx.app.features.afterReplace(ctx, resource, document, original);
  await ctx.app.hooks.emitForResource("on_replaced", resource.name, document, original);
  const response = await buildResponseDocument(ctx, document, resource);
  response[config.STATUS] = config.STATUS_OK;
  return { status: 200, body: marshalWriteResponse(ctx, response), etag: config.IF_MATCH ? (document[config.ETAG] as string) : undefined, lastModified: stamp };
}

/** PUT to a missing item creates it at the requested id, answering as POST does. */
async function upsert(ctx: RequestContext): Promise<Reply> {
  const resource = ctx.resource!;
  const config = ctx.app.config;
  if (!resource.upsert_on_put || ctx.endpoint.lookupField !== resource.item_lookup_field) throw new HttpError(404);
  const payload = await readDocument(ctx);
  const raw = ctx.params.lookup!;
  const idType = resource.schema[config.ID_FIELD]?.type ?? "objectid";
  const id = idType === "objectid" && ObjectId.isValid(raw) && /^[0-9a-fA-F]{24}$/.test(raw) ? new ObjectId(raw) : raw;
  if (config.ID_FIELD in payload && String(payload[config.ID_FIELD]) !== raw) {
    throw new HttpError(400, `Attempt to update an immutable field. Usually happens when PATCH or PUT include a '${config.ID_FIELD}' field, which is immutable (PUT can include it as long as it is unchanged).`);
  }
  return postCollection(ctx, { ...payload, [config.ID_FIELD]: id });
}
