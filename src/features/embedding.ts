// Embedded serialization: references replaced by the documents they point to. One `$in` query
// per referenced resource per response, however many documents and references it holds
// (Eve issues one query per document, its known N+1).
import type { RequestContext } from "../context.ts";
import type { Doc } from "../drivers/types.ts";
import { parseEmbedded } from "../query/embedded.ts";
import type { DataRelation, FieldSchema } from "../settings/types.ts";
import type { Resource } from "../settings/normalize.ts";

/** The definition of a (possibly dotted) field, descending through dicts and lists of dicts. */
export function fieldDefinition(resource: Resource, path: string): FieldSchema | undefined {
  let schema: Record<string, FieldSchema> | undefined = resource.schema;
  let definition: FieldSchema | undefined;
  for (const part of path.split(".")) {
    definition = schema?.[part];
    if (!definition) return undefined;
    if (definition.type === "list" && definition.schema && typeof (definition.schema as FieldSchema).type === "string") {
      const items = definition.schema as FieldSchema;
      schema = items.type === "dict" ? (items.schema as Record<string, FieldSchema> | undefined) : undefined;
    } else {
      schema = definition.schema as Record<string, FieldSchema> | undefined;
    }
  }
  return definition;
}

function relationOf(definition: FieldSchema | undefined): DataRelation | undefined {
  if (!definition) return undefined;
  if (definition.type === "list" && definition.schema && (definition.schema as FieldSchema).data_relation) {
    return (definition.schema as FieldSchema).data_relation;
  }
  return definition.data_relation;
}

/** Eve's `resolve_embedded_fields`: requested ∪ resource defaults − refused, embeddable only. */
export function resolveEmbeddedFields(ctx: RequestContext, resource: Resource): string[] {
  if (!resource.embedding) return [];
  const wanted = new Set(resource.embedded_fields);
  for (const [field, flag] of Object.entries(parseEmbedded(ctx.args.get(ctx.app.config.QUERY_EMBEDDED)))) {
    if (flag === 1) wanted.add(field);
    else wanted.delete(field);
  }
  return [...wanted]
    .sort((a, b) => a.split(".").length - b.split(".").length)
    .filter((field) => relationOf(fieldDefinition(resource, field))?.embeddable === true);
}

/** Every slot (container + key) a dotted path reaches, through dicts and lists. */
function slots(document: Doc, path: string[]): Array<{ holder: Record<string | number, unknown>; key: string | number }> {
  let current: Array<{ holder: Record<string | number, unknown>; key: string | number }> = [{ holder: { root: document }, key: "root" }];
  for (const part of path) {
    const next: typeof current = [];
    for (const { holder, key } of current) {
      const value = holder[key];
      const containers = Array.isArray(value) ? value : [value];
      for (const container of containers) {
        if (container && typeof container === "object" && !Array.isArray(container) && part in container) {
          next.push({ holder: container as Record<string, unknown>, key: part });
        }
      }
    }
    current = next;
  }
  return current;
}

/** A scalar or an ObjectId; an object here was embedded already or is a versioned reference. */
function isReference(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  return typeof value !== "object" || "toHexString" in value;
}

function refKey(value: unknown): string {
  return value && typeof value === "object" && "toHexString" in value ? (value as { toHexString(): string }).toHexString() : JSON.stringify(value);
}

/** Replaces references in place; a missing or soft-deleted target becomes null. */
export async function embedDocuments(ctx: RequestContext, resource: Resource, documents: Doc[], fields: string[]): Promise<void> {
  const config = ctx.app.config;
  for (const field of fields) {
    const relation = relationOf(fieldDefinition(resource, field))!;
    const target = config.DOMAIN[relation.resource];
    if (!target) continue;
    const refField = relation.field ?? config.ID_FIELD;
    const places = documents
      .filter((d) => !(resource.soft_delete && d[config.DELETED] === true))
      .flatMap((d) => slots(d, field.split(".")));
    const values = new Map<string, unknown>();
    for (const { holder, key } of places) {
      const value = holder[key];
      for (const ref of Array.isArray(value) ? value : [value]) if (isReference(ref)) values.set(refKey(ref), ref);
    }
    if (values.size === 0) continue;
    const { documents: found } = await ctx.app.data.find(ctx, target, {
      filter: { [refField]: { $in: [...values.values()] } },
      projection: target.datasource.projection,
      count: false,
    });
    const byRef = new Map(found.map((doc) => [refKey(doc[refField]), doc]));
    const resolve = (ref: unknown) => (ref === null || ref === undefined ? ref : (byRef.get(refKey(ref)) ?? null));
    for (const { holder, key } of places) {
      const value = holder[key];
      holder[key] = Array.isArray(value) ? value.map(resolve) : resolve(value);
    }
  }
}
