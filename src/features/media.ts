// Media fields (Eve's media storage). Files arrive with multipart/form-data, go to the driver's
// MediaStore once the document is valid, and the document keeps their ids (as ObjectIds when
// the store's ids are ones, as Eve's GridFS store has them). Reads send each file as base64,
// as a URL to the media endpoint (src/endpoints/media.ts), or as Eve's extended info. A file
// lives as long as a document or one of its versions uses it.
import { ObjectId } from "bson";
import type { CallScope } from "../scope.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc, MediaFile, MediaStore } from "../drivers/types.ts";
import { bytesToBase64 } from "../render/plain.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { DocumentFeature } from "./pipeline.ts";
import { storedVersions } from "./shadow.ts";
import { isMediaRule } from "../settings/media-rules.ts";
import { isVersionedField } from "../settings/relations.ts";
import { isObjectIdHex, objectIdHex } from "../util/objectid.ts";

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
      .filter(([, rules]) => isMediaRule(rules))
      .map(([field]) => field);
    mediaFieldCache.set(resource, fields);
  }
  return fields;
}

function mediaId(value: unknown): string | null {
  if (value instanceof ObjectId) return objectIdHex(value);
  return typeof value === "string" ? value : null;
}

/** Ids of the files the documents reference. */
function filesOf(resource: Resource, documents: Doc[], fields = mediaFields(resource)): Set<string> {
  const ids = new Set<string>();
  for (const document of documents) {
    for (const field of fields) {
      const value = document[field];
      for (const item of Array.isArray(value) ? value : [value]) {
        const id = mediaId(item);
        if (id !== null) ids.add(id);
      }
    }
  }
  return ids;
}

async function deleteFiles(data: DataLayer, ctx: CallScope, resource: Resource, ids: Iterable<string>): Promise<void> {
  let media: MediaStore | undefined;
  for (const id of ids) {
    media ??= await data.media(ctx, resource);
    await media.delete(id);
  }
}

class MediaFeature implements DocumentFeature {
  constructor(
    private readonly config: Config,
    private readonly data: DataLayer,
  ) {
    const unknown = config.EXTENDED_MEDIA_INFO.filter((name) => !(name in EXTENDED_INFO));
    if (unknown.length) {
      throw new Error(`EXTENDED_MEDIA_INFO: unknown file attribute(s) ${unknown.map((n) => `'${n}'`).join(", ")}; known: ${Object.keys(EXTENDED_INFO).join(", ")}`);
    }
  }

  appliesTo(resource: Resource): boolean {
    return mediaFields(resource).length > 0;
  }

  async beforeInsert(ctx: CallScope, resource: Resource, documents: Doc[]): Promise<void> {
    for (const document of documents) await this.store(ctx, resource, document);
  }

  /** Files are stored before the insert; a resource without media fields stores none. */
  keepsInserts(resource: Resource): boolean {
    return mediaFields(resource).length === 0;
  }

  beforeReplace(ctx: CallScope, resource: Resource, document: Doc): Promise<void> {
    return this.store(ctx, resource, document);
  }

  afterReplace(ctx: CallScope, resource: Resource, document: Doc, original: Doc): Promise<void> {
    return this.release(ctx, resource, document, original);
  }

  beforeUpdate(ctx: CallScope, resource: Resource, updates: Doc): Promise<void> {
    return this.store(ctx, resource, updates);
  }

  afterUpdate(ctx: CallScope, resource: Resource, _updates: Doc, updated: Doc, original: Doc): Promise<void> {
    return this.release(ctx, resource, updated, original);
  }

  /** Runs before versioning drops the copies, which still name the files of older versions. */
  async afterDelete(ctx: CallScope, resource: Resource, original: Doc): Promise<void> {
    await this.afterDeleteMany(ctx, resource, [original]);
  }

  async afterDeleteMany(ctx: CallScope, resource: Resource, originals: Doc[]): Promise<void> {
    if (mediaFields(resource).length === 0) return;
    const versions = await storedVersions(this.data, this.config, ctx, resource, originals.map((d) => d[resource.id_field]));
    await deleteFiles(this.data, ctx, resource, filesOf(resource, [...originals, ...versions]));
  }

  beforeRespond(ctx: CallScope, resource: Resource, document: Doc): Promise<void> {
    return resolveMedia(this.data, this.config, ctx, resource, document);
  }

  /** Uploads in the document → stored files, the document keeping their ids. */
  private async store(ctx: CallScope, resource: Resource, document: Doc): Promise<void> {
    const fields = mediaFields(resource).filter((field) => field in document);
    if (fields.length === 0) return;
    const media = await this.data.media(ctx, resource);
    const put = async (value: unknown) => {
      if (!(value instanceof Blob)) return value;
      const id = await media.put(value, {
        ...(value instanceof File && value.name ? { filename: value.name } : {}),
        ...(value.type ? { contentType: value.type } : {}),
        resource: resource.name,
      });
      return isObjectIdHex(id) ? new ObjectId(id) : id;
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

  /**
   * Files the write replaced, unless older versions of the document still show them: a
   * `versioned: false` field's are in no version (each shows the document's current value), so
   * they go when replaced, as on a resource without versions.
   */
  private async release(ctx: CallScope, resource: Resource, written: Doc, original: Doc): Promise<void> {
    const fields = resource.versioning ? mediaFields(resource).filter((field) => !isVersionedField(resource, field)) : mediaFields(resource);
    if (fields.length === 0) return;
    const kept = filesOf(resource, [written], fields);
    await deleteFiles(this.data, ctx, resource, [...filesOf(resource, [original], fields)].filter((id) => !kept.has(id)));
  }
}

export function mediaFeature(config: Config, data: DataLayer): DocumentFeature {
  return new MediaFeature(config, data);
}

async function readWhole(file: MediaFile): Promise<Uint8Array> {
  const data = await file.read();
  return data instanceof Uint8Array ? data : new Uint8Array(await new Response(data).arrayBuffer());
}

/**
 * What a write response drops (BANDWIDTH_SAVER) or a HEAD never sends is not worth reading.
 */
function wanted(ctx: CallScope, resource: Resource, field: string): boolean {
  if (ctx.method === "HEAD") return false;
  if (ctx.method === "GET") return true;
  return !resource.bandwidth_saver || resource.extra_response_fields.includes(field);
}

/** Eve's `resolve_media_files`: file ids → what the client gets; a missing file → null. */
export async function resolveMedia(data: DataLayer, config: Config, ctx: CallScope, resource: Resource, document: Doc): Promise<void> {
  const fields = mediaFields(resource).filter((field) => field in document && wanted(ctx, resource, field));
  if (fields.length === 0) return;
  const media = await data.media(ctx, resource);
  for (const field of fields) {
    const value = document[field];
    if (!Array.isArray(value)) {
      document[field] = await present(config, ctx, media, value);
      continue;
    }
    const resolved: unknown[] = [];
    for (const item of value) resolved.push(await present(config, ctx, media, item));
    document[field] = resolved;
  }
}

async function present(config: Config, ctx: CallScope, media: MediaStore, value: unknown): Promise<unknown> {
  const id = mediaId(value);
  const file = id === null ? null : await media.get(id);
  if (!file) return null;
  let sent: unknown = null;
  if (config.RETURN_MEDIA_AS_BASE64_STRING && !ctx.mediaAsUrl) sent = bytesToBase64(await readWhole(file));
  else if (config.RETURN_MEDIA_AS_URL || ctx.mediaAsUrl) sent = `${config.MEDIA_BASE_URL ?? config.basePath}/${config.MEDIA_ENDPOINT}/${id}`;
  if (config.EXTENDED_MEDIA_INFO.length === 0) return sent;
  const info: Doc = { file: sent };
  for (const name of config.EXTENDED_MEDIA_INFO) info[name] = EXTENDED_INFO[name]!(file);
  return info;
}
