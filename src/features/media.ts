// Media fields (Eve's media storage). Files arrive with multipart/form-data, go to the driver's
// MediaStore once the document is valid, and the document keeps their ids (as ObjectIds when
// the store's ids are ones, as Eve's GridFS store has them). Reads send each file as base64,
// as a URL to the media endpoint, or as Eve's extended info; the media endpoint serves files
// whole or by byte range. A file lives as long as a document or one of its versions uses it.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { Doc, MediaFile, MediaStore } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { checkJsonShape, type Reply } from "../methods/common.ts";
import { isPrototypeKey } from "../query/common.ts";
import { formatHttpDate, parseHttpDate } from "../render/http-date.ts";
import { bytesToBase64 } from "../render/plain.ts";
import { MEDIA_GROUP } from "../routing/router.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { DocumentFeature } from "./pipeline.ts";
import { storedVersions } from "./versioning.ts";

/** EXTENDED_MEDIA_INFO names, as the attributes of Eve's GridFS files are called. */
const EXTENDED_INFO: Record<string, (file: MediaFile) => unknown> = {
  content_type: (file) => file.contentType,
  name: (file) => file.filename ?? null,
  filename: (file) => file.filename ?? null,
  length: (file) => file.length,
  upload_date: (file) => file.uploadDate,
};

const mediaFieldCache = new WeakMap<Resource, string[]>();

/** Top-level fields holding a file or a list of files (Eve's `_media`). */
export function mediaFields(resource: Resource): string[] {
  let fields = mediaFieldCache.get(resource);
  if (!fields) {
    fields = Object.entries(resource.schema)
      .filter(([, rules]) => rules?.type === "media" || (rules?.type === "list" && (rules.schema as { type?: unknown } | undefined)?.type === "media"))
      .map(([field]) => field);
    mediaFieldCache.set(resource, fields);
  }
  return fields;
}

function mediaId(value: unknown): string | null {
  if (value instanceof ObjectId) return value.toHexString();
  return typeof value === "string" ? value : null;
}

/** Ids of the files the documents reference. */
function filesOf(resource: Resource, documents: Doc[]): Set<string> {
  const ids = new Set<string>();
  for (const document of documents) {
    for (const field of mediaFields(resource)) {
      const value = document[field];
      for (const item of Array.isArray(value) ? value : [value]) {
        const id = mediaId(item);
        if (id !== null) ids.add(id);
      }
    }
  }
  return ids;
}

async function deleteFiles(ctx: RequestContext, resource: Resource, ids: Iterable<string>): Promise<void> {
  let media: MediaStore | undefined;
  for (const id of ids) {
    media ??= await ctx.app.data.media(ctx, resource);
    await media.delete(id);
  }
}

class MediaFeature implements DocumentFeature {
  constructor(config: Config) {
    const unknown = config.EXTENDED_MEDIA_INFO.filter((name) => !(name in EXTENDED_INFO));
    if (unknown.length) {
      throw new Error(`EXTENDED_MEDIA_INFO: unknown file attribute(s) ${unknown.map((n) => `'${n}'`).join(", ")}; known: ${Object.keys(EXTENDED_INFO).join(", ")}`);
    }
  }

  async beforeInsert(ctx: RequestContext, resource: Resource, documents: Doc[]): Promise<void> {
    for (const document of documents) await this.store(ctx, resource, document);
  }

  beforeReplace(ctx: RequestContext, resource: Resource, document: Doc): Promise<void> {
    return this.store(ctx, resource, document);
  }

  afterReplace(ctx: RequestContext, resource: Resource, document: Doc, original: Doc): Promise<void> {
    return this.release(ctx, resource, document, original);
  }

  beforeUpdate(ctx: RequestContext, resource: Resource, updates: Doc): Promise<void> {
    return this.store(ctx, resource, updates);
  }

  afterUpdate(ctx: RequestContext, resource: Resource, _updates: Doc, updated: Doc, original: Doc): Promise<void> {
    return this.release(ctx, resource, updated, original);
  }

  /** Runs before versioning drops the copies, which still name the files of older versions. */
  async afterDelete(ctx: RequestContext, resource: Resource, original: Doc): Promise<void> {
    await this.afterDeleteMany(ctx, resource, [original]);
  }

  async afterDeleteMany(ctx: RequestContext, resource: Resource, originals: Doc[]): Promise<void> {
    if (mediaFields(resource).length === 0) return;
    const versions = await storedVersions(ctx, resource, originals.map((d) => d[ctx.app.config.ID_FIELD]));
    await deleteFiles(ctx, resource, filesOf(resource, [...originals, ...versions]));
  }

  beforeRespond(ctx: RequestContext, resource: Resource, document: Doc): Promise<void> {
    return resolveMedia(ctx, resource, document);
  }

  /** Uploads in the document → stored files, the document keeping their ids. */
  private async store(ctx: RequestContext, resource: Resource, document: Doc): Promise<void> {
    const fields = mediaFields(resource).filter((field) => field in document);
    if (fields.length === 0) return;
    const media = await ctx.app.data.media(ctx, resource);
    const put = async (value: unknown) => {
      if (!(value instanceof Blob)) return value;
      const id = await media.put(value, {
        ...(value instanceof File && value.name ? { filename: value.name } : {}),
        ...(value.type ? { contentType: value.type } : {}),
        resource: resource.name,
      });
      return /^[0-9a-f]{24}$/.test(id) ? new ObjectId(id) : id;
    };
    for (const field of fields) {
      const value = document[field];
      if (!Array.isArray(value)) {
        document[field] = await put(value);
        continue;
      }
      const ids: unknown[] = [];
      for (const item of value) ids.push(await put(item));
      document[field] = ids;
    }
  }

  /** Files the write replaced, unless older versions of the document still show them. */
  private async release(ctx: RequestContext, resource: Resource, written: Doc, original: Doc): Promise<void> {
    if (resource.versioning || mediaFields(resource).length === 0) return;
    const kept = filesOf(resource, [written]);
    await deleteFiles(ctx, resource, [...filesOf(resource, [original])].filter((id) => !kept.has(id)));
  }
}

export function mediaFeature(config: Config): DocumentFeature {
  return new MediaFeature(config);
}

async function readWhole(file: MediaFile): Promise<Uint8Array> {
  const data = await file.read();
  return data instanceof Uint8Array ? data : new Uint8Array(await new Response(data).arrayBuffer());
}

/**
 * What a write response drops (BANDWIDTH_SAVER) or a HEAD never sends is not worth reading.
 */
function wanted(ctx: RequestContext, resource: Resource, field: string): boolean {
  if (ctx.method === "HEAD") return false;
  if (ctx.method === "GET") return true;
  return !resource.bandwidth_saver || resource.extra_response_fields.includes(field);
}

/** Eve's `resolve_media_files`: file ids → what the client gets; a missing file → null. */
export async function resolveMedia(ctx: RequestContext, resource: Resource, document: Doc): Promise<void> {
  const fields = mediaFields(resource).filter((field) => field in document && wanted(ctx, resource, field));
  if (fields.length === 0) return;
  const media = await ctx.app.data.media(ctx, resource);
  for (const field of fields) {
    const value = document[field];
    if (!Array.isArray(value)) {
      document[field] = await present(ctx.app.config, media, value);
      continue;
    }
    const resolved: unknown[] = [];
    for (const item of value) resolved.push(await present(ctx.app.config, media, item));
    document[field] = resolved;
  }
}

async function present(config: Config, media: MediaStore, value: unknown): Promise<unknown> {
  const id = mediaId(value);
  const file = id === null ? null : await media.get(id);
  if (!file) return null;
  let sent: unknown = null;
  if (config.RETURN_MEDIA_AS_BASE64_STRING) sent = bytesToBase64(await readWhole(file));
  else if (config.RETURN_MEDIA_AS_URL) sent = `${config.MEDIA_BASE_URL ?? config.basePath}/${config.MEDIA_ENDPOINT}/${id}`;
  if (config.EXTENDED_MEDIA_INFO.length === 0) return sent;
  const info: Doc = { file: sent };
  for (const name of config.EXTENDED_MEDIA_INFO) info[name] = EXTENDED_INFO[name]!(file);
  return info;
}

/** The body as FormData, refused (413) past MAX_BODY_SIZE before it is all read. */
async function readForm(ctx: RequestContext): Promise<FormData> {
  const limit = ctx.app.config.MAX_BODY_SIZE;
  if (Number(ctx.request.headers.get("content-length") ?? NaN) > limit) throw new HttpError(413);
  let size = 0;
  let tooLarge = false;
  const chunks: Uint8Array[] = [];
  const contentType = ctx.request.headers.get("content-type") ?? "";
  const source = ctx.bodyText !== undefined ? new Response(ctx.bodyText).body : ctx.request.body;
  const counted = source?.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size <= limit) {
          chunks.push(chunk);
          controller.enqueue(chunk);
        } else {
          tooLarge = true;
          controller.error(new HttpError(413));
        }
      },
    }),
  );
  let form: FormData;
  try {
    form = await new Response(counted ?? null, { headers: { "Content-Type": contentType } }).formData();
  } catch (error) {
    if (tooLarge) throw new HttpError(413);
    throw new HttpError(400, "Malformed multipart/form-data", { cause: error });
  }
  return [...form.values()].includes("") ? withEmptyFiles(form, chunks, contentType) : form;
}

/**
 * workerd gives a file part with an empty filename — what a browser sends for a file input left
 * empty — as the string "" (cloudflare/workerd#875); such entries become the empty File every
 * other runtime gives, found by reading the parts' headers.
 */
async function withEmptyFiles(form: FormData, chunks: Uint8Array[], contentType: string): Promise<FormData> {
  const boundary = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const parts = (await new Blob(chunks as BlobPart[]).text())
    .split(`--${boundary?.[1] ?? boundary?.[2]}`)
    .slice(1, -1)
    .map((part) => {
      const disposition = /^content-disposition:(.*)$/im.exec(part.slice(0, part.indexOf("\r\n\r\n")))?.[1] ?? "";
      return { name: /;\s*name="([^"]*)"/i.exec(disposition)?.[1], file: /;\s*filename\*?=/i.test(disposition) };
    });
  const fixed = new FormData();
  let at = 0;
  for (const [key, value] of form) {
    while (at < parts.length && parts[at]!.name !== key) at++;
    const part = parts[at++];
    fixed.append(key, value === "" && part?.file ? new File([], "") : value);
  }
  return fixed;
}

/**
 * Eve's multipart `payload()`: form fields (JSON-decoded with MULTIPART_FORM_FIELDS_AS_JSON)
 * merged with the files; a repeated key keeps its first value unless AUTO_COLLAPSE_MULTI_KEYS
 * makes a list of them, and AUTO_CREATE_LISTS turns one value of a list field into a list.
 */
export async function readMultipart(ctx: RequestContext): Promise<Doc> {
  const config = ctx.app.config;
  const form = await readForm(ctx);
  const fields = new Map<string, unknown[]>();
  const files = new Map<string, unknown[]>();
  const add = (into: Map<string, unknown[]>, key: string, value: unknown) => {
    if (isPrototypeKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
    into.set(key, [...(into.get(key) ?? []), value]);
  };
  for (const [key, value] of form) {
    if (typeof value === "string") add(fields, key, config.MULTIPART_FORM_FIELDS_AS_JSON ? jsonField(value, config.MAX_JSON_DEPTH) : value);
    // A file input left empty still sends a part, with no name and no content. Bun gives that
    // part's File an undefined name rather than "", so a missing name counts as empty too.
    else if (value.name || value.size > 0) add(files, key, value);
  }
  if (fields.size === 0 && files.size === 0) throw new HttpError(400, "No multipart/form-data supplied");

  const document: Doc = {};
  for (const key of new Set([...fields.keys(), ...files.keys()])) {
    const values = [...(fields.get(key) ?? []), ...(files.get(key) ?? [])];
    document[key] = config.AUTO_COLLAPSE_MULTI_KEYS && values.length > 1 ? values : values[0];
  }
  if (config.AUTO_CREATE_LISTS) {
    for (const [field, rules] of Object.entries(ctx.resource?.schema ?? {})) {
      if (rules?.type === "list" && field in document && !Array.isArray(document[field])) document[field] = [document[field]];
    }
  }
  return document;
}

/** A JSON-encoded form value; text that is not JSON stays the string it is (Eve quotes it). */
function jsonField(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  checkJsonShape(value, maxDepth);
  return value;
}

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

/** GET/HEAD `/<MEDIA_ENDPOINT>/<id>`: the file streamed, whole (200/304) or a range (206/416). */
export async function serveMedia(ctx: RequestContext): Promise<Reply> {
  const id = ctx.params[MEDIA_GROUP];
  const file = id ? await (await ctx.app.data.media(ctx, null)).get(id) : null;
  if (!file) throw new HttpError(404);
  const headers = new Headers({ "Content-Type": file.contentType, "Accept-Ranges": "bytes", "Last-Modified": formatHttpDate(file.uploadDate) });
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
