// The request body as Eve's `payload()` reads it: JSON, flat form fields or multipart, read once
// and kept on the request context (an auth check such as HMAC may read it before the method).
import type { RequestContext } from "../context.ts";
import type { Doc } from "../drivers/types.ts";
import { HttpError, badRequest } from "../errors.ts";
import { BodyError, readTextWithin } from "../http/body.ts";
import { checkJsonShape } from "../http/json-shape.ts";
import type { Config } from "../settings/normalize.ts";
import { isRefusedKey } from "../util/objects.ts";

/**
 * Reads the body as text, refusing more than the request's body limit before reading it all.
 * Not async, nor readPayload's JSON path: a write's body then comes through four promises, not
 * seven (bench/README.md, "A seventh pass").
 */
export function readBodyText(ctx: RequestContext): Promise<string> {
  if (ctx.bodyText !== undefined) return Promise.resolve(ctx.bodyText);
  return readTextWithin(ctx.request, ctx.maxBodySize).then((text) => (ctx.bodyText = text), bodyFailure);
}

function bodyFailure(error: unknown): never {
  if (!(error instanceof BodyError)) throw error;
  throw error.problem === "too-large" ? new HttpError(413) : new HttpError(400, error.message);
}

/** A JSON body parsed and its shape checked (src/http/json-shape.ts), or the 400 saying why not. */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("malformed JSON");
  }
  checkJsonShape(value, maxDepth);
  return value;
}

/** JSON (JSON_REQUEST_CONTENT_TYPES, and any `+json` type), or flat form fields, or multipart/form-data with files. */
export function readPayload(ctx: RequestContext, config: Config): Promise<unknown> {
  const contentType = (ctx.request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (config.JSON_REQUEST_CONTENT_TYPES.includes(contentType) || contentType.endsWith("+json")) {
    return readBodyText(ctx).then((text) => parseJsonBody(text, config.MAX_JSON_DEPTH));
  }
  return readOtherPayload(ctx, config, contentType);
}

async function readOtherPayload(ctx: RequestContext, config: Config, contentType: string): Promise<unknown> {
  if (contentType === "application/x-www-form-urlencoded") {
    const form = new URLSearchParams(await readBodyText(ctx));
    const doc: Record<string, unknown> = {};
    for (const [key, value] of form) {
      if (isRefusedKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
      // A repeated key keeps its first value, or all of them in a list with AUTO_COLLAPSE_MULTI_KEYS.
      if (!(key in doc)) doc[key] = value;
      else if (config.AUTO_COLLAPSE_MULTI_KEYS) doc[key] = [doc[key], value].flat();
    }
    if (Object.keys(doc).length === 0) throw new HttpError(400, "No form-urlencoded data supplied");
    checkJsonShape(doc, config.MAX_JSON_DEPTH);
    return doc;
  }
  // Imported on first use: most APIs never receive a form upload (and a Worker's bundle loads it apart).
  if (contentType === "multipart/form-data") return (await import("./multipart.ts")).readMultipart(ctx, config);
  throw new HttpError(400, "Unknown or no Content-Type header supplied");
}

/**
 * The payload of an item write, read only when the write gets that far: a missing item (404) or
 * a stale ETag (412) is answered before the body is looked at, as Eve's patch_internal does.
 * The HTTP methods read the request body; server code (src/internal.ts) hands a value over.
 */
export type PayloadSource = () => Promise<unknown>;

/** A JSON object payload, as PATCH and PUT require. */
export function requireDocument(payload: unknown): Doc {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
    throw new HttpError(400, "The request body must be a JSON object");
  }
  return payload as Doc;
}
