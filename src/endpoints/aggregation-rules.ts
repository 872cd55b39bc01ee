// Field rules on aggregation endpoints (docs/auth.md, "Field rules"). A pipeline is its author's:
// what it computes is what the endpoint serves. What everest adds for a caller from whom fields
// are withheld — by the rules of any resource over the collection the pipeline reads, or by the
// aggregation resource's own schema, which describes its output —:
// - a parameter value naming such a field (a key, a `$field` path, `$$ROOT`) is refused with
//   the 400 a `where` on it gets, so a client cannot make the pipeline match, sort or group by it;
// - results lose the fields of those names, and the stored ETag (a hash that includes them), at
//   any depth: a stage may nest whole stored documents.
// A computed field that derives from a withheld one is the author's to protect: give it rules
// in the aggregation resource's schema.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import { fieldMask, pathVisibility, withholdFields, type Mask } from "../auth/field-masks.ts";
import { invalidField } from "../query/withheld.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isPlainObject } from "../util/objects.ts";

/** Per aggregation resource, from the settings alone: the resources whose rules hold for it. */
const ruling = new WeakMap<Resource, Resource[]>();

function rulingResources(config: Config, resource: Resource): Resource[] {
  let found = ruling.get(resource);
  if (!found) {
    const { source } = resource.datasource;
    found = Object.values(config.DOMAIN).filter(
      (other) => other.field_rules !== null && (other === resource || (other.datasource.source === source && other.db_prefix === resource.db_prefix && !other.datasource.aggregation)),
    );
    ruling.set(resource, found);
  }
  return found;
}

/** What is withheld from the caller over the aggregation; null when no rule can apply to it. */
export function aggregationMasks(config: Config, ctx: CallScope, resource: Resource): Mask[] | null {
  const resources = rulingResources(config, resource);
  if (resources.length === 0 || ctx.unrestricted) return null;
  return resources.map((ruled) => fieldMask(ctx, ruled, "read")).filter((mask): mask is Mask => mask !== null);
}

/** Refuses a parameter value that names a withheld field anywhere in it. */
export function checkParameterFields(value: unknown, masks: Mask[]): void {
  if (masks.length === 0) return;
  const check = (path: string) => {
    if (masks.some((mask) => pathVisibility(mask, path) !== "shown")) throw invalidField("aggregation parameter", path);
  };
  const walk = (node: unknown): void => {
    if (typeof node === "string" && node.startsWith("$")) {
      // `$salary` is a field path, `$$ROOT` the whole document, `$$line.cost` a path in a variable.
      const variable = /^\$\$(\w+)(?:\.(.+))?$/.exec(node);
      if (!variable) check(node.slice(1));
      else if (variable[2] !== undefined) check(variable[2]);
      else if (variable[1] === "ROOT" || variable[1] === "CURRENT") throw invalidField("aggregation parameter", node);
    } else if (Array.isArray(node)) node.forEach(walk);
    else if (isPlainObject(node)) {
      for (const [key, member] of Object.entries(node)) {
        if (!key.startsWith("$")) check(key);
        walk(member);
      }
    }
  };
  walk(value);
}

/** The results as the caller may see them. */
export function visibleResults(config: Config, ctx: CallScope, resource: Resource, documents: Doc[], masks: Mask[]): Doc[] {
  return documents.map((document) => {
    // The output's own rules may depend on each result (field_access).
    const own = resource.field_rules && fieldMask(ctx, resource, "read", document);
    const all = own ? [...masks, own] : masks;
    return all.length > 0 ? (withheldAtAnyDepth(config.ETAG, document, all) as Doc) : document;
  });
}

/**
 * `value` without the masks' fields and the stored ETag, in it and in every document within it:
 * a stage may nest whole stored documents (`{$push: "$$ROOT"}`, `{$replaceRoot: {newRoot:
 * {inner: "$$ROOT"}}}`), whose withheld fields are there under the same names.
 */
function withheldAtAnyDepth(etag: string, value: unknown, masks: Mask[]): unknown {
  if (Array.isArray(value)) return value.map((item) => withheldAtAnyDepth(etag, item, masks));
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const [key, member] of Object.entries(masks.reduce(withholdFields, value))) if (key !== etag) out[key] = withheldAtAnyDepth(etag, member, masks);
  return out;
}
