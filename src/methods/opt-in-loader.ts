// Update operators and writes by filter (docs/updates.md) are each a resource's switch: their
// methods live in a module of their own (opt-in-writes.ts) that the first request needing one
// imports, and a resource's operators are compiled when its first operator PATCH needs them.
import { uniqueIndexFields } from "../data/layer.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { lazily } from "../util/lazy.ts";
import type { OperatorSchema } from "../validation/operators.ts";
import type { ResourceValidator } from "../validation/types.ts";

export const optInWrites = lazily(() => import("./opt-in-writes.ts"));

/**
 * Each resource's operators, compiled once, on first use; `compile` builds a validator as the
 * app builds its resources' (here, for a list's items).
 */
export function operatorSchemas(config: Config, validators: ReadonlyMap<string, ResourceValidator>, compile: (resource: Resource) => ResourceValidator): (resource: Resource) => Promise<OperatorSchema> {
  const compiled = new Map<string, Promise<OperatorSchema>>();
  return (resource) => {
    let schema = compiled.get(resource.name);
    if (!schema) {
      schema = Promise.resolve(optInWrites()).then(({ compileOperators, itemsResource }) =>
        compileOperators(resource, config, validators.get(resource.name)!, compile(itemsResource(resource)), new Set(uniqueIndexFields(resource))),
      );
      // A module that failed to load is tried again by the next request.
      schema.catch(() => compiled.delete(resource.name));
      compiled.set(resource.name, schema);
    }
    return schema;
  };
}
