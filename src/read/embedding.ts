// Embedded serialization: references replaced by the documents they point to. One `$in` query
// per referenced resource per level of embedding (`components.cpu`, then `components.cpu.brand`)
// per response, however many documents, fields and references it holds (Eve issues one query
// per document, its known N+1); references to a version take two, the current documents and
// then their stored versions.
import { DBRef } from "bson";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc } from "../drivers/types.ts";
import { parseEmbedded } from "../query/embedded.ts";
import type { DataRelation, FieldSchema } from "../settings/types.ts";
import type { Resource } from "../settings/normalize.ts";
import { relationField } from "../settings/relations.ts";
import { resolveMedia } from "../features/media.ts";
import { isSoftDeleted } from "./soft-delete.ts";
import { referencedVersions } from "./versions.ts";
import { isPlainObject } from "../util/objects.ts";
import type { Config } from "../settings/normalize.ts";
import { objectIdHex } from "../util/objectid.ts";
import { fieldMask, pathVisibility } from "../auth/field-masks.ts";
import { invalidField } from "../query/withheld.ts";
import { visibleDocument } from "./visible.ts";

/**
 * The definition of a (possibly dotted) field, descending through dicts, lists of dicts and, as
 * Eve's field_definition does, the resources references point to (`components.cpu.brand`).
 */
function fieldDefinition(config: Config, resource: Resource, path: string): FieldSchema | undefined {
  let schema: Record<string, FieldSchema> | undefined = resource.schema;
  let definition: FieldSchema | undefined;
  for (const part of path.split(".")) {
    const relation = relationOf(definition);
    if (!schema?.[part] && relation) schema = config.DOMAIN[relation.resource]?.schema;
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
export function resolveEmbeddedFields(config: Config, ctx: CallScope, resource: Resource): string[] {
  if (!resource.embedding) return [];
  const requested = ctx.arg(config.QUERY_EMBEDDED);
  if (requested === null) return defaultEmbedded(config, resource);
  return embeddable(config, resource, new Set(resource.embedded_fields), requested, ctx);
}

/** Whether any resource has field rules, which the settings alone decide: found once per configuration. */
const ruled = new WeakMap<Config, boolean>();

function anyFieldRules(config: Config): boolean {
  let found = ruled.get(config);
  if (found === undefined) ruled.set(config, (found = Object.values(config.DOMAIN).some((resource) => resource.field_rules !== null)));
  return found;
}

/**
 * Whether an `embedded` path names a field the caller may not read, each part by the rules of
 * the resource it belongs to (`author.company`: `author` here, `company` in the authors').
 * Embedding by default needs no check: a reference the caller may not read is gone from the
 * document before anything is embedded in it.
 */
function namesWithheld(config: Config, ctx: CallScope, resource: Resource, field: string): boolean {
  let owner = resource;
  let local: string[] = [];
  for (const part of field.split(".")) {
    local.push(part);
    const path = local.join(".");
    const mask = fieldMask(ctx, owner, "read");
    if (mask && pathVisibility(mask, path) === "hidden") return true;
    const relation = relationOf(fieldDefinition(config, owner, path));
    const target = relation && config.DOMAIN[relation.resource];
    if (target) {
      owner = target;
      local = [];
    }
  }
  return false;
}

/** What a read without `?embedded=` embeds, which depends on the settings alone: found once per resource, frozen. */
const defaults = new WeakMap<Resource, string[]>();

function defaultEmbedded(config: Config, resource: Resource): string[] {
  let fields = defaults.get(resource);
  if (!fields) {
    fields = Object.freeze(embeddable(config, resource, new Set(resource.embedded_fields), null)) as string[];
    defaults.set(resource, fields);
  }
  return fields;
}

function embeddable(config: Config, resource: Resource, wanted: Set<string>, requested: string | null, ctx?: CallScope): string[] {
  for (const [field, flag] of Object.entries(parseEmbedded(requested))) {
    if (ctx && anyFieldRules(config) && namesWithheld(config, ctx, resource, field)) throw invalidField("embedding", field);
    if (flag === 1) wanted.add(field);
    else wanted.delete(field);
  }
  return [...wanted]
    .sort((a, b) => a.split(".").length - b.split(".").length)
    .filter((field) => relationOf(fieldDefinition(config, resource, field))?.embeddable === true);
}

type Slot = { holder: Record<string | number, unknown>; key: string | number };

/** Every slot (container + key) a dotted path reaches, through dicts and lists. */
function slots(document: Doc, path: string[]): Slot[] {
  let current: Slot[] = [{ holder: { root: document }, key: "root" }];
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
  return value && typeof value === "object" && "toHexString" in value ? objectIdHex(value as { toHexString(): string }) : JSON.stringify(value);
}

/** How references of one relation are recognised, keyed and looked up (all at once). */
interface Lookup {
  key(ref: unknown): string | null;
  find(refs: unknown[]): Promise<Array<Doc | null>>;
}

/** A DBRef refers by its id. */
const referenceId = (ref: unknown) => (ref instanceof DBRef ? ref.oid : ref);

/** Plain references and DBRefs: one `$in` on the referenced field; media of the found documents resolved. */
function plainLookup(services: Services, ctx: CallScope, target: Resource, field: string): Lookup {
  return {
    key: (ref) => (isReference(referenceId(ref)) ? refKey(referenceId(ref)) : null),
    async find(refs) {
      const ids = refs.map(referenceId);
      const { documents: stored } = await services.data.find(ctx, target, { filter: { [field]: { $in: ids } }, projection: target.datasource.projection, count: false });
      // The target's own field rules hold for its documents wherever they are shown.
      const documents = target.field_rules === null ? stored : stored.map((document) => visibleDocument(services.config, ctx, target, document));
      for (const document of documents) await resolveMedia(services.data, services.config, ctx, target, document);
      const byRef = new Map(documents.map((doc) => [refKey(doc[field]), doc]));
      return ids.map((id) => byRef.get(refKey(id)) ?? null);
    },
  };
}

/** References to a version (`data_relation.version`): `{<field>: …, <VERSION>: n}`. */
function versionedLookup(services: Services, ctx: CallScope, target: Resource, field: string): Lookup {
  const version = services.config.VERSION;
  return {
    key: (ref) => (isPlainObject(ref) && isReference(ref[field]) && ref[version] !== undefined ? `${refKey(ref[field])}@${JSON.stringify(ref[version])}` : null),
    find: (refs) => referencedVersions(services, ctx, target, field, refs as Doc[]),
  };
}

/**
 * Replaces references in place; a missing or soft-deleted target becomes null. Fields that
 * reference the same resource (by the same field) share one lookup.
 */
export function embedDocuments(services: Services, ctx: CallScope, resource: Resource, documents: Doc[], fields: string[]): Promise<void> | undefined {
  // Nothing to embed (most reads): no async call at all.
  return fields.length === 0 ? undefined : embedLevels(services, ctx, resource, documents, fields);
}

async function embedLevels(services: Services, ctx: CallScope, resource: Resource, documents: Doc[], fields: string[]): Promise<void> {
  // A field inside an embedded document can only be reached once the level above is embedded:
  // its level is the number of references its path goes through (`components.cpu.brand`: one).
  const config = services.config;
  const levels = new Map<number, string[]>();
  for (const field of fields) {
    const parts = field.split(".");
    let depth = 0;
    for (let i = 1; i < parts.length; i++) if (relationOf(fieldDefinition(config, resource, parts.slice(0, i).join(".")))) depth++;
    levels.set(depth, [...(levels.get(depth) ?? []), field]);
  }
  for (const depth of [...levels.keys()].sort((a, b) => a - b)) await embedLevel(services, ctx, resource, documents, levels.get(depth)!);
}

async function embedLevel(services: Services, ctx: CallScope, resource: Resource, documents: Doc[], fields: string[]): Promise<void> {
  const config = services.config;
  const live = documents.filter((d) => !isSoftDeleted(config, resource, d));
  const groups = new Map<string, { lookup: Lookup; places: Slot[]; refs: Map<string, unknown> }>();
  for (const field of fields) {
    const relation = relationOf(fieldDefinition(config, resource, field))!;
    const target = config.DOMAIN[relation.resource];
    if (!target) continue;
    const refField = relationField(config, relation);
    const groupKey = `${target.name}\u0000${refField}\u0000${relation.version === true}`;
    let group = groups.get(groupKey);
    if (!group) {
      const lookup = relation.version ? versionedLookup(services, ctx, target, refField) : plainLookup(services, ctx, target, refField);
      groups.set(groupKey, (group = { lookup, places: [], refs: new Map() }));
    }
    // A document embedded in several places is one object: its references are replaced once.
    const holders = new Set<object>();
    for (const place of live.flatMap((d) => slots(d, field.split(".")))) {
      if (holders.has(place.holder)) continue;
      holders.add(place.holder);
      group.places.push(place);
      const value = place.holder[place.key];
      for (const ref of Array.isArray(value) ? value : [value]) {
        const key = group.lookup.key(ref);
        if (key !== null) group.refs.set(key, ref);
      }
    }
  }
  for (const { lookup, places, refs } of groups.values()) {
    if (refs.size === 0) continue;
    const found = await lookup.find([...refs.values()]);
    const byKey = new Map([...refs.keys()].map((key, i) => [key, found[i]!]));
    const resolve = (ref: unknown) => {
      if (ref === null || ref === undefined) return ref;
      const key = lookup.key(ref);
      return key === null ? null : (byKey.get(key) ?? null);
    };
    for (const { holder, key } of places) {
      const value = holder[key];
      holder[key] = Array.isArray(value) ? value.map(resolve) : resolve(value);
    }
  }
}
