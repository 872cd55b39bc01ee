// Update operators and writes by filter (docs/updates.md) are each a resource's switch: their
// methods live in a module of their own (opt-in-writes.ts) that the first request needing one
// imports, and a resource's operators are compiled when its first operator PATCH needs them.
// Here is how the app reaches them: the HTTP methods that may lead there, and the compiler.
import type { RequestContext } from "../context.ts";
import { uniqueIndexFields } from "../data/layer.ts";
import type { Filter } from "../drivers/types.ts";
import type { Reply } from "../render/reply.ts";
import type { Services } from "../services.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { lazily, withModule } from "../util/lazy.ts";
import type { OperatorSchema } from "../validation/operators.ts";
import type { ResourceValidator } from "../validation/types.ts";

import { deleteInternal } from "./delete.ts";
import { patchItem } from "./patch.ts";

export const optInWrites = lazily(() => import("./opt-in-writes.ts"));

type MethodHandler = (services: Services, ctx: RequestContext, lookup: Filter) => Promise<Reply>;

/** PATCH on a collection: a write by filter (start-up lets PATCH reach a collection only where patch_by_filter is on). */
export const patchCollection: MethodHandler = (services, ctx, lookup) => withModule(optInWrites, (methods) => methods.patchByFilter(services, ctx, lookup));

/** DELETE on a collection: by filter where the resource has delete_by_filter, else Eve's delete of every document. */
export const deleteCollection: MethodHandler = (services, ctx, lookup) =>
  ctx.resource!.delete_by_filter ? withModule(optInWrites, (methods) => methods.deleteByFilter(services, ctx, lookup)) : deleteInternal(services, ctx, lookup);

/** PATCH of an item: with update operators where the resource allows some. */
export const patchItemMethod: MethodHandler = (services, ctx, lookup) =>
  ctx.resource!.update_operators.length === 0 ? patchItem(services, ctx, lookup) : withModule(optInWrites, (methods) => methods.patchItemWithOperators(services, ctx, lookup));

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
        compileOperators(resource, config, validators.get(resource.name)!, compile(itemsResource(resource)), new Set(uniqueIndexFields(config, resource))),
      );
      // A module that failed to load is tried again by the next request.
      schema.catch(() => compiled.delete(resource.name));
      compiled.set(resource.name, schema);
    }
    return schema;
  };
}
