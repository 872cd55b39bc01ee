// What one subscriber is told of one change: which event (or none), and its data rendered as a
// GET of the item renders the document — through buildResponseDocument (src/read/document.ts),
// where every read path's field rules and document features apply — with the subscriber's own
// projection, at delivery time, from the change's after image.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { ChangeRecord, Doc, Projection } from "../drivers/types.ts";
import { project, withMingo } from "../drivers/memory/mingo.ts";
import { copyDocument } from "../drivers/memory/values.ts";
import { buildResponseDocument, shownEtag } from "../read/document.ts";
import { embedDocuments } from "../read/embedding.ts";
import { callerEtag } from "../read/visible.ts";
import { homeLink, resourceHref, resourceLink } from "../render/hateoas.ts";
import { toJson } from "../render/json.ts";
import type { Resource } from "../settings/normalize.ts";
import { sseEvent } from "./sse.ts";

/**
 * `enter` and `leave`: a document that starts or stops matching the stream's filter (its
 * `where`, the item it watches, the caller's own documents) by an update; a soft delete is a
 * `delete`. docs/feed.md lists them.
 */
export type FeedEventName = "insert" | "update" | "replace" | "delete" | "enter" | "leave";

/** What a stream watches and how it renders, fixed when it opens. */
export interface Subscription {
  services: Services;
  /** The stream request's scope: links follow its path, user-restricted access its auth value. */
  ctx: CallScope;
  resource: Resource;
  /** The request's `where`, the item lookup and the data layer's scope, compiled. */
  matches: (doc: Doc) => boolean;
  /** What is taken of the stored document before it is built (the store's projection of a GET). */
  projection: Projection | null;
  /** The client's projection, applied once the document is built, for a caller read whole under field rules (src/read/visible.ts). */
  project?: Projection;
  /** The references embedded as a GET of the item embeds them: the request's `embedded`, else the resource's defaults. */
  embedded: string[];
  /** Subscribers with the same key render a change identically, so one rendering serves them all. */
  renderKey: string;
}

/** The event a change is for this subscriber, or null when it does not concern it. */
export function classify(sub: Subscription, record: ChangeRecord): FeedEventName | null {
  if (record.collection !== sub.resource.datasource.source) return null;
  const before = record.before !== null && sub.matches(record.before);
  const after = record.after !== null && sub.matches(record.after);
  if (!before && !after) return null;
  if (record.op === "insert" || record.op === "delete") return record.op;
  if (before && after) return record.op;
  if (after) return "enter";
  const deleted = sub.services.config.DELETED;
  return sub.resource.soft_delete && record.after?.[deleted] === true ? "delete" : "leave";
}

/**
 * Render keys as small numbers: the per-change cache is looked up once per subscriber and change.
 * Numbers are never reused, so a subscription holding one made before the map was emptied cannot
 * share another's renderings; the map is emptied when full, as its keys carry the request's origin.
 */
const renderKeys = new Map<string, number>();
const RENDER_KEYS_KEPT = 10_000;
let nextKey = 0;

/**
 * The key that says two subscriptions render alike: resource, where its links point,
 * projections, embedded fields, and under field rules the caller's roles (or nothing shared, when
 * a function decides per caller). An embedded document is found as the caller finds it (the
 * target's user-restricted access and field rules), so embedding shares only among callers alike.
 */
export function renderKeyOf(services: Services, ctx: CallScope, resource: Resource, projection: Projection | null, project: Projection | undefined, embedded: string[]): string {
  const rules = resource.field_rules;
  const embeds = embedded.length > 0;
  // Field rules a function decides per caller: a rendering no other subscription shares, and no key kept for it.
  if (!ctx.unrestricted && ((rules !== null && rules.dynamic) || (embeds && Object.values(services.config.DOMAIN).some((target) => target.field_rules?.dynamic)))) return String(nextKey++);
  const caller = ctx.unrestricted || (rules === null && !embeds) ? "" : [...ctx.roles].sort();
  const owner = embeds ? (ctx.requestAuthValue ?? null) : null;
  const key = JSON.stringify([resource.name, ctx.origin, resourceHref(services.config, ctx, resource), projection, project ?? null, caller, embedded, owner]);
  let id = renderKeys.get(key);
  if (id === undefined) {
    if (renderKeys.size >= RENDER_KEYS_KEPT) renderKeys.clear();
    renderKeys.set(key, (id = nextKey++));
  }
  return String(id);
}

/**
 * A change's events as bytes, per event name and render key: a thousand subscribers that see a
 * change alike share one rendering and one encoding of it.
 */
const renderings = new WeakMap<ChangeRecord, Map<string, Uint8Array | Promise<Uint8Array>>>();

/** The data of an event: the document as a GET of the item shows it, or its id and ETag when it is gone. */
function eventData(sub: Subscription, record: ChangeRecord, event: FeedEventName): string | Promise<string> {
  const { config } = sub.services;
  const resource = sub.resource;
  if (event === "delete" || event === "leave") {
    const last = (record.after ?? record.before)!;
    const body: Doc = { [resource.id_field]: last[resource.id_field] ?? record.id };
    if (config.IF_MATCH) body[config.ETAG] = callerEtag(config, sub.ctx, resource, last) ?? shownEtag(config, resource, last);
    return toJson(body, false, config.DATE_FORMAT, config.JSON_SORT_KEYS);
  }
  const building = itemDocument(sub, record.after!);
  const render = (document: Doc) => toJson(document, false, config.DATE_FORMAT, config.JSON_SORT_KEYS);
  return building instanceof Promise ? building.then(render) : render(building);
}

/** A stored document as GET on its item renders it: projection, meta fields, links, features. */
function itemDocument(sub: Subscription, stored: Doc): Doc | Promise<Doc> {
  const { services, ctx, resource } = sub;
  const config = services.config;
  // The log's images may be the store's own objects: a feature that changes a document gets a copy of its own.
  const shown = sub.projection ? withMingo(() => project([stored], sub.projection!, true)[0]!) : services.features.has("beforeRespond", resource) ? copyDocument(stored) : { ...stored };
  const links = (document: Doc): Doc => {
    if (resource.hateoas && document[config.LINKS]) {
      document[config.LINKS] = { ...(document[config.LINKS] as Doc), parent: homeLink(), collection: { title: resource.resource_title, href: resourceLink(config, ctx) } };
    }
    return document;
  };
  // Embedded after the document is built, as GET on the item does (src/methods/get.ts).
  const embed = (document: Doc): Doc | Promise<Doc> => {
    const embedding = embedDocuments(services, ctx, resource, [document], sub.embedded);
    return embedding ? embedding.then(() => links(document)) : links(document);
  };
  const building = buildResponseDocument(services, ctx, shown, resource, sub.project && { project: sub.project });
  return building instanceof Promise ? building.then(embed) : embed(building);
}

/** The bytes of the event a change makes for this subscriber, or null when it makes none; a promise only while a feature or embedding renders asynchronously. */
export function renderChange(sub: Subscription, record: ChangeRecord): Uint8Array | null | Promise<Uint8Array> {
  const event = classify(sub, record);
  if (!event) return null;
  let cache = renderings.get(record);
  const key = event + sub.renderKey;
  const known = cache?.get(key);
  if (known) return known;
  if (!cache) renderings.set(record, (cache = new Map()));
  const store = (json: string) => {
    const bytes = sseEvent(event, json, record.position);
    cache.set(key, bytes);
    return bytes;
  };
  const data = eventData(sub, record, event);
  if (typeof data === "string") return store(data);
  // Kept while it renders too: subscribers that get the change meanwhile (all of them, as the hub
  // hands it to each in turn) wait for this rendering, with its embedding lookups, not their own.
  const rendering = data.then(store);
  cache.set(key, rendering);
  return rendering;
}
