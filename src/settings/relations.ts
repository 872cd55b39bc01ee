// What a data_relation refers to, in its own module so that the validation and rendering code
// that asks does not import the settings normaliser (and with it, into every bundle chunk).
import type { Config } from "./normalize.ts";

/**
 * The field a data_relation's values refer to: its own `field`, else the referenced resource's id
 * field (a relation to `products` keyed by `sku` holds skus).
 */
export function relationField(config: Config, relation: { resource: string; field?: string }): string {
  return relation.field ?? config.DOMAIN[relation.resource]?.id_field ?? config.ID_FIELD;
}
