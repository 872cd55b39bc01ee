// What a data_relation refers to, in its own module so that the validation and rendering code
// that asks does not import the settings normaliser (and with it, into every bundle chunk).
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

/**
 * Where a versioned data_relation's value is found (Eve's get_data_version_relation_document):
 * `id`, the copies' pointer to their document; `copy`, a versioned field the copies hold;
 * `current`, an unversioned field only the current document holds, whose id then finds the copy.
 */
export function versionedRelationKey(target: Resource, field: string): "id" | "copy" | "current" {
  if (field === target.id_field) return "id";
  return isVersionedField(target, field) ? "copy" : "current";
}
