// What of a stored document a caller is shown under its resource's field rules (docs/contracts.md
// §4): the fields it may not read removed, at any depth, and — when anything is — an ETag that is
// the hash of what it is shown instead of the stored one. The stored ETag hashes every field,
// so from it a caller could test guesses of a hidden value, and see a 304 turn into a 200 when a
// hidden field changes. The shown one hashes the fields the caller sees, leaving out those that
// every write moves (`_updated`, the version number), so it changes exactly when one of those
// fields does; and two callers shown different fields never share one for different bodies.
// For the same reason such a caller gets no Last-Modified (src/methods/get.ts). If-Match is
// checked against the same hash (src/methods/conditional.ts), the write staying atomic against
// the stored ETag.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import { fieldMask, withholdFields } from "../auth/field-masks.ts";
import { readView } from "../query/projection.ts";
import { contentEtag } from "../render/etag.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** The stored document as the caller may see it; the document itself when nothing is withheld. */
export function visibleDocument(config: Config, ctx: CallScope, resource: Resource, stored: Doc): Doc {
  const mask = resource.field_rules === null ? null : fieldMask(ctx, resource, "read", stored);
  if (!mask) return stored;
  const shown = withholdFields(stored, mask);
  if (!config.IF_MATCH) return shown;
  const marked = shown === stored ? { ...stored } : shown;
  marked[config.ETAG] = maskedEtag(config, resource, marked);
  return marked;
}

/** The ETag If-Match is compared with for this caller, when it is shown fewer fields than stored; null otherwise. */
export function callerEtag(config: Config, ctx: CallScope, resource: Resource, stored: Doc): string | null {
  const mask = resource.field_rules === null ? null : fieldMask(ctx, resource, "read", stored);
  return mask && maskedEtag(config, resource, withholdFields(stored, mask));
}

/** The hash of what a document shows through the resource's projection, but for what every write moves. */
function maskedEtag(config: Config, resource: Resource, shown: Doc): string {
  const view: Doc = { ...readView(config, resource, shown) };
  for (const moving of [config.ETAG, config.LAST_UPDATED, config.VERSION]) delete view[moving];
  return contentEtag(config, resource, view);
}

/** Whether fields of this document are withheld from the caller: its ETag is then the shown one, and no Last-Modified is given. */
export function withholdsFrom(ctx: CallScope, resource: Resource, stored: Doc): boolean {
  return resource.field_rules !== null && fieldMask(ctx, resource, "read", stored) !== null;
}

/**
 * Whether reads for this caller fetch documents whole and apply the client's projection
 * afterwards: so the ETag it is shown is that of all it may see, whatever it projects.
 */
export function readsWhole(ctx: CallScope, resource: Resource): boolean {
  return resource.field_rules !== null && !ctx.unrestricted;
}
