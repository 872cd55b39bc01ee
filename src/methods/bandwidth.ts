// What a write answers with (Eve's build_response_document and marshal_write_response): with
// BANDWIDTH_SAVER on, the meta fields only; off, the document as a read would show it — the
// datasource projection applied (a field it hides is not sent back), the auth_field only where
// the schema declares it, and what `?embedded=` asks for embedded.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import { resolveProjection } from "../query/projection.ts";
import { buildResponseDocument } from "../read/document.ts";
import { embedDocuments, resolveEmbeddedFields } from "../read/embedding.ts";
import type { Services } from "../services.ts";
import type { Config, Resource } from "../settings/normalize.ts";

// Not async: a write answered with its meta fields (BANDWIDTH_SAVER, Eve's default) awaits
// nothing, and a promise is made only where a feature or embedding needs one.
export function writeResponse(services: Services, ctx: CallScope, resource: Resource, stored: Doc): Doc | Promise<Doc> {
  const building = buildResponseDocument(services, ctx, stored, resource);
  return building instanceof Promise ? building.then((document) => shape(services, ctx, resource, document)) : shape(services, ctx, resource, building);
}

function shape(services: Services, ctx: CallScope, resource: Resource, document: Doc): Doc | Promise<Doc> {
  const config = services.config;
  document[config.STATUS] = config.STATUS_OK;
  if (resource.bandwidth_saver) return only(document, savedFields(config, resource));
  const projection = resource.projection ? resolveProjection(null, resource, config) : null;
  const shown = projection ? only(document, new Set([...Object.keys(projection).map((field) => field.split(".")[0]!), config.LINKS, config.STATUS])) : document;
  // The owner everest stamped on the document is not sent back unless the schema declares it
  // (Eve's marshal_write_response: the auth_field is not meant to be public). The document is
  // this answer's own (buildResponseDocument's copy).
  if (resource.auth_field && !Object.hasOwn(resource.schema, resource.auth_field)) delete shown[resource.auth_field];
  const embedding = embedDocuments(services, ctx, resource, [shown], resolveEmbeddedFields(config, ctx, resource));
  return embedding ? embedding.then(() => shown) : shown;
}

/** savedFields per resource: it depends on the settings alone. */
const saved = new WeakMap<Resource, Set<string>>();

/** Only meta fields (and extra_response_fields) go back on writes when BANDWIDTH_SAVER is on. */
function savedFields(config: Config, resource: Resource): Set<string> {
  let keep = saved.get(resource);
  if (!keep) saved.set(resource, (keep = keptFields(config, resource)));
  return keep;
}

function keptFields(config: Config, resource: Resource): Set<string> {
  const keep = new Set<string>([resource.id_field, config.LAST_UPDATED, config.DATE_CREATED, config.ETAG, config.LINKS, config.STATUS, config.ISSUES, ...resource.extra_response_fields]);
  if (resource.versioning) {
    keep.add(config.VERSION);
    keep.add(config.LATEST_VERSION);
  }
  if (resource.soft_delete) keep.add(config.DELETED);
  return keep;
}

function only(document: Doc, keep: Set<string>): Doc {
  const out: Doc = {};
  for (const key in document) if (keep.has(key)) out[key] = document[key];
  return out;
}
