// Reading versions: `?version=N` of an item, the versions versioned references point to, and
// the ETag of a versioned item.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Projection } from "../drivers/types.ts";
import { badRequest, HttpError } from "../errors.ts";
import { etagSource } from "../render/etag.ts";
import { documentLink, type Link } from "../render/hateoas.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { shadowResource, synthesize, versionedIdField } from "../features/shadow.ts";
import { versionedRelationKey } from "../settings/relations.ts";
import { buildResponseDocument } from "./document.ts";

/**
 * The documents versioned references (`{<field>: …, <VERSION>: n}`) point to, in order: each
 * version rebuilt and made ready to send, or null when the document, the version, or the
 * version's being live (a soft-deleted version is gone) is missing. The value is looked up
 * where Eve looks it up (settings/relations.ts versionedRelationKey), a few queries whatever
 * the number of references: the copies, the current documents, and those stored before
 * versioning was turned on where a version 1 has no copy.
 */
export async function referencedVersions(services: Services, ctx: CallScope, target: Resource, field: string, refs: Doc[]): Promise<Array<Doc | null>> {
  const config = services.config;
  const pointer = versionedIdField(config, target);
  const version = config.VERSION;
  const key = versionedRelationKey(target, field);
  const find = async (resource: Resource, filter: Doc, projection: Projection | null = null) =>
    (await services.data.find(ctx, resource, { filter, projection, showDeleted: resource === target, count: false })).documents;
  const values = (wanted: Doc[]) => ({ $in: wanted.map((ref) => ref[field]) });

  // An unversioned field names the document whose copies are wanted; the others are in the copies.
  const named = key === "current" ? await find(target, { [field]: values(refs) }, target.datasource.projection) : [];
  const idOf = new Map(named.map((doc) => [etagSource(doc[field]), doc[target.id_field]]));
  const copyCondition = (ref: Doc): Doc | null => {
    if (key !== "current") return { [key === "id" ? pointer : field]: ref[field], [version]: ref[version] };
    const id = idOf.get(etagSource(ref[field]));
    return id === undefined ? null : { [pointer]: id, [version]: ref[version] };
  };
  const conditions = refs.map(copyCondition);
  const wanted = conditions.filter((condition): condition is Doc => condition !== null);
  const copies = wanted.length ? await find(shadowResource(config, target), { $or: wanted }) : [];
  const copyKey = (condition: Doc) => Object.values(condition).map(etagSource).join("@");
  const copyOf = new Map<string, Doc>();
  for (const copy of copies) {
    const condition = key === "copy" ? { [field]: copy[field], [version]: copy[version] } : { [pointer]: copy[pointer], [version]: copy[version] };
    if (!copyOf.has(copyKey(condition))) copyOf.set(copyKey(condition), copy);
  }
  const found = conditions.map((condition) => (condition ? copyOf.get(copyKey(condition)) : undefined));

  // Each copy is rebuilt over its current document; a version 1 without a copy is a document
  // stored before versioning was turned on, or nothing.
  const pointers = found.filter((copy): copy is Doc => copy !== undefined).map((copy) => copy[pointer]);
  const currents = key === "current" ? named : pointers.length ? await find(target, { [target.id_field]: { $in: pointers } }, target.datasource.projection) : [];
  const currentOf = new Map(currents.map((doc) => [etagSource(doc[target.id_field]), doc]));
  const unversioned = refs.filter((ref, i) => !found[i] && ref[version] === 1);
  const legacy = unversioned.length ? await find(target, { [field]: values(unversioned), [version]: { $exists: false } }, target.datasource.projection) : [];
  const legacyOf = new Map(legacy.map((doc) => [etagSource(doc[field]), doc]));

  const resolved: Array<Doc | null> = [];
  for (const [i, ref] of refs.entries()) {
    const copy = found[i];
    const current = copy && currentOf.get(etagSource(copy[pointer]));
    const document = copy && current ? synthesize(config, target, current, copy) : ref[version] === 1 ? legacyOf.get(etagSource(ref[field])) : undefined;
    resolved.push(document ? await buildResponseDocument(services, ctx, document, target, { latest: current ?? document }) : null);
  }
  return resolved;
}

export type VersionRequest = number | "all" | "diffs" | null;

/** `?version=`: null when absent or the resource is not versioned; Eve's 400 for a bad number. */
export function requestedVersion(config: Config, ctx: CallScope, resource: Resource): VersionRequest {
  if (!resource.versioning) return null;
  const raw = ctx.args.get(config.VERSION_PARAM);
  if (raw === null || raw === "all" || raw === "diffs") return raw;
  const text = raw.trim();
  // Python's int(): optional sign, digits with single underscores between them.
  const number = /^[+-]?\d(?:_?\d)*$/.test(text) ? Number(text.replace(/_/g, "")) : NaN;
  if (!(number > 0) || !Number.isSafeInteger(number)) throw badRequest("Document version number should be an int greater than 0");
  return number;
}

/** One older version of `latest`, rebuilt; 404 when there is no such version. */
export async function storedVersion(services: Services, ctx: CallScope, resource: Resource, latest: Doc, version: number, projection: Projection | null): Promise<Doc> {
  const config = services.config;
  const { documents } = await services.data.find(ctx, shadowResource(config, resource), {
    filter: { [versionedIdField(config, resource)]: latest[resource.id_field], [config.VERSION]: version },
    projection,
    limit: 1,
    showDeleted: true,
    count: false,
  });
  if (documents[0]) return synthesize(config, resource, latest, documents[0]);
  // A document stored before versioning was turned on is its own version 1.
  if (version === 1 && latest[config.VERSION] === undefined) return latest;
  throw new HttpError(404);
}

/** The links of one version: self with the version asked, parent the item, collection its versions. */
export function versionLinks(config: Config, ctx: CallScope, resource: Resource, id: unknown): Record<string, Link> {
  const item = documentLink(config, ctx, resource, id);
  return {
    self: documentLink(config, ctx, resource, id, ctx.args.get(config.VERSION_PARAM)),
    parent: item,
    collection: { title: resource.resource_title, href: `${item.href}?version=all` },
  };
}

/** The ETag header of an item: with versioning, `_etag` followed by the latest version number. */
export function itemEtag(config: Config, resource: Resource, document: Doc): string | undefined {
  const etag = document[config.ETAG];
  if (!config.IF_MATCH || typeof etag !== "string") return undefined;
  return resource.versioning ? etag + String(document[config.LATEST_VERSION]) : etag;
}
