// Eve's `build_response_document`: a stored document made ready to send — meta fields present,
// self and related links, soft-delete flag.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Projection } from "../drivers/types.ts";
import { projectPaths } from "../util/project-paths.ts";
import { visibleDocument } from "./visible.ts";
import { contentEtag } from "../render/etag.ts";
import type { Resource } from "../settings/normalize.ts";
import { documentLink, relatedLinks } from "../render/hateoas.ts";
import type { Config } from "../settings/normalize.ts";
import { withoutKey } from "../util/objects.ts";

const EPOCH = new Date(0);

/**
 * A copy in stored order, but with the id after the other meta fields, as Eve's responses show
 * it. Always a copy: a shared read's documents are the store's own (FindQuery.shared).
 */
function reorder(document: Doc, idField: string): Doc {
  const out = withoutKey(document, idField);
  if (idField in document) out[idField] = document[idField];
  return out;
}

/**
 * The ETag a client is shown for a stored document, and so the one If-Match is checked against:
 * its stored one, or — for a document another program wrote, as Eve does — the hash of the
 * document as it is shown, dates it lacks at the epoch.
 */
export function shownEtag(config: Config, resource: Resource, stored: Doc): string {
  const own = stored[config.ETAG];
  return typeof own === "string" ? own : contentEtag(config, resource, stored);
}

export interface ResponseOptions {
  /** The stored current document, when `stored` is an older version of it. */
  latest?: Doc;
  /** The client's projection, for a document read whole (src/read/visible.ts `readsWhole`). */
  project?: Projection;
}

/**
 * The one way out for documents (docs/contracts.md §2): what the caller may not read is gone
 * before anything else sees the document (field rules, §4). A promise only when a feature's
 * beforeRespond is one: a page built 25 documents, each awaited.
 */
export function buildResponseDocument(services: Services, ctx: CallScope, stored: Doc, resource: Resource, options: ResponseOptions = {}): Doc | Promise<Doc> {
  const config = services.config;
  const visible = resource.field_rules === null ? stored : visibleDocument(config, ctx, resource, stored);
  const document = reorder(options.project ? projectPaths(visible, options.project) : visible, resource.id_field);
  if (!(config.DATE_CREATED in document)) document[config.DATE_CREATED] = EPOCH;
  if (!(config.LAST_UPDATED in document)) document[config.LAST_UPDATED] = EPOCH;
  if (config.IF_MATCH && !(config.ETAG in document)) document[config.ETAG] = shownEtag(config, resource, document);
  if (resource.hateoas && resource.id_field in document) {
    // Filled in, not a literal, as documentLink's link is (docs/performance.md).
    const links: Record<string, unknown> = {};
    links.self = documentLink(config, ctx, resource, document[resource.id_field]);
    const related = relatedLinks(config, ctx, resource, document);
    if (related) links.related = related;
    document[config.LINKS] = links;
  }
  if (resource.soft_delete && document[config.DELETED] == null) document[config.DELETED] = false;
  const responding = services.features.run("beforeRespond", ctx, resource, document, options.latest ?? document);
  return responding ? responding.then(() => document) : document;
}

/** Last-Modified of a document: its LAST_UPDATED, or the epoch for legacy documents. */
export function lastUpdated(config: Config, document: Doc): Date {
  const value = document[config.LAST_UPDATED];
  return value instanceof Date ? value : EPOCH;
}
