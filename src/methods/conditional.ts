// What item writes (PATCH, PUT, DELETE) share: the original they change, Eve's If-Match
// protocol, and the id that no write may change.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { Reply } from "../render/reply.ts";
import { readPayload, type PayloadSource } from "../request/payload.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { bareEtag } from "../render/etag.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { shownEtag } from "../read/document.ts";
import { callerEtag } from "../read/visible.ts";
import { withoutKey } from "../util/objects.ts";
import { readView } from "../query/projection.ts";
import { objectIdHex } from "../util/objectid.ts";

/**
 * Loads the item a write targets, soft-deleted ones included (they can be restored); `shared`:
 * the caller only reads it and hands it to nothing that could change it (FindQuery.shared).
 */
export function loadOriginal(data: DataLayer, ctx: CallScope, lookup: Filter, shared = false): Promise<Doc> {
  return data.findOne(ctx, ctx.resource!, lookup, { showDeleted: true, shared }).then(found);
}

/** Not an async frame around the read: one promise less on every item write. */
function found(original: Doc | null): Doc {
  if (!original) throw new HttpError(404);
  return original;
}

/**
 * What a write is told of the client's copy: the If-Match value (null when none was sent) and
 * whether one is required. HTTP requests must send it where ENFORCE_IF_MATCH says so; server
 * code (src/internal.ts) may write unconditionally.
 */
export interface Precondition {
  ifMatch: string | null;
  enforce: boolean;
}

/** An HTTP request's precondition; an empty If-Match is none, as Eve reads it (428 where one is required). */
export function requestPrecondition(request: Request): Precondition {
  return { ifMatch: request.headers.get("if-match")?.trim() || null, enforce: true };
}

/** The core of an item write that takes a body (patchInternal, putInternal). */
export type ItemWrite = (services: Services, scope: CallScope, lookup: Filter, source: PayloadSource, precondition: Precondition) => Promise<Reply>;

/** Its HTTP method: the request's body (read only when the core gets that far) and If-Match, handed to the core. */
export function itemWriteMethod(core: ItemWrite): (services: Services, ctx: RequestContext, lookup: Filter) => Promise<Reply> {
  return (services, ctx, lookup) => core(services, ctx, lookup, () => readPayload(ctx, services.config), requestPrecondition(ctx.request));
}

/**
 * Eve's concurrency control. Returns the ETag the write must still match in the database
 * (so the check and the write are one atomic operation), or undefined for an unconditional write.
 * If-Match is compared with the ETag the caller is shown, which for a caller shown fewer
 * fields than stored is the hash of those (src/read/visible.ts); the write is still made
 * against the stored one.
 */
export function requiredEtag(config: Config, ctx: CallScope, resource: Resource, original: Doc, precondition: Precondition): string | undefined {
  if (!config.IF_MATCH || !resource.if_match) return undefined;
  if (precondition.ifMatch === null) {
    if (resource.enforce_if_match && config.ENFORCE_IF_MATCH && precondition.enforce) {
      throw new HttpError(428, "To edit a document its etag must be provided using the If-Match header");
    }
    return undefined;
  }
  const stored = shownEtag(config, resource, typeof original[config.ETAG] === "string" ? original : readView(config, resource, original));
  const current = (resource.field_rules && callerEtag(config, ctx, resource, original)) ?? stored;
  const sent = bareEtag(precondition.ifMatch);
  if (sent !== "*" && sent !== current) throw new HttpError(412, "Client and server etags don't match");
  return stored;
}

/**
 * What a conditional write must still find in the database: the document's id and, when an
 * ETag is checked, that ETag. A document with a stored ETag is matched on it. One another
 * program wrote has none (its ETag is computed), so it is matched on having none still and on
 * every field it had: any write in between — everest's adds an ETag, another program's changes
 * a field — makes the match fail.
 */
export function writeCondition(config: Config, resource: Resource, original: Doc, etag: string | undefined): Filter {
  let condition: Filter;
  if (etag === undefined) condition = {};
  else if (typeof original[config.ETAG] === "string") condition = { [config.ETAG]: etag };
  else {
    condition = withoutKey(original, config.ID_FIELD);
    condition[config.ETAG] = { $exists: false };
  }
  condition[resource.id_field] = original[resource.id_field];
  return condition;
}

/** After a conditional write matched nothing: the item vanished (404) or changed (412). */
export async function conditionalWriteFailed(data: DataLayer, ctx: CallScope, lookup: Filter, etag: string | undefined): Promise<never> {
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
  const same = stored instanceof ObjectId ? String(sent) === objectIdHex(stored) : sent === stored;
  if (!same) throw immutableIdError(idField);
}
