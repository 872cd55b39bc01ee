// What item writes (PATCH, PUT, DELETE) share: the original they change, Eve's If-Match
// protocol, and the id that no write may change.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { bareEtag } from "../render/etag.ts";
import type { Config } from "../settings/normalize.ts";

/** Loads the item a write targets, soft-deleted ones included (they can be restored). */
export async function loadOriginal(data: DataLayer, ctx: RequestContext, lookup: Filter): Promise<Doc> {
  const original = await data.findOne(ctx, ctx.resource!, lookup, { showDeleted: true });
  if (!original) throw new HttpError(404);
  return original;
}

/**
 * Eve's concurrency control. Returns the ETag the write must still match in the database
 * (so the check and the write are one atomic operation), or undefined for an unconditional write.
 */
export function requiredEtag(config: Config, ctx: RequestContext, original: Doc): string | undefined {
  const resource = ctx.resource!;
  if (!config.IF_MATCH || !resource.if_match) return undefined;
  const header = ctx.request.headers.get("if-match");
  if (header === null) {
    if (resource.enforce_if_match && config.ENFORCE_IF_MATCH && !ctx.internal) {
      throw new HttpError(428, "To edit a document its etag must be provided using the If-Match header");
    }
    return undefined;
  }
  const stored = original[config.ETAG];
  if (bareEtag(header) === "*") return typeof stored === "string" ? stored : undefined;
  if (bareEtag(header) !== stored) throw new HttpError(412, "Client and server etags don't match");
  return stored as string;
}

/** After a conditional write matched nothing: the item vanished (404) or changed (412). */
export async function conditionalWriteFailed(data: DataLayer, ctx: RequestContext, lookup: Filter, etag: string | undefined): Promise<never> {
  const current = await data.findOne(ctx, ctx.resource!, lookup, { showDeleted: true });
  if (current && etag !== undefined) throw new HttpError(412, "Client and server etags don't match");
  throw new HttpError(404);
}

/** Eve's immutable-field 400. */
export function immutableIdError(idField: string): HttpError {
  return new HttpError(
    400,
    `Attempt to update an immutable field. Usually happens when PATCH or PUT include a '${idField}' field, which is immutable (PUT can include it as long as it is unchanged).`,
  );
}

/** Rejects a payload that tries to change the id. */
export function checkImmutableId(idField: string, payload: Doc, original: Doc): void {
  if (!(idField in payload)) return;
  const sent = payload[idField];
  const stored = original[idField];
  const same = stored instanceof ObjectId ? String(sent) === stored.toHexString() : sent === stored;
  if (!same) throw immutableIdError(idField);
}
