// What a data_relation refers to, in its own module so that the validation and rendering code
// that asks does not import the settings normaliser (and with it, into every bundle chunk).
import type { Doc, Filter } from "../drivers/types.ts";
import type { Config, Resource } from "./normalize.ts";

/**
 * The field a data_relation's values refer to: its own `field`, else the referenced resource's id
 * field (a relation to `products` keyed by `sku` holds skus).
 */
export function relationField(config: Config, relation: { resource: string; field?: string }): string {
  return relation.field ?? config.DOMAIN[relation.resource]?.id_field ?? config.ID_FIELD;
}

/** Eve's `versioned_fields` test for one field: in the schema, not the id, not `versioned: false`. */
export function isVersionedField(resource: Resource, field: string): boolean {
  const rules = resource.schema[field];
  return field !== resource.id_field && rules !== undefined && (rules.versioned === undefined || rules.versioned === true);
}

/** Looks a document up in a resource by name (`<resource><VERSIONS>` is its shadow collection). */
export type FindOne = (resource: string, filter: Filter, options?: { includeDeleted?: boolean }) => Promise<Doc | null>;

/**
 * The version a versioned reference (`{<field>: …, <VERSION>: n}`) names, looked up where Eve's
 * get_data_version_relation_document looks: by its value in the copies (the id through their
 * pointer, a versioned field as they hold it), or, for an unversioned field only the current
 * document holds, by that document's id. Answers the copy and, to rebuild the version over
 * (`rebuild`), the current document; a document stored before versioning was turned on is its
 * own version 1 (no copy). Null when there is no such version. Validation and embedding both
 * ask here.
 */
export async function referencedVersion(config: Config, target: Resource, field: string, reference: Doc, findOne: FindOne, rebuild = false): Promise<{ copy: Doc | null; current: Doc | null } | null> {
  const version = reference[config.VERSION];
  const value = reference[field];
  const pointer = target.id_field + config.VERSION_ID_SUFFIX;
  const copyWith = (condition: Filter) => findOne(target.name + config.VERSIONS, { ...condition, [config.VERSION]: version });
  const current = (filter: Filter) => findOne(target.name, filter, { includeDeleted: true });
  if (field === target.id_field || isVersionedField(target, field)) {
    const copy = await copyWith({ [field === target.id_field ? pointer : field]: value });
    if (copy) return { copy, current: rebuild ? await current({ [target.id_field]: copy[pointer] }) : null };
  } else {
    const named = await current({ [field]: value });
    const copy = named && (await copyWith({ [pointer]: named[target.id_field] }));
    if (copy) return { copy, current: named };
  }
  // A document stored before versioning was turned on is its own version 1.
  const legacy = version === 1 && (await findOne(target.name, { [field]: value, [config.VERSION]: { $exists: false } }));
  return legacy ? { copy: null, current: legacy } : null;
}
