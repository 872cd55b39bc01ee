// Document versioning (Eve's eve/versioning.py). Every write of a versioned resource also stores
// a copy of the document's versioned fields in the shadow collection `<source><VERSIONS>`, keyed
// by `<ID_FIELD><VERSION_ID_SUFFIX>` and `<VERSION>`; an older version is rebuilt from the
// current document (its unversioned fields) plus that copy. Reads: `?version=N|all|diffs`.
import type { RequestContext } from "../context.ts";
import type { Doc, Filter, Projection } from "../drivers/types.ts";
import { badRequest, HttpError } from "../errors.ts";
import type { Reply } from "../methods/common.ts";
import { buildResponseDocument } from "../methods/document.ts";
import { pageMeta, parsePaging } from "../query/paging.ts";
import { parseSort } from "../query/sort.ts";
import { etagSource } from "../render/etag.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { embedDocuments } from "./embedding.ts";
import { documentLink, paginationLinks, type Link } from "./hateoas.ts";
import type { DocumentFeature } from "./pipeline.ts";

const shadows = new WeakMap<Resource, Resource>();

/**
 * The shadow collection as a resource of its own, as Eve registers `<resource><VERSIONS>`: no
 * schema (so none of the resource's unique indexes), indexed on (document id, version), read
 * only by the id of a document the caller could already read, so without the datasource filter
 * or the auth_field condition. Soft-deleted versions stay hidden unless asked for.
 */
export function shadowResource(config: Config, resource: Resource): Resource {
  let shadow = shadows.get(resource);
  if (!shadow) {
    const pointer = versionedIdField(config);
    shadow = {
      ...resource,
      name: resource.name + config.VERSIONS,
      schema: {},
      versioning: false,
      auth_field: null,
      datasource: { source: resource.datasource.source + config.VERSIONS, filter: null, projection: null, default_sort: null, aggregation: null },
      mongo_indexes: { [`${pointer}_${config.VERSION}`]: [[pointer, 1], [config.VERSION, 1]] },
    };
    shadows.set(resource, shadow);
  }
  return shadow;
}

/** `people_versions` → the shadow resource of `people` (what a versioned data_relation looks in). */
export function shadowByName(config: Config, name: string): Resource | undefined {
  if (!name.endsWith(config.VERSIONS)) return undefined;
  const resource = config.DOMAIN[name.slice(0, -config.VERSIONS.length)];
  return resource?.versioning ? shadowResource(config, resource) : undefined;
}

export function versionedIdField(config: Config): string {
  return config.ID_FIELD + config.VERSION_ID_SUFFIX;
}

/** Eve's `versioned_fields`: schema fields not marked `versioned: false`, plus three meta fields. */
function versionedFields(config: Config, resource: Resource): Set<string> {
  const fields = Object.entries(resource.schema)
    .filter(([field, rules]) => field !== config.ID_FIELD && (rules?.versioned === undefined || rules.versioned === true))
    .map(([field]) => field);
  return new Set([...fields, config.LAST_UPDATED, config.ETAG, config.DELETED]);
}

function shadowCopy(config: Config, resource: Resource, document: Doc): Doc {
  const fields = versionedFields(config, resource);
  const copy: Doc = {};
  for (const [field, value] of Object.entries(document)) if (fields.has(field)) copy[field] = value;
  copy[versionedIdField(config)] = document[config.ID_FIELD];
  copy[config.VERSION] = document[config.VERSION];
  return copy;
}

/** Eve's `synthesize_versioned_document`: the current document's unversioned fields + the copy's. */
export function synthesize(config: Config, resource: Resource, latest: Doc, copy: Doc): Doc {
  const fields = versionedFields(config, resource);
  const document: Doc = {};
  for (const [field, value] of Object.entries(latest)) if (!fields.has(field)) document[field] = value;
  const { [versionedIdField(config)]: id, [config.ID_FIELD]: _shadowId, ...versioned } = copy;
  return Object.assign(document, versioned, { [config.ID_FIELD]: id });
}

/** A document stored before versioning was turned on counts as version 1. */
function versionOf(config: Config, document: Doc): number {
  const version = document[config.VERSION];
  return typeof version === "number" ? version : 1;
}

/** The version a write of `original` produces. */
function nextVersion(config: Config, original: Doc): number {
  return versionOf(config, original) + 1;
}

class VersioningFeature implements DocumentFeature {
  constructor(private readonly config: Config) {}

  beforeInsert(_ctx: RequestContext, resource: Resource, documents: Doc[]): void {
    if (resource.versioning) for (const document of documents) document[this.config.VERSION] = 1;
  }

  async afterInsert(ctx: RequestContext, resource: Resource, documents: Doc[]): Promise<void> {
    if (!resource.versioning) return;
    await ctx.app.data.insert(ctx, shadowResource(this.config, resource), documents.map((d) => shadowCopy(this.config, resource, d)));
  }

  beforeReplace(_ctx: RequestContext, resource: Resource, document: Doc, original: Doc): void {
    if (resource.versioning) document[this.config.VERSION] = nextVersion(this.config, original);
  }

  afterReplace(ctx: RequestContext, resource: Resource, document: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, document, original);
  }

  beforeUpdate(_ctx: RequestContext, resource: Resource, updates: Doc, original: Doc): void {
    if (resource.versioning) updates[this.config.VERSION] = nextVersion(this.config, original);
  }

  afterUpdate(ctx: RequestContext, resource: Resource, _updates: Doc, updated: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, updated, original);
  }

  beforeSoftDelete(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc): void {
    this.beforeReplace(ctx, resource, marked, original);
  }

  afterSoftDelete(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, marked, original);
  }

  async afterDelete(ctx: RequestContext, resource: Resource, original: Doc): Promise<void> {
    if (!resource.versioning) return;
    await ctx.app.data.removeMany(ctx, shadowResource(this.config, resource), { [versionedIdField(this.config)]: original[this.config.ID_FIELD] });
  }

  async afterDeleteMany(ctx: RequestContext, resource: Resource, originals: Doc[]): Promise<void> {
    if (!resource.versioning) return;
    const ids = originals.map((d) => d[this.config.ID_FIELD]);
    await ctx.app.data.removeMany(ctx, shadowResource(this.config, resource), { [versionedIdField(this.config)]: { $in: ids } });
  }

  /** Eve's `resolve_document_version` for reads, and the self link of a version request. */
  beforeRespond(ctx: RequestContext, resource: Resource, document: Doc, latest: Doc): void {
    if (!resource.versioning) return;
    const config = this.config;
    document[config.VERSION] = latest[config.VERSION] === undefined ? 1 : (document[config.VERSION] ?? 1);
    document[config.LATEST_VERSION] = versionOf(config, latest);
    const links = document[config.LINKS] as Record<string, unknown> | undefined;
    if (links?.self && ctx.args.get(config.VERSION_PARAM)) {
      links.self = documentLink(ctx, resource, document[config.ID_FIELD], document[config.VERSION]);
    }
  }

  /**
   * Eve's `late_versioning_catch` then `insert_versioning_documents`: a document written before
   * versioning was turned on (or whose version field was removed) gets its copy as version 1
   * first, so numbering goes on from 2. Copies are written once the write has succeeded.
   */
  private async record(ctx: RequestContext, resource: Resource, written: Doc, original: Doc): Promise<void> {
    if (!resource.versioning) return;
    const config = this.config;
    const copies: Doc[] = [];
    if (original[config.VERSION] === undefined) copies.push(shadowCopy(config, resource, { ...original, [config.VERSION]: 1 }));
    copies.push(shadowCopy(config, resource, written));
    await ctx.app.data.insert(ctx, shadowResource(config, resource), copies);
  }
}

export function versioningFeature(config: Config): DocumentFeature {
  return new VersioningFeature(config);
}

/** Stored copies of the given documents, all versions (for features that own data they reference). */
export async function storedVersions(ctx: RequestContext, resource: Resource, ids: unknown[]): Promise<Doc[]> {
  if (!resource.versioning || ids.length === 0) return [];
  const config = ctx.app.config;
  const { documents } = await ctx.app.data.find(ctx, shadowResource(config, resource), {
    filter: { [versionedIdField(config)]: { $in: ids } },
    showDeleted: true,
    count: false,
  });
  return documents;
}

/**
 * The documents versioned references (`{<field>: …, <VERSION>: n}`) point to, in order: each
 * version rebuilt and made ready to send, or null when the document, the version, or the
 * version's being live (a soft-deleted version is gone) is missing. Two queries whatever the
 * number of references: the current documents, then the copies.
 */
export async function referencedVersions(ctx: RequestContext, target: Resource, field: string, refs: Doc[]): Promise<Array<Doc | null>> {
  const config = ctx.app.config;
  const pointer = versionedIdField(config);
  const { documents: currents } = await ctx.app.data.find(ctx, target, {
    filter: { [field]: { $in: refs.map((ref) => ref[field]) } },
    projection: target.datasource.projection,
    showDeleted: true,
    count: false,
  });
  const currentOf = new Map(currents.map((doc) => [etagSource(doc[field]), doc]));
  const copyKey = (id: unknown, version: unknown) => `${etagSource(id)}@${etagSource(version)}`;
  const wanted = refs.flatMap((ref) => {
    const current = currentOf.get(etagSource(ref[field]));
    return current ? [{ [pointer]: current[config.ID_FIELD], [config.VERSION]: ref[config.VERSION] }] : [];
  });
  const { documents: copies } = wanted.length
    ? await ctx.app.data.find(ctx, shadowResource(config, target), { filter: { $or: wanted }, count: false })
    : { documents: [] };
  const copyOf = new Map(copies.map((copy) => [copyKey(copy[pointer], copy[config.VERSION]), copy]));

  const resolved: Array<Doc | null> = [];
  for (const ref of refs) {
    const current = currentOf.get(etagSource(ref[field]));
    const copy = current && copyOf.get(copyKey(current[config.ID_FIELD], ref[config.VERSION]));
    // A document stored before versioning was turned on is its own version 1.
    const legacy = current && !copy && ref[config.VERSION] === 1 && current[config.VERSION] === undefined;
    const document = copy ? synthesize(config, target, current, copy) : legacy ? current : null;
    resolved.push(document && (await buildResponseDocument(ctx, document, target, { latest: current })));
  }
  return resolved;
}

export type VersionRequest = number | "all" | "diffs" | null;

/** `?version=`: null when absent or the resource is not versioned; Eve's 400 for a bad number. */
export function requestedVersion(ctx: RequestContext, resource: Resource): VersionRequest {
  if (!resource.versioning) return null;
  const raw = ctx.args.get(ctx.app.config.VERSION_PARAM);
  if (raw === null || raw === "all" || raw === "diffs") return raw;
  const text = raw.trim();
  // Python's int(): optional sign, digits with single underscores between them.
  const number = /^[+-]?\d(?:_?\d)*$/.test(text) ? Number(text.replace(/_/g, "")) : NaN;
  if (!(number > 0) || !Number.isSafeInteger(number)) throw badRequest("Document version number should be an int greater than 0");
  return number;
}

/** One older version of `latest`, rebuilt; 404 when there is no such version. */
export async function storedVersion(ctx: RequestContext, resource: Resource, latest: Doc, version: number, projection: Projection | null): Promise<Doc> {
  const config = ctx.app.config;
  const { documents } = await ctx.app.data.find(ctx, shadowResource(config, resource), {
    filter: { [versionedIdField(config)]: latest[config.ID_FIELD], [config.VERSION]: version },
    projection,
    limit: 1,
    showDeleted: true,
    count: false,
  });
  if (!documents[0]) throw new HttpError(404);
  return synthesize(config, resource, latest, documents[0]);
}

/** The links of one version: self with the version asked, parent the item, collection its versions. */
export function versionLinks(ctx: RequestContext, resource: Resource, id: unknown): Record<string, Link> {
  const item = documentLink(ctx, resource, id);
  return {
    self: documentLink(ctx, resource, id, ctx.args.get(ctx.app.config.VERSION_PARAM)),
    parent: item,
    collection: { title: resource.resource_title, href: `${item.href}?version=all` },
  };
}

/** Eve's `diff_document`: what changed from one version to the next (removed fields not shown). */
function diffDocument(config: Config, resource: Resource, previous: Doc, next: Doc): Doc {
  const fields = [
    ...Object.keys(resource.schema),
    config.VERSION,
    config.LATEST_VERSION,
    config.ID_FIELD,
    config.LAST_UPDATED,
    config.DATE_CREATED,
    config.ETAG,
    config.LINKS,
  ];
  if (resource.soft_delete) fields.push(config.DELETED);
  const diff: Doc = {};
  for (const field of fields) {
    if (field in next && (!(field in previous) || etagSource(next[field]) !== etagSource(previous[field]))) diff[field] = next[field];
  }
  for (const field of config.VERSION_DIFF_INCLUDE) if (field in next) diff[field] = next[field];
  return diff;
}

export interface ListingOptions {
  /** The current document as built for the response (what a legacy document without copies lists). */
  built: Doc;
  embedded: string[];
  projection: Projection | null;
  etag?: string;
  lastModified: Date;
}

/**
 * `?version=all` (every version, sortable) and `?version=diffs` (the first version of each page
 * whole, then what each version changed; sorting refused), paginated. The ETag and
 * Last-Modified are the current document's.
 */
export async function versionListing(ctx: RequestContext, resource: Resource, latest: Doc, version: "all" | "diffs", options: ListingOptions): Promise<Reply> {
  const config = ctx.app.config;
  const rawSort = resource.sorting ? ctx.args.get(config.QUERY_SORT) : null;
  const clientSort = rawSort ? parseSort(rawSort, resource) : null;
  if (version === "diffs" && clientSort) throw badRequest("version=diffs cannot be sorted");
  const paging = parsePaging(ctx.args, resource, config);
  const filter: Filter = { [versionedIdField(config)]: latest[config.ID_FIELD] };
  const { documents: copies, total } = await ctx.app.data.find(ctx, shadowResource(config, resource), {
    filter,
    sort: clientSort ?? [[config.VERSION, 1]],
    projection: options.projection,
    skip: resource.pagination ? (paging.page - 1) * paging.maxResults : 0,
    limit: paging.maxResults,
    showDeleted: true,
  });

  let items: Doc[];
  if (total === 0) {
    items = [options.built];
  } else {
    const versions: Doc[] = [];
    for (const copy of copies) versions.push(await buildResponseDocument(ctx, synthesize(config, resource, latest, copy), resource, { latest }));
    await embedDocuments(ctx, resource, versions, options.embedded);
    items = version === "all" ? versions : versions.map((doc, i) => (i === 0 ? doc : diffDocument(config, resource, versions[i - 1]!, doc)));
  }

  const response: Doc = { [config.ITEMS]: items };
  if (resource.hateoas) {
    response[config.LINKS] = paginationLinks(ctx, paging, total, latest[config.ID_FIELD]);
    if (resource.pagination) response[config.META] = pageMeta(config, paging, total);
  }
  if (version === "diffs") {
    await ctx.app.hooks.emitForResource("on_fetched_diffs", resource.name, items);
  } else {
    for (const item of items) await ctx.app.hooks.emitForResource("on_fetched_item", resource.name, item);
  }
  return { status: 200, body: response, etag: options.etag, lastModified: options.lastModified };
}

/** The ETag header of an item: with versioning, `_etag` followed by the latest version number. */
export function itemEtag(config: Config, resource: Resource, document: Doc): string | undefined {
  const etag = document[config.ETAG];
  if (!config.IF_MATCH || typeof etag !== "string") return undefined;
  return resource.versioning ? etag + String(document[config.LATEST_VERSION]) : etag;
}
