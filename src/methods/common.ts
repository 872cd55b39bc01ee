// What the write and read methods share: the reply shape, payload parsing, item lookups,
// the If-Match protocol and the meta fields.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { HttpError, badRequest } from "../errors.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { bareEtag } from "../render/etag.ts";
import { castUntyped, isPrototypeKey } from "../query/common.ts";
import { BodyError, readTextWithin } from "../http/body.ts";

/** What a method hands to the renderer. */
export interface Reply {
  status: number;
  /** null: no body (204, 304). */
  body: Record<string, unknown> | null;
  /** Unquoted; sent as the ETag header. */
  etag?: string;
  lastModified?: Date;
  headers?: Record<string, string>;
  /** A finished response (media downloads) that bypasses rendering. */
  raw?: Response;
}

/** Refuses prototype keys and absurd nesting anywhere in a parsed JSON value. */
export function checkJsonShape(value: unknown, maxDepth: number, depth = 0): void {
  if (depth > maxDepth) throw new HttpError(400, `The JSON document is nested deeper than ${maxDepth} levels`);
  if (Array.isArray(value)) {
    for (const item of value) checkJsonShape(item, maxDepth, depth + 1);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (isPrototypeKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
      checkJsonShape(item, maxDepth, depth + 1);
    }
  }
}

/** Reads the body as text, refusing more than MAX_BODY_SIZE bytes before reading them all. */
export async function readBodyText(ctx: RequestContext): Promise<string> {
  if (ctx.bodyText !== undefined) return ctx.bodyText;
  try {
    ctx.bodyText = await readTextWithin(ctx.request, ctx.app.config.MAX_BODY_SIZE);
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    throw error.problem === "too-large" ? new HttpError(413) : new HttpError(400, "The request body is not valid UTF-8");
  }
  return ctx.bodyText;
}

function parseJsonBody(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("malformed JSON");
  }
  checkJsonShape(value, maxDepth);
  return value;
}

/**
 * The request payload as Eve's `payload()` reads it: JSON (JSON_REQUEST_CONTENT_TYPES, and any
 * `+json` type), or flat form fields. Media uploads
 * (multipart/form-data) are parsed by the media feature, which registers itself here.
 */
export async function readPayload(ctx: RequestContext): Promise<unknown> {
  if (ctx.payload !== undefined) return ctx.payload;
  const contentType = (ctx.request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const config = ctx.app.config;
  if (config.JSON_REQUEST_CONTENT_TYPES.includes(contentType) || contentType.endsWith("+json")) {
    return parseJsonBody(await readBodyText(ctx), config.MAX_JSON_DEPTH);
  }
  if (contentType === "application/x-www-form-urlencoded") {
    const form = new URLSearchParams(await readBodyText(ctx));
    const doc: Record<string, unknown> = {};
    for (const [key, value] of form) {
      if (isPrototypeKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
      // A repeated key keeps its first value, or all of them in a list with AUTO_COLLAPSE_MULTI_KEYS.
      if (!(key in doc)) doc[key] = value;
      else if (config.AUTO_COLLAPSE_MULTI_KEYS) doc[key] = [doc[key], value].flat();
    }
    if (Object.keys(doc).length === 0) throw new HttpError(400, "No form-urlencoded data supplied");
    return doc;
  }
  if (contentType === "multipart/form-data" && ctx.app.multipart) {
    return ctx.app.multipart(ctx);
  }
  throw new HttpError(400, "Unknown or no payload format supplied");
}

/** A JSON object payload, as PATCH and PUT require. */
export async function readDocument(ctx: RequestContext): Promise<Doc> {
  const payload = await readPayload(ctx);
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
    throw new HttpError(400, "The request body must be a JSON object");
  }
  return payload as Doc;
}

/**
 * A lookup value from the URL, typed by its field's schema (ids become ObjectIds). A field the
 * schema does not type gets Eve's cast of query values: 24 hex digits are an ObjectId (unless
 * query_objectid_as_string), a DATE_FORMAT date a datetime.
 */
export function convertPathValue(resource: Resource, field: string, value: string, config: Config): unknown {
  const idField = config.ID_FIELD;
  const type = resource.schema[field]?.type ?? (field === idField ? "objectid" : undefined);
  if (type === undefined) return castUntyped(value, resource, config);
  if (type === "objectid" && /^[0-9a-fA-F]{24}$/.test(value) && !resource.query_objectid_as_string) return new ObjectId(value);
  if (type === "integer" && /^-?\d+$/.test(value)) return Number(value);
  if ((type === "number" || type === "float") && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** Conditions from sub-resource URL segments (`lists/<…:list_id>/items`). */
export function pathConditions(ctx: RequestContext, resource: Resource): Filter {
  const conditions: Filter = {};
  for (const param of resource.urlParams) {
    const raw = ctx.params[param.name];
    if (raw !== undefined) conditions[param.name] = convertPathValue(resource, param.name, raw, ctx.app.config);
  }
  return conditions;
}

/**
 * The sub-resource segments a written document takes from its URL: those the schema declares
 * are validated with the document; the others are stored as they are after validation, or the
 * document would be refused as unknown, or stored where its own URL cannot find it (Eve drops them).
 */
export function pathFields(ctx: RequestContext, resource: Resource): { declared: Doc; undeclared: Doc } {
  const declared: Doc = {};
  const undeclared: Doc = {};
  for (const [field, value] of Object.entries(pathConditions(ctx, resource))) {
    if (field in resource.schema) declared[field] = value;
    else undeclared[field] = value;
  }
  return { declared, undeclared };
}

/** The item lookup of an item request, sub-resource segments included. */
export function itemLookup(ctx: RequestContext): Filter {
  const resource = ctx.resource!;
  const field = ctx.endpoint.lookupField ?? ctx.app.config.ID_FIELD;
  const value = convertPathValue(resource, field, ctx.params.lookup ?? "", ctx.app.config);
  return { ...pathConditions(ctx, resource), [field]: value };
}

/** Loads the item a write targets, soft-deleted ones included (they can be restored). */
export async function loadOriginal(ctx: RequestContext, lookup: Filter): Promise<Doc> {
  const original = await ctx.app.data.findOne(ctx, ctx.resource!, lookup, { showDeleted: true });
  if (!original) throw new HttpError(404);
  return original;
}

/**
 * Eve's concurrency control. Returns the ETag the write must still match in the database
 * (so the check and the write are one atomic operation), or undefined for an unconditional write.
 */
export function requiredEtag(ctx: RequestContext, original: Doc): string | undefined {
  const resource = ctx.resource!;
  const config = ctx.app.config;
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
export async function conditionalWriteFailed(ctx: RequestContext, lookup: Filter, etag: string | undefined): Promise<never> {
  const current = await ctx.app.data.findOne(ctx, ctx.resource!, lookup, { showDeleted: true });
  if (current && etag !== undefined) throw new HttpError(412, "Client and server etags don't match");
  throw new HttpError(404);
}

/** Now, to the second: Eve stores dates without sub-second precision. */
export function now(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

/** Only meta fields (and extra_response_fields) go back on writes when BANDWIDTH_SAVER is on. */
export function marshalWriteResponse(ctx: RequestContext, document: Doc): Doc {
  const resource = ctx.resource!;
  if (!resource.bandwidth_saver) return document;
  const config = ctx.app.config;
  const keep = new Set<string>([config.ID_FIELD, config.LAST_UPDATED, config.DATE_CREATED, config.ETAG, config.LINKS, config.STATUS, config.ISSUES, ...resource.extra_response_fields]);
  if (resource.versioning) {
    keep.add(config.VERSION);
    keep.add(config.LATEST_VERSION);
  }
  if (resource.soft_delete) keep.add(config.DELETED);
  const out: Doc = {};
  for (const [key, value] of Object.entries(document)) if (keep.has(key)) out[key] = value;
  return out;
}

/** Rejects a payload that tries to change the id (Eve's immutable-field 400). */
export function checkImmutableId(ctx: RequestContext, payload: Doc, original: Doc): void {
  const idField = ctx.app.config.ID_FIELD;
  if (!(idField in payload)) return;
  const sent = payload[idField];
  const stored = original[idField];
  const same = stored instanceof ObjectId ? String(sent) === stored.toHexString() : sent === stored;
  if (!same) {
    throw new HttpError(
      400,
      `Attempt to update an immutable field. Usually happens when PATCH or PUT include a '${idField}' field, which is immutable (PUT can include it as long as it is unchanged).`,
    );
  }
}
