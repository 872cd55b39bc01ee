// Endpoints compiled once from DOMAIN into a route table, matched against each request's path.
// Each route carries its own regex (Eve's Werkzeug converters become named groups), so no
// request builds one. The table was itty-router's until its fetch() proved the dearest part of
// routing: it parses the request's URL again and builds a query object, awaiting each handler —
// 1.5 µs a request on Node, 1.7 on Deno, against 0.3 for this loop over the same regexes, with
// the path the request context already holds (bench/README.md).
import type { Endpoint } from "../scope.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { converterRegex, urlParts } from "../settings/urls.ts";
import { isMediaRule } from "../settings/media-rules.ts";
import { SettingsError } from "../settings/validate.ts";

export interface RouteMatch {
  endpoint: Endpoint;
  params: Record<string, string>;
}

const ITEM_GROUP = "__item";
const LOOKUP_GROUP = "__lookup";
export const MEDIA_GROUP = "__media";
export const SCHEMA_GROUP = "__schema";
export const ASSET_GROUP = "__asset";
/** Set on HEALTH_ENDPOINT's readiness path (`<health>/ready`); absent on its liveness path. */
export const PROBE_GROUP = "__probe";

/** A literal part of a path; paths are matched decoded (src/http/request-path.ts). */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A resource `url` with `<regex("…"):name>` segments → regex source with named groups. */
export function urlToRegex(url: string): string {
  return urlParts(url)
    .map((part) => (typeof part === "string" ? escapeRegex(part) : `(?<${part.name}>${part.pattern})`))
    .join("");
}

interface Route {
  pattern: RegExp;
  endpoint: Endpoint;
  /**
   * Its named groups and the path value each sets, learnt from its first match (every match
   * has them all): listing a match's groups each time was 4% of a GET item's handler on Node.
   */
  values?: Array<[group: string, param: string]>;
}

export interface CompiledRouter {
  /** The endpoint a decoded request path (src/http/request-path.ts) names, with its path values. */
  match(path: string): RouteMatch | null;
  /** Every endpoint, in the order paths are matched (the field-rule test reads through each). */
  readonly endpoints: readonly Endpoint[];
}

export function compileRouter(config: Config): CompiledRouter {
  const base = escapeRegex(config.basePath);
  const routes: Route[] = [];
  const add = (source: string, endpoint: Endpoint) => {
    routes.push({ pattern: new RegExp(`^${base}${source}/*$`), endpoint });
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

  const router = matcher(routes);
  // Last, once nothing else can take their paths: HEALTH_ENDPOINT and METRICS_ENDPOINT, which
  // must not shadow, nor be shadowed by, anything a client already reaches.
  for (const { setting, path, endpoint, paths } of operationalEndpoints(config)) {
    for (const probe of paths) {
      const taken = router.match(`${config.basePath}/${probe}`);
      const { kind, resource } = taken?.endpoint ?? {};
      if (kind) throw new SettingsError([`${setting} '${path}' collides with ${resource ? `the ${kind} URL of resource '${resource.name}'` : `the ${kind} endpoint`} at /${probe}: choose another path`]);
    }
    add(`/${escapeRegex(path)}${endpoint.kind === "health" ? `(?:/(?<${PROBE_GROUP}>ready))?` : ""}`, endpoint);
  }
  return router;
}

interface OperationalEndpoint {
  setting: "HEALTH_ENDPOINT" | "METRICS_ENDPOINT";
  path: string;
  endpoint: Endpoint;
  /** Every path it answers. */
  paths: string[];
}

function operationalEndpoints(config: Config): OperationalEndpoint[] {
  const trim = (value: unknown) => String(value).replace(/^\/+|\/+$/g, "");
  const found: OperationalEndpoint[] = [];
  if (config.HEALTH_ENDPOINT) {
    const path = trim(config.HEALTH_ENDPOINT);
    found.push({ setting: "HEALTH_ENDPOINT", path, endpoint: { kind: "health" }, paths: [path, `${path}/ready`] });
  }
  if (config.METRICS_ENDPOINT) {
    const path = trim(config.METRICS_ENDPOINT);
    found.push({ setting: "METRICS_ENDPOINT", path, endpoint: { kind: "metrics" }, paths: [path] });
  }
  return found;
}

function matcher(routes: Route[]): CompiledRouter {
  return {
    endpoints: routes.map((route) => route.endpoint),
    // Every route answers every method: dispatch by method comes later (405, Allow).
    match(path) {
      for (const route of routes) {
        const found = route.pattern.exec(path);
        if (!found) continue;
        const params: Record<string, string> = {};
        const groups = found.groups;
        if (groups) {
          route.values ??= Object.keys(groups).map((key) => [key, key === ITEM_GROUP || key === LOOKUP_GROUP ? "lookup" : key]);
          for (const [group, param] of route.values) {
            const value = groups[group];
            if (value !== undefined) params[param] = value;
          }
        }
        return { endpoint: route.endpoint, params };
      }
      return null;
    },
  };
}

/** Whether the media endpoint exists: files are served by URL, or some resource stores files. */
export function servesMedia(config: Config): boolean {
  return Boolean(config.RETURN_MEDIA_AS_URL) || Object.values(config.DOMAIN).some(hasMedia);
}

export function hasMedia(resource: Resource): boolean {
  return Object.values(resource.schema).some(isMediaRule);
}
