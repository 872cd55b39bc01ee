// `?projection=` combined with the resource's own projection as Eve's `_datasource_ex` does
// (eve/io/base.py), over the datasource projection Eve builds at start-up
// (eve/flaskapp.py `_set_resource_projection`):
// - a schema resource (allow_unknown off) serves its schema fields plus the meta fields;
//   `datasource.projection` exclusions hide fields by default, and a client may still ask for
//   such a field with `{"field": 1}`; fields outside that projection can never be asked for;
// - meta fields (id, dates, etag, version fields, deleted flag, auth_field) always come back;
//   a client's entries for them are ignored;
// - exclusions are resolved here, so the driver gets an inclusive projection (or none).
// Differences: mixing 1 and 0 is a 400 (SPEC), and on a resource without a default projection
// (allow_unknown) a client exclusion is honoured (Eve drops it).
import type { Doc, Projection } from "../drivers/types.ts";
import { badRequest } from "../errors.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { parseJsonOrUndefined, refuseDeepPath } from "./common.ts";
import { isPlainObject, isRefusedKey } from "../util/objects.ts";
import { pathVisibility, type Mask } from "../auth/field-masks.ts";
import { invalidField } from "./withheld.ts";
import { projectPaths } from "../util/project-paths.ts";

type Flags = Record<string, 0 | 1>;

/** Eve's `auto_fields` (the stored ones) plus the auth_field. */
export function keptFields(resource: Resource, config: Config): string[] {
  const fields = [resource.id_field, config.LAST_UPDATED, config.DATE_CREATED, config.ETAG];
  if (resource.versioning) fields.push(config.VERSION, config.LATEST_VERSION, resource.id_field + config.VERSION_ID_SUFFIX);
  if (resource.soft_delete) fields.push(config.DELETED);
  if (resource.auth_field) fields.push(resource.auth_field);
  return fields;
}

/** The datasource projection as Eve holds it: may mix 1s with the 0s of hidden fields. */
function defaultProjection(resource: Resource, keep: string[]): Flags | null {
  const declared: Flags = { ...(resource.raw.datasource?.projection ?? {}) };
  const values = Object.values(declared);
  if (resource.allow_unknown) {
    if (values.length === 0) return null;
    if (values.includes(1)) for (const field of keep) declared[field] = 1;
    return declared;
  }
  if (!values.includes(1)) {
    for (const field of Object.keys(resource.schema)) if (!(field in declared)) declared[field] = 1;
  }
  for (const field of keep) declared[field] = 1;
  return declared;
}

function parseClient(raw: string, maxDepth: number): Flags {
  const parsed = parseJsonOrUndefined(raw);
  if (!isPlainObject(parsed)) throw badRequest("projection must be a JSON object");
  const flags: Flags = {};
  for (const [field, value] of Object.entries(parsed)) {
    if (isRefusedKey(field)) throw badRequest(`refused key '${field}'`);
    if (value !== 0 && value !== 1 && typeof value !== "boolean") throw badRequest("projection values are 0 or 1");
    refuseDeepPath(field, maxDepth, "projection");
    flags[field] = value ? 1 : 0;
  }
  return flags;
}

function included(flags: Flags): Projection | null {
  const out: Projection = {};
  for (const [field, value] of Object.entries(flags)) if (value) out[field] = 1;
  return Object.keys(out).length ? out : null;
}

/**
 * What a base projection sends to the store: its inclusions, or, where it only excludes (a
 * resource serving unknown fields cannot list what it serves), its exclusions as they are.
 */
function sent(base: Flags | null): Projection | null {
  if (!base) return null;
  return included(base) ?? (Object.keys(base).length ? { ...base } : null);
}

/** Whether a base projection serves every field it does not exclude. */
const servesAny = (base: Flags | null): boolean => !base || !Object.values(base).includes(1);

/** What a read without `?projection=` sends, which depends on the settings alone: made once per resource, frozen. */
const defaults = new WeakMap<Resource, Projection | null>();

function defaultProjectionOf(resource: Resource, config: Config): Projection | null {
  let projection = defaults.get(resource);
  if (projection === undefined) {
    projection = sent(defaultProjection(resource, keptFields(resource, config)));
    if (projection) Object.freeze(projection);
    defaults.set(resource, projection);
  }
  return projection;
}

/**
 * The projection to send to the driver for a read: null serves documents as stored. `raw` is the
 * client's `projection` parameter, null when absent or when the resource disables projections.
 */
export function resolveProjection(raw: string | null, resource: Resource, config: Config, hidden: Mask | null = null): Projection | null {
  if (!raw) return defaultProjectionOf(resource, config);
  const keep = keptFields(resource, config);
  const base = defaultProjection(resource, keep);
  const isKept = (field: string) => keep.includes(field.split(".")[0]!);
  const client = parseClient(raw, config.MAX_JSON_DEPTH);
  // Naming a field the caller may not read is refused, excluding it too (docs/contracts.md §4).
  if (hidden) for (const field of Object.keys(client)) if (pathVisibility(hidden, field) === "hidden") throw invalidField("projection", field);
  // Excluding a kept field is legal and ignored (Mongo's `{"a": 1, "_id": 0}`); including one
  // makes the projection inclusive, as in Eve.
  const entries = Object.entries(client).filter(([field, value]) => value === 1 || !isKept(field));
  const inclusive = entries.some(([, value]) => value === 1);
  if (inclusive && entries.some(([, value]) => value === 0)) throw badRequest("projection cannot mix inclusion and exclusion");
  const asked = entries.filter(([field]) => !isKept(field));
  if (entries.length === 0) return sent(base);

  if (servesAny(base)) {
    // A resource serving unknown fields: any field may be asked for, and its datasource
    // exclusions (if any) still hide what the client does not name.
    if (inclusive) return { ...(Object.fromEntries(asked) as Projection), ...Object.fromEntries(keep.map((field) => [field, 1])) };
    return { ...(base as Projection | null), ...(Object.fromEntries(asked) as Projection) };
  }
  const listed = base!;
  const fields: Flags = inclusive ? Object.fromEntries(Object.keys(listed).map((f) => [f, keep.includes(f) ? 1 : 0])) : { ...listed };
  for (const [field, value] of asked) {
    // Only fields the resource serves can be asked for (no sniffing of private fields).
    if (field.split(".")[0]! in listed) fields[field] = value;
  }
  return included(fields);
}

/**
 * A stored document as a read shows it, through the resource's datasource projection: a
 * document stored without an ETag is shown the hash of that view (GET, as Eve's getitem does),
 * and Eve's writes check If-Match against the same view (get_document reads through the
 * projection), so fields outside the schema must not count there either. A dotted projection
 * entry keeps its whole top-level field, which is only exact for projections of top-level
 * fields (the default). The store's `_id` comes back from every inclusive projection, so it is
 * part of the view even where the resource names its documents by another id field (Eve's
 * `products` by `sku`).
 */
export function readView(config: Config, resource: Resource, stored: Doc): Doc {
  const projection = resolveProjection(null, resource, config);
  if (!projection) return stored;
  if (!Object.values(projection).includes(1)) return projectPaths(stored, projection);
  const shown: Doc = {};
  if (Object.hasOwn(stored, "_id")) shown._id = stored._id;
  for (const field of Object.keys(projection)) {
    const top = field.split(".")[0]!;
    if (Object.hasOwn(stored, top)) shown[top] = stored[top];
  }
  return shown;
}

/** Whether an inclusive projection keeps the path: names it or a field holding it. */
function keeps(projection: Projection, path: string): boolean {
  for (let at = path; ; at = at.slice(0, at.lastIndexOf("."))) {
    if (Object.hasOwn(projection, at)) return true;
    if (!at.includes(".")) return false;
  }
}

/**
 * An inclusive projection that keeps what `asked` adds to it too, never naming a path and one
 * inside it both (MongoDB refuses such a projection: `profile` and `profile.ssn`).
 */
export function widened(projection: Projection, asked: Projection): Projection {
  const out: Projection = { ...projection };
  for (const path of Object.keys(asked)) {
    if (keeps(out, path)) continue;
    for (const key of Object.keys(out)) if (key.startsWith(`${path}.`)) delete out[key];
    out[path] = 1;
  }
  return out;
}

