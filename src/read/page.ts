// A page of a collection made ready to send, whichever way it was read (Eve's page numbers in
// methods/get.ts, cursors and count strategies in methods/get-paged.ts): each stored document
// built for the response, references embedded, the envelope's links and _meta, and the
// on_fetched_resource hooks.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc } from "../drivers/types.ts";
import { embedDocuments } from "./embedding.ts";
import { buildResponseDocument, lastUpdated } from "./document.ts";
import type { Reply } from "../render/reply.ts";
import type { Resource } from "../settings/normalize.ts";

/**
 * Whether a read's documents may share the store's values below their top level
 * (FindQuery.shared): they only become the response's body, and nothing changes them on the
 * way there — no hook or feature is handed them and nothing is embedded in them. The memory
 * store then gives out its values instead of deep copies of them.
 */
export function onlyRendered(services: Services, ctx: CallScope, resource: Resource, fetchedEvent: string, embedded: string[]): boolean {
  return ctx.rendered && embedded.length === 0 && !services.hooks.hasForResource(fetchedEvent, resource.name) && !services.features.has("beforeRespond", resource);
}

/** What a page carries besides its items. */
export interface PageFrame {
  links?: Record<string, unknown>;
  meta?: Record<string, unknown>;
  headers: Record<string, string>;
}

export async function renderPage(services: Services, ctx: CallScope, resource: Resource, documents: Doc[], embedded: string[], frame: PageFrame): Promise<Reply> {
  const config = services.config;
  let lastModified: Date | undefined;
  const items: Doc[] = [];
  for (const stored of documents) {
    const building = buildResponseDocument(services, ctx, stored, resource);
    const document = building instanceof Promise ? await building : building;
    const updated = lastUpdated(config, document);
    if (updated.getTime() > 0 && (!lastModified || updated > lastModified)) lastModified = updated;
    items.push(document);
  }
  const embedding = embedDocuments(services, ctx, resource, items, embedded);
  if (embedding) await embedding;

  const response: Doc = { [config.ITEMS]: items };
  if (frame.links) response[config.LINKS] = frame.links;
  if (frame.meta) response[config.META] = frame.meta;
  const onFetchedResource = services.hooks.emitForResource("on_fetched_resource", resource.name, response);
  if (onFetchedResource) await onFetchedResource;
  return { status: 200, body: response, lastModified, headers: frame.headers };
}
