// HATEOAS links with Eve's titles and hrefs: hrefs are relative to the API entry point and
// taken from the request path (so sub-resource segments come out filled in); query strings
// come from src/query/links.ts.
import { DBRef } from "bson";
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";
import type { FieldSchema } from "../settings/types.ts";
import { linkQuery, paginationQueries, querydef, type PaginationQueries } from "../query/links.ts";
import type { Paging } from "../query/paging.ts";
import type { Config } from "../settings/normalize.ts";
import { relationField } from "../settings/relations.ts";
import { objectIdHex } from "../util/objectid.ts";

export interface Link {
  title: string;
  href: string;
}

const SLASH = 47;

/** Without leading slashes, and without trailing ones unless `leadingOnly`; no regex (links are made per document). */
function trimSlashes(text: string, leadingOnly = false): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === SLASH) start++;
  if (!leadingOnly) while (end > start && text.charCodeAt(end - 1) === SLASH) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** The request path relative to the entry point, without the item's lookup value. */
export function resourceLink(config: Config, ctx: CallScope): string {
  let path = trimSlashes(ctx.path);
  if (ctx.endpoint.kind === "item") {
    // The value as routed, which a url regex may let hold a slash (`2024%2Fintro` is decoded as
    // Werkzeug decodes it): the last segment alone would leave part of it in every link. A server
    // call on an item by another filter has no value in its path, and nothing to take off.
    const value = ctx.params.lookup;
    if (value !== undefined && path.endsWith(`/${value}`)) path = path.slice(0, -value.length - 1);
  }
  const base = trimSlashes(config.basePath, true);
  if (base && (path === base || path.startsWith(base + "/"))) path = trimSlashes(path.slice(base.length), true);
  return path;
}

/** Where a resource's items live: this request's path for its own resource, else its url. */
export function resourceHref(config: Config, ctx: CallScope, resource: Resource): string {
  return ctx.resource === resource && ctx.endpoint.kind !== "home" ? resourceLink(config, ctx) : resource.url;
}

export function documentLink(config: Config, ctx: CallScope, resource: Resource, id: unknown, version?: unknown): Link {
  const versionPart = version !== undefined && version !== null ? `?version=${version}` : "";
  // Filled in rather than written as a literal: a bulk POST holds a link per document, which
  // would have V8 allocate every later response's link in old space (docs/performance.md).
  const link = {} as Link;
  link.title = resource.item_title;
  link.href = `${resourceHref(config, ctx, resource)}/${idString(id)}${versionPart}`;
  return link;
}

export function homeLink(): Link {
  return { title: "home", href: "/" };
}

function idString(id: unknown): string {
  return typeof id === "object" && id !== null && "toHexString" in id ? objectIdHex(id as { toHexString(): string }) : String(id);
}

/**
 * Eve's `_pagination_links` for a collection, or for the version listing of an item when
 * `itemId` is given (then self points at the item and parent/collection change as in Eve).
 * `queries`: the query strings of self, next, prev and last where a page chose them itself
 * (cursors and count strategies, methods/get-paged.ts).
 */
export function paginationLinks(config: Config, ctx: CallScope, paging: Paging, total: number | null, itemId?: unknown, queries: PaginationQueries = paginationQueries(ctx.args, ctx.resource!, config, paging, total)): Record<string, Link> {
  const resource = ctx.resource!;
  const base = resourceLink(config, ctx);
  const links: Record<string, Link> = { parent: homeLink(), self: { title: resource.resource_title, href: base } };
  if (itemId !== undefined) {
    links.self = documentLink(config, ctx, resource, itemId);
    const version = ctx.arg(config.VERSION_PARAM);
    if (version === "all" || version === "diffs") {
      links.parent = { title: resource.resource_title, href: base };
      links.collection = documentLink(config, ctx, resource, itemId);
    } else {
      links.collection = { title: resource.resource_title, href: base + querydef(linkQuery(ctx.args, resource, config, paging.maxResults), paging.page, config) };
    }
  }
  links.self = { ...links.self!, href: links.self!.href + queries.self };
  const stem = links.self.href.split("?")[0]!;
  if (queries.next !== undefined) links.next = { title: "next page", href: stem + queries.next };
  if (queries.last !== undefined) links.last = { title: "last page", href: stem + queries.last };
  if (queries.prev !== undefined) links.prev = { title: "previous page", href: stem + queries.prev };
  return links;
}

type Relation = NonNullable<FieldSchema["data_relation"]>;

/** The fields of a resource's schema that hold references, found once per resource: most have none. */
const relationFields = new WeakMap<Resource, Array<[string, Relation]>>();

function relationsOf(resource: Resource): Array<[string, Relation]> {
  let fields = relationFields.get(resource);
  if (!fields) {
    fields = [];
    for (const [field, rules] of Object.entries(resource.schema)) {
      const relation = rules?.data_relation ?? (rules?.type === "list" ? (rules.schema as { data_relation?: Relation } | undefined)?.data_relation : undefined);
      if (relation?.resource) fields.push([field, relation]);
    }
    relationFields.set(resource, fields);
  }
  return fields;
}

/** `_links.related` for data_relation fields present in a document. */
export function relatedLinks(config: Config, ctx: CallScope, resource: Resource, document: Doc): Record<string, Link | Link[]> | null {
  const relations = relationsOf(resource);
  if (relations.length === 0) return null;
  const related: Record<string, Link | Link[]> = {};
  for (const [field, relation] of relations) {
    if (!(field in document)) continue;
    const target = config.DOMAIN[relation.resource];
    // An internal resource has no URL to link to.
    if (!target || target.internal_resource) continue;
    const link = (value: unknown): Link => {
      // A DBRef names its collection, which is where Eve links it.
      if (value instanceof DBRef) return documentLink(config, ctx, config.DOMAIN[value.collection] ?? target, value.oid);
      if (relation.version && value && typeof value === "object" && !(value instanceof Date) && !("toHexString" in value)) {
        const ref = value as Doc;
        return documentLink(config, ctx, target, ref[relationField(config, relation)], ref[config.VERSION]);
      }
      const id = value && typeof value === "object" && !("toHexString" in value) ? (value as Doc)[relationField(config, relation)] : value;
      return documentLink(config, ctx, target, id);
    };
    const value = document[field];
    if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    related[field] = Array.isArray(value) ? value.map(link) : link(value);
  }
  return Object.keys(related).length ? related : null;
}
