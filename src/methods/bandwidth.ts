// BANDWIDTH_SAVER: what a write answers with.
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** Only meta fields (and extra_response_fields) go back on writes when BANDWIDTH_SAVER is on. */
export function marshalWriteResponse(config: Config, resource: Resource, document: Doc): Doc {
  if (!resource.bandwidth_saver) return document;
  const keep = new Set<string>([resource.id_field, config.LAST_UPDATED, config.DATE_CREATED, config.ETAG, config.LINKS, config.STATUS, config.ISSUES, ...resource.extra_response_fields]);
  if (resource.versioning) {
    keep.add(config.VERSION);
    keep.add(config.LATEST_VERSION);
  }
  if (resource.soft_delete) keep.add(config.DELETED);
  const out: Doc = {};
  for (const [key, value] of Object.entries(document)) if (keep.has(key)) out[key] = value;
  return out;
}
