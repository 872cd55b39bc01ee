// The shadow collection of a versioned resource (Eve's eve/versioning.py): every write stores a
// copy of the document's versioned fields in `<source><VERSIONS>`, keyed by
// `<id_field><VERSION_ID_SUFFIX>` and `<VERSION>`; an older version is rebuilt from the current
// document (its unversioned fields) plus that copy. Shared by the versioning and media plug-ins
// and the version reads.
import type { CallScope } from "../scope.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isVersionedField } from "../settings/relations.ts";

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
    const pointer = versionedIdField(config, resource);
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

export function versionedIdField(config: Config, resource: Resource): string {
  return resource.id_field + config.VERSION_ID_SUFFIX;
}

/** Eve's `versioned_fields`: schema fields not marked `versioned: false`, plus three meta fields. */
export function versionedFields(config: Config, resource: Resource): Set<string> {
  const fields = Object.keys(resource.schema).filter((field) => isVersionedField(resource, field));
  return new Set([...fields, config.LAST_UPDATED, config.ETAG, config.DELETED]);
}


export function shadowCopy(config: Config, resource: Resource, document: Doc): Doc {
  const fields = versionedFields(config, resource);
  const copy: Doc = {};
  for (const [field, value] of Object.entries(document)) if (fields.has(field)) copy[field] = value;
  copy[versionedIdField(config, resource)] = document[resource.id_field];
  copy[config.VERSION] = document[config.VERSION];
  return copy;
}

/** Eve's `synthesize_versioned_document`: the current document's unversioned fields + the copy's. */
export function synthesize(config: Config, resource: Resource, latest: Doc, copy: Doc): Doc {
  const fields = versionedFields(config, resource);
  const document: Doc = {};
  for (const [field, value] of Object.entries(latest)) if (!fields.has(field)) document[field] = value;
  // The copy's own database `_id` is not the document's.
  const { [versionedIdField(config, resource)]: id, _id: _shadowId, ...versioned } = copy;
  delete versioned[resource.id_field];
  return Object.assign(document, versioned, { [resource.id_field]: id });
}

/** A document stored before versioning was turned on counts as version 1. */
export function versionOf(config: Config, document: Doc): number {
  const version = document[config.VERSION];
  return typeof version === "number" ? version : 1;
}


/** Stored copies of the given documents, all versions (for features that own data they reference). */
export async function storedVersions(data: DataLayer, config: Config, ctx: CallScope, resource: Resource, ids: unknown[]): Promise<Doc[]> {
  if (!resource.versioning || ids.length === 0) return [];
  const { documents } = await data.find(ctx, shadowResource(config, resource), {
    filter: { [versionedIdField(config, resource)]: { $in: ids } },
    showDeleted: true,
    count: false,
  });
  return documents;
}
