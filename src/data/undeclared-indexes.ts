// On a store no other client can reach (the embedded one), the indexes no resource over a
// collection declares any more are dropped when the collection is first used: a `unique` the
// settings no longer hold stops refusing duplicates. Elsewhere they are the user's to drop
// (docs/drivers.md, "Removing `unique`"). A module of its own, loaded only for such a store.
import type { Driver, IndexSpec, Target } from "../drivers/types.ts";
import type { Logger } from "../logging.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** `indexSpecs`: those the data layer builds for a resource (src/data/layer.ts), handed in by it. */
export async function dropUndeclared(config: Config, indexSpecs: (resource: Resource) => IndexSpec[], drop: NonNullable<Driver["dropIndexesBut"]>, target: Target, resource: Resource, logger: Logger): Promise<void> {
  const names: string[] = [];
  // The resource itself first: a versioned resource's shadow (src/features/shadow.ts) is in no DOMAIN.
  for (const other of new Set([resource, ...Object.values(config.DOMAIN)])) {
    if (other.datasource.source !== resource.datasource.source || other.db_prefix !== resource.db_prefix) continue;
    const orders = other.pagination_cursor ? (await import("../query/keyset.ts")).orderSpecs(other) : [];
    for (const spec of [...indexSpecs(other), ...orders]) names.push(spec.name!);
  }
  for (const name of await drop(target, names)) logger.warning(`index '${name}' of '${target.collection}' dropped: no resource declares it any more`);
}
