// SCHEMA_ENDPOINT (Eve's schema_collection_endpoint and schema_item_endpoint): resource schemas as
// Eve serves them — the configured rules, with the id field Eve adds to every schema and the
// `field` its data_relations default to; code in a schema (coercers, custom checks) is shown as
// "<callable>". Internal resources and, in the listing, those the caller may not read stay hidden.
import type { RequestContext } from "../context.ts";
import type { Services } from "../services.ts";
import type { Doc } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import type { Reply } from "../render/reply.ts";
import { SCHEMA_GROUP } from "../routing/router.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { relationField } from "../settings/relations.ts";
import { isPlainObject } from "../util/objects.ts";

/** `idField`: the default of data_relation `field`, which Eve sets through dicts only, never through lists. */
function describe(value: unknown, config: Config | null): unknown {
  if (typeof value === "function") return "<callable>";
  if (Array.isArray(value)) return value.map((v) => describe(v, null));
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const [key, member] of Object.entries(value)) out[key] = describe(member, config);
  const relation = out.data_relation;
  if (config !== null && isPlainObject(relation) && !("field" in relation) && typeof relation.resource === "string") {
    out.data_relation = { ...relation, field: relationField(config, { resource: relation.resource }) };
  }
  return out;
}

export function schemaOf(resource: Resource, config: Config): Doc {
  const schema = describe(resource.schema, config) as Doc;
  if (!(resource.id_field in schema)) schema[resource.id_field] = { type: "objectid" };
  return schema;
}

export async function schemaEndpoint(services: Services, ctx: RequestContext): Promise<Reply> {
  const config = services.config;
  const name = ctx.params[SCHEMA_GROUP];
  if (name !== undefined) {
    const resource = Object.hasOwn(config.DOMAIN, name) ? config.DOMAIN[name] : undefined;
    if (!resource || resource.internal_resource) throw new HttpError(404);
    return { status: 200, body: schemaOf(resource, config) };
  }
  const schemas: Doc = {};
  for (const resource of Object.values(config.DOMAIN)) {
    if (!resource.internal_resource && (await services.access.canRead(ctx, resource))) schemas[resource.name] = schemaOf(resource, config);
  }
  return { status: 200, body: schemas };
}
