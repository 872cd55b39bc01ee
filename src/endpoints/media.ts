// GET/HEAD `/<MEDIA_ENDPOINT>/<id>`: stored files downloaded, whole or by byte range.
import type { RequestContext } from "../context.ts";
import type { Services } from "../services.ts";
import { HttpError } from "../errors.ts";
import { formatHttpDate, parseHttpDate } from "../render/http-date.ts";
import type { Reply } from "../render/reply.ts";
import { MEDIA_GROUP } from "../routing/router.ts";
import { ObjectId } from "bson";
import type { AccessControl } from "../auth/access.ts";
import { fieldMask, pathVisibility } from "../auth/field-masks.ts";
import { mediaFields } from "../features/media.ts";
import { shadowResource } from "../features/shadow.ts";
import { readRestricted } from "../settings/field-rules.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isObjectIdHex } from "../util/objectid.ts";

type ByteRange = { start: number; end: number } | "unsatisfiable" | null;

/**
 * A single `bytes=` range (RFC 9110): `a-b`, `a-` or the suffix `-n`, clamped to the file.
 * Anything malformed, several ranges or `a > b` is ignored (null: the whole file).
 */
export function byteRange(header: string | null, size: number): ByteRange {
  const match = header ? /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header) : null;
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    return suffix === 0 || size === 0 ? "unsatisfiable" : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  if (match[2] !== "" && Number(match[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1) };
}

/**
 * Per configuration: the media fields whose files not every caller the media endpoint lets in
 * may read — under field rules that restrict reading, in a resource with an owner field
 * (auth_field), or whose items ask more than that endpoint does (their own auth class, public
 * methods or roles). With none, every file is as public as the endpoint, as in Eve.
 */
const guarded = new WeakMap<Config, Array<{ resource: Resource; field: string }>>();

function guardedFields(config: Config, access: AccessControl): Array<{ resource: Resource; field: string }> {
  let fields = guarded.get(config);
  if (!fields) {
    const restricted = (resource: Resource, field: string) => resource.auth_field !== null || access.itemsAskMore(resource) || (resource.field_rules !== null && readRestricted(resource.field_rules, field));
    fields = Object.values(config.DOMAIN).flatMap((resource) => mediaFields(resource).filter((field) => restricted(resource, field)).map((field) => ({ resource, field })));
    guarded.set(config, fields);
  }
  return fields;
}

/**
 * Whether the file is held by a document, or one of its versions, and by none the caller may
 * see with that field: every holder is of a resource or item it may not read, another user's
 * (auth_field), or withheld by field rules. A file's id is never shown to such a caller, but ids
 * can be guessed in part (an ObjectId counts up), so the endpoint looks for its holders. Several
 * resources may read one collection: the file is served through any that shows it.
 */
async function withheldFile(services: Services, ctx: RequestContext, id: string, fields: Array<{ resource: Resource; field: string }>): Promise<boolean> {
  const value = isObjectIdHex(id) ? new ObjectId(id) : id;
  let held = false;
  for (const { resource, field } of fields) {
    const holders = resource.versioning ? [resource, shadowResource(services.config, resource)] : [resource];
    for (const holder of holders) {
      const document = await services.data.findOne(ctx, holder, { [field]: value }, { showDeleted: true, wholeCollection: true });
      if (!document) continue;
      held = true;
      const mask = fieldMask(ctx, resource, "read", document);
      if (mask && pathVisibility(mask, field) === "hidden") continue;
      // A version is the caller's when its document is (the shadow collection has no owner field of its own).
      const own = holder === resource ? { _id: document._id } : { [resource.id_field]: document[resource.id_field + services.config.VERSION_ID_SUFFIX] };
      if ((await services.access.canRead(ctx, resource, true)) && (await services.data.findOne(ctx, resource, own, { showDeleted: true }))) return false;
    }
  }
  return held;
}

const UNTRUSTED_FILE = { "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox" };

/** GET/HEAD `/<MEDIA_ENDPOINT>/<id>`: the file streamed, whole (200/304) or a range (206/416). */
export async function serveMedia(services: Services, ctx: RequestContext): Promise<Reply> {
  const id = ctx.params[MEDIA_GROUP];
  const file = id ? await (await services.data.media(ctx, null)).get(id) : null;
  const guarded = guardedFields(services.config, services.access);
  if (!file || (guarded.length > 0 && (await withheldFile(services, ctx, id!, guarded)))) throw new HttpError(404);
  // The Content-Type is the uploader's: an HTML or SVG file opened from this origin would run its
  // scripts with the API's cookies and storage. A sandboxed, unsniffed document runs none.
  const headers = new Headers({ "Content-Type": file.contentType, "Accept-Ranges": "bytes", "Last-Modified": formatHttpDate(file.uploadDate), ...UNTRUSTED_FILE });
  const range = byteRange(ctx.request.headers.get("range"), file.length);
  if (range === "unsatisfiable") throw new HttpError(416, undefined, { headers: { "Content-Range": `bytes */${file.length}`, "Accept-Ranges": "bytes" } });
  if (!range) {
    const since = parseHttpDate(ctx.request.headers.get("if-modified-since"));
    if (since && Math.floor(file.uploadDate.getTime() / 1000) <= Math.floor(since.getTime() / 1000)) {
      return { status: 304, body: null, raw: new Response(null, { status: 304, headers }) };
    }
  }
  const status = range ? 206 : 200;
  const { start, end } = range ?? { start: 0, end: file.length - 1 };
  headers.set("Content-Length", String(end - start + 1));
  if (range) headers.set("Content-Range", `bytes ${start}-${end}/${file.length}`);
  // Stores hand out bytes they own, so no copy is needed to make them a body.
  const body = ctx.method === "HEAD" || file.length === 0 ? null : ((await file.read(range ?? undefined)) as BodyInit);
  return { status, body: null, raw: new Response(body, { status, headers }) };
}
