// Endpoints compiled once from DOMAIN into an itty-router route table, which matches each request
// and extracts its params. Each route carries its own regex (Eve's Werkzeug converters become
// named groups; itty-router's own path syntax cannot express them), so no request builds one.
import { IttyRouter } from "itty-router";
import type { Endpoint } from "../scope.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { converterRegex, urlParts } from "../settings/urls.ts";

export interface RouteMatch {
  endpoint: Endpoint;
  params: Record<string, string>;
}

const ITEM_GROUP = "__item";
const LOOKUP_GROUP = "__lookup";
export const MEDIA_GROUP = "__media";
export const SCHEMA_GROUP = "__schema";
export const ASSET_GROUP = "__asset";

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A resource `url` with `<regex("…"):name>` segments → regex source with named groups. */
export function urlToRegex(url: string): string {
  return urlParts(url)
    .map((part) => (typeof part === "string" ? escapeRegex(part) : `(?<${part.name}>${part.pattern})`))
    .join("");
}

type Route = [string, RegExp, Array<(request: { params: Record<string, string> }) => RouteMatch>, string];

export interface CompiledRouter {
  /** The endpoint `url` (a request's URL) names, with its path values decoded. */
  match(url: string): Promise<RouteMatch | null>;
}

export function compileRouter(config: Config): CompiledRouter {
  const base = escapeRegex(config.basePath);
  const routes: Route[] = [];
  const add = (source: string, endpoint: Endpoint) => {
    const pattern = new RegExp(`^${base}${source}/*$`);
    routes.push(["ALL", pattern, [(request) => ({ endpoint, params: { ...((request as { params?: Record<string, string> }).params ?? {}) } })], source]);
  };

  add("", { kind: "home" });
  if (config.SCHEMA_ENDPOINT) {
    const path = "/" + escapeRegex(String(config.SCHEMA_ENDPOINT));
    add(path, { kind: "schema" });
    add(`${path}/(?<${SCHEMA_GROUP}>[^/]+)`, { kind: "schema" });
  }
  if (servesMedia(config)) {
    add(`/${escapeRegex(String(config.MEDIA_ENDPOINT))}/(?<${MEDIA_GROUP}>${converterRegex(String(config.MEDIA_URL))})`, { kind: "media" });
  }
  // As Werkzeug orders rules: a static URL (`users/overseas`) before any URL with a converter
  // (another resource's item `users/<lookup>`); items before the collections that take path
  // values, and the primary lookup before additional_lookup, so a 24-hex value that both would
  // accept is an id, as in Eve.
  const resources = Object.values(config.DOMAIN).filter((r) => !r.internal_resource);
  const isStatic = (resource: Resource) => resource.urlParams.length === 0;
  for (const resource of resources.filter(isStatic)) add("/" + escapeRegex(resource.url), { kind: "collection", resource });
  for (const resource of resources) {
    const path = "/" + urlToRegex(resource.url);
    if (resource.item_lookup && !resource.datasource.aggregation) {
      add(`${path}/(?<${ITEM_GROUP}>${resource.item_url})`, { kind: "item", resource, lookupField: resource.item_lookup_field });
    }
  }
  for (const resource of resources) {
    const path = "/" + urlToRegex(resource.url);
    if (resource.additional_lookup && !resource.datasource.aggregation) {
      add(`${path}/(?<${LOOKUP_GROUP}>${resource.additional_lookup.url})`, { kind: "item", resource, lookupField: resource.additional_lookup.field });
    }
  }
  for (const resource of resources.filter((r) => !isStatic(r))) add("/" + urlToRegex(resource.url), { kind: "collection", resource });
  // Last: a resource of the same name keeps its URL.
  if (config.openApiPath !== null) add("/" + escapeRegex(config.openApiPath), { kind: "openapi" });
  if (config.docsPath !== null) {
    const path = "/" + escapeRegex(config.docsPath);
    add(path, { kind: "docs" });
    add(`${path}/(?<${ASSET_GROUP}>[\\w.-]+)`, { kind: "docs" });
  }

  const router = IttyRouter({ routes: routes as never });
  return {
    async match(url) {
      // Every route is registered for ALL methods: dispatch by method comes later (405, Allow).
      const found = (await router.fetch({ method: "GET", url })) as RouteMatch | undefined;
      if (!found) return null;
      const params = found.params;
      const lookupValue = params[ITEM_GROUP] ?? params[LOOKUP_GROUP];
      delete params[ITEM_GROUP];
      delete params[LOOKUP_GROUP];
      if (lookupValue !== undefined) params.lookup = lookupValue;
      for (const key of Object.keys(params)) params[key] = safeDecode(params[key]!);
      return found;
    },
  };
}

/** Whether the media endpoint exists: files are served by URL, or some resource stores files. */
export function servesMedia(config: Config): boolean {
  return Boolean(config.RETURN_MEDIA_AS_URL) || Object.values(config.DOMAIN).some(hasMedia);
}

export function hasMedia(resource: Resource): boolean {
  return Object.values(resource.schema).some((rules) => rules?.type === "media" || (rules?.type === "list" && (rules.schema as { type?: string } | undefined)?.type === "media"));
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
