// Paths and operations: every endpoint src/routing/router.ts serves, with only the methods each
// one allows, its parameters, bodies, answers and security.
import { hasMedia, servesMedia } from "../routing/router.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { PathParam } from "../settings/urls.ts";
import type { JsonSchema } from "../validation/index.ts";
import { jsonContent, ref, responseRef } from "./components.ts";
import { eventStream, streamParameters, streams } from "./feed.ts";
import { anchored, collectionQuery, CONDITIONAL_GET, ifMatch, itemQuery, type Parameter } from "./parameters.ts";
import type { ResourceNames } from "./resources.ts";
import type { SecurityPlan } from "./security.ts";
import { byFilterAnswer, byFilterParameters } from "./updates.ts";

type Operation = Record<string, unknown>;

/** The tag of the endpoints that belong to no resource. */
export const API_TAG = { name: "API", description: "The API's own endpoints: the resource list, schemas, media files" };
type PathItem = Record<string, Operation>;

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

export const HEADERS = {
  ETag: { description: "the document's ETag, for If-Match and If-None-Match", schema: { type: "string" } },
  "Last-Modified": { description: "when the document (or the newest of the page) last changed", schema: { type: "string" } },
  "X-Total-Count": { description: "how many documents match, over all pages", schema: { type: "integer" } },
  Location: { description: "the URL of the document created", schema: { type: "string" } },
};

/** A page read with cursors or count strategies (docs/paging.md): which count the client got. */
const PAGED_HEADERS = {
  "X-Total-Count": { description: "how many documents match, over all pages, when counted exactly", schema: { type: "integer" } },
  "X-Total-Count-Estimate": { description: "the store's estimate of the documents in the collection (count=estimated)", schema: { type: "integer" } },
  "Preference-Applied": { description: "the count preference of Prefer that was followed", schema: { type: "string" } },
};

/** A resource `url` → an OpenAPI path template and its parameters (`<regex("…"):name>` → `{name}`). */
function template(url: string, params: PathParam[]): { path: string; parameters: Parameter[] } {
  const path = url.replace(/<regex\((["'])(.*?)\1\):(\w+)>/g, (_m, _q, _re, name: string) => `{${name}}`);
  const parameters = params.map((p): Parameter => ({ name: p.name, in: "path", required: true, schema: { type: "string", pattern: anchored(p.pattern) } }));
  return { path: "/" + path, parameters };
}

export interface PathContext {
  config: Config;
  names: Map<string, ResourceNames>;
  security: SecurityPlan;
}

function errors(ctx: PathContext, method: string, secured: boolean, statuses: number[]): Record<string, unknown> {
  const { config } = ctx;
  const out: Record<string, unknown> = {};
  const rateLimited = config[`RATE_LIMIT_${method}`] != null;
  const all = [400, ...(secured ? [401, 403] : []), ...statuses, 406, ...(rateLimited ? [429] : []), 503].sort((a, b) => a - b);
  for (const status of all) out[status] = status === config.VALIDATION_ERROR_STATUS ? responseRef("validation") : responseRef(status);
  return out;
}

function operation(ctx: PathContext, resource: Resource | null, method: string, item: boolean, spec: { id: string; summary: string; parameters?: Parameter[]; body?: unknown; responses: Record<string, unknown>; errors: number[] }): Operation {
  const security = ctx.security.forOperation(resource, method, item);
  const secured = security !== undefined && security.length > 0;
  const description = resource ? resource.raw.description : undefined;
  return {
    operationId: spec.id,
    summary: spec.summary,
    ...(typeof description === "string" ? { description } : {}),
    tags: [resource ? resource.name : API_TAG.name],
    ...(spec.parameters?.length ? { parameters: spec.parameters } : {}),
    ...(spec.body ? { requestBody: spec.body } : {}),
    responses: { ...spec.responses, ...errors(ctx, method, secured, spec.errors) },
    ...(security !== undefined ? { security } : {}),
  };
}

/** `multipart`: the one document a form holds, where the resource has media fields; a form is never a list. */
function body(schema: JsonSchema, multipart: JsonSchema | null): unknown {
  const content: Record<string, unknown> = { "application/json": { schema } };
  if (multipart) content["multipart/form-data"] = { schema: multipart };
  return { required: true, content };
}

function collectionPath(ctx: PathContext, resource: Resource, names: ResourceNames): PathItem {
  const { config } = ctx;
  const ops: PathItem = {};
  const title = resource.resource_title;
  for (const method of resource.resource_methods) {
    if (method === "GET") {
      // An aggregation answers no X-Total-Count (docs/endpoints.md).
      const counted = !resource.optimize_pagination_for_speed && !resource.datasource.aggregation;
      const headers = resource.paged ? PAGED_HEADERS : counted ? { "X-Total-Count": header("X-Total-Count") } : {};
      ops.get = operation(ctx, resource, method, false, {
        id: `list_${names.item}`,
        summary: resource.datasource.aggregation ? `Run the ${title} aggregation` : `List ${title}`,
        parameters: [...collectionQuery(resource, config), ...(streams(resource) ? streamParameters(config) : [])],
        responses: {
          200: {
            description: `a page of ${title}${streams(resource) ? ", or the stream of their changes" : ""}`,
            headers,
            content: { ...jsonContent(ref(names.collection), config), ...(streams(resource) ? eventStream(config, resource, names.item) : {}) },
          },
        },
        errors: [404],
      });
    } else if (method === "POST") {
      const schema = resource.bulk_enabled ? { oneOf: [ref(names.input), { type: "array", items: ref(names.input), minItems: 1 }] } : ref(names.input);
      const written = resource.bulk_enabled ? { anyOf: [ref(names.written), ref(names.bulkWritten)] } : ref(names.written);
      ops.post = operation(ctx, resource, method, false, {
        id: `create_${names.item}`,
        summary: resource.bulk_enabled ? `Create one ${resource.item_title} or several` : `Create a ${resource.item_title}`,
        body: body(schema, hasMedia(resource) ? ref(names.inputForm) : null),
        responses: { 201: { description: "created", headers: { Location: header("Location") }, content: jsonContent(written, config) } },
        errors: [409, config.VALIDATION_ERROR_STATUS],
      });
    } else if (method === "PATCH") {
      ops.patch = operation(ctx, resource, method, false, {
        id: `updateWhere_${names.item}`,
        summary: `Change every ${resource.item_title} a where matches`,
        parameters: byFilterParameters(resource, config),
        body: body(ref(names.patch), null),
        responses: { 200: { description: "changed: how many matched and were updated", content: jsonContent(byFilterAnswer(resource, config, "updated", ref(names.written)), config) } },
        errors: [config.VALIDATION_ERROR_STATUS],
      });
    } else if (method === "DELETE" && resource.delete_by_filter) {
      const id = { type: "object", properties: { [resource.id_field]: { type: "string" } } };
      ops.delete = operation(ctx, resource, method, false, {
        id: `deleteWhere_${names.item}`,
        summary: `Delete every ${resource.item_title} a where matches`,
        parameters: byFilterParameters(resource, config),
        responses: { 200: { description: "deleted: how many matched and were deleted", content: jsonContent(byFilterAnswer(resource, config, "deleted", id), config) } },
        errors: [],
      });
    } else if (method === "DELETE") {
      ops.delete = operation(ctx, resource, method, false, {
        id: `deleteAll_${names.item}`,
        summary: `Delete every ${resource.item_title}`,
        responses: { 204: { description: "deleted" } },
        errors: [404],
      });
    }
  }
  return ops;
}

function itemPath(ctx: PathContext, resource: Resource, names: ResourceNames, methods: string[]): PathItem {
  const { config } = ctx;
  const ops: PathItem = {};
  const noun = resource.item_title;
  const etag = { ETag: header("ETag") };
  const written = jsonContent(ref(names.written), config);
  for (const method of methods) {
    if (method === "GET") {
      const served = resource.versioning ? { anyOf: [ref(names.item), ref(names.collection)], description: `with ?${config.VERSION_PARAM}=all or diffs, the versions as a collection` } : ref(names.item);
      ops.get = operation(ctx, resource, method, true, {
        id: `get_${names.item}`,
        summary: `Get a ${noun}`,
        parameters: [...itemQuery(resource, config), ...CONDITIONAL_GET, ...(streams(resource) ? streamParameters(config) : [])],
        responses: {
          200: {
            description: `the ${noun}${streams(resource) ? ", or the stream of its changes" : ""}`,
            headers: { ...etag, "Last-Modified": header("Last-Modified") },
            content: { ...jsonContent(served, config), ...(streams(resource) ? eventStream(config, resource, names.item) : {}) },
          },
          304: { description: "the cached copy is current", headers: etag },
          ...(resource.soft_delete ? { 404: softDeleted(config, names) } : {}),
        },
        errors: resource.soft_delete ? [] : [404],
      });
    } else if (method === "PATCH" || method === "PUT") {
      const patch = method === "PATCH";
      ops[method.toLowerCase()] = operation(ctx, resource, method, true, {
        id: `${patch ? "update" : "replace"}_${names.item}`,
        summary: patch ? `Change fields of a ${noun}${resource.update_operators.length ? ", with update operators" : ""}` : `Replace a ${noun}`,
        parameters: ifMatch(resource, !patch && resource.upsert_on_put),
        body: body(ref(patch ? names.patch : names.input), hasMedia(resource) ? ref(patch ? names.patchForm : names.inputForm) : null),
        responses: {
          200: { description: patch ? "updated" : "replaced", headers: etag, content: written },
          ...(!patch && resource.upsert_on_put ? { 201: { description: "created (UPSERT_ON_PUT)", headers: { Location: header("Location") }, content: written } } : {}),
        },
        errors: [404, config.VALIDATION_ERROR_STATUS, ...(resource.if_match ? [412] : []), ...(resource.enforce_if_match ? [428] : [])],
      });
    } else if (method === "DELETE") {
      ops.delete = operation(ctx, resource, method, true, {
        id: `delete_${names.item}`,
        summary: `Delete a ${noun}`,
        parameters: ifMatch(resource),
        responses: { 204: { description: "deleted" } },
        errors: [404, ...(resource.if_match ? [412] : []), ...(resource.enforce_if_match ? [428] : [])],
      });
    }
  }
  return ops;
}

/** A soft-deleting resource's 404: the error, or (as Eve answers) the deleted document with the error in it. */
function softDeleted(config: Config, names: ResourceNames): unknown {
  const error = {
    type: "object",
    properties: { [config.STATUS]: { type: "array", items: { const: config.STATUS_ERR } }, [config.ERROR]: { type: "object", properties: { code: { const: 404 }, message: { type: "string" } } } },
    required: [config.STATUS, config.ERROR],
  };
  return {
    description: `Not found; for a document soft-deleted, the document itself (${config.DELETED}: true) with ${config.STATUS} ["${config.STATUS_ERR}"] and ${config.ERROR}`,
    content: jsonContent({ anyOf: [ref("Error"), { allOf: [ref(names.item), error] }] }, config),
  };
}

/** The item path of a resource: its primary lookup and additional_lookup share one template, since OpenAPI cannot tell two `{param}`s apart by pattern. */
function itemEndpoint(ctx: PathContext, resource: Resource, base: { path: string; parameters: Parameter[] }, names: ResourceNames): [string, PathItem, Parameter[]] | null {
  const primary = resource.item_lookup ? resource.item_lookup_field : null;
  const extra = resource.additional_lookup;
  if (resource.datasource.aggregation || (!primary && !extra)) return null;
  const name = primary ?? extra!.field;
  const patterns = [...(primary ? [anchored(resource.item_url)] : []), ...(extra ? [anchored(extra.url)] : [])];
  const description =
    primary && extra ? `the document's ${primary}, or its ${extra.field} (GET only)` : `the document's ${name}`;
  const schema = patterns.length === 1 ? { type: "string", pattern: patterns[0] } : { type: "string", anyOf: patterns.map((pattern) => ({ pattern })) };
  const lookup: Parameter = { name, in: "path", required: true, description, schema };
  const methods = primary ? resource.item_methods : resource.item_methods.includes("GET") ? ["GET"] : [];
  return [`${base.path}/{${name}}`, itemPath(ctx, resource, names, methods), [...base.parameters, lookup]];
}

function withParameters(item: PathItem, parameters: Parameter[]): Record<string, unknown> {
  return parameters.length ? { parameters, ...item } : item;
}

function fixedPaths(ctx: PathContext, visible: Resource[]): Record<string, unknown> {
  const { config } = ctx;
  const paths: Record<string, unknown> = {};
  const get = (id: string, summary: string, responses: Record<string, unknown>, parameters?: Parameter[]) => ({ get: operation(ctx, null, "GET", false, { id, summary, responses, errors: [], ...(parameters ? { parameters } : {}) }) });
  const links = config.HATEOAS ? { type: "object", properties: { [config.LINKS]: { type: "object", properties: { child: { type: "array", items: ref("Link") } } } } } : { type: "object" };
  paths["/"] = get("home", "List the resources", { 200: { description: "links to every resource the caller may read", content: jsonContent(links, config) } });
  if (config.SCHEMA_ENDPOINT) {
    const at = `/${config.SCHEMA_ENDPOINT}`;
    const schemas = { type: "object", additionalProperties: { type: "object" } };
    paths[at] = get("schemas", "Every resource's Eve schema", { 200: { description: "resource name → its schema", content: jsonContent(schemas, config) } });
    const resourceParam: Parameter = { name: "resource", in: "path", required: true, schema: { type: "string", enum: visible.map((r) => r.name) } };
    paths[`${at}/{resource}`] = get("schema", "One resource's Eve schema", { 200: { description: "the schema", content: jsonContent({ type: "object" }, config) }, 404: responseRef(404) }, [resourceParam]);
  }
  if (servesMedia(config)) {
    const idParam: Parameter = { name: "id", in: "path", required: true, schema: { type: "string", pattern: anchored(String(config.MEDIA_URL)) } };
    const file = { "*/*": { schema: { type: "string", format: "binary" } } };
    paths[`/${config.MEDIA_ENDPOINT}/{id}`] = get(
      "media",
      "Download a media file",
      {
        200: { description: "the file, of the Content-Type it was uploaded with", headers: { "Last-Modified": header("Last-Modified"), "Accept-Ranges": { schema: { type: "string", const: "bytes" } }, "X-Content-Type-Options": { schema: { type: "string", const: "nosniff" } }, "Content-Security-Policy": { description: "the file never runs as a page of this origin", schema: { type: "string", const: "sandbox" } } }, content: file },
        206: { description: "the range asked for (Range header)", headers: { "Content-Range": { description: "bytes start-end/size", schema: { type: "string" } } }, content: file },
        304: { description: "not changed since If-Modified-Since" },
        404: responseRef(404),
        416: { description: "a range outside the file", headers: { "Content-Range": { description: "bytes */size", schema: { type: "string" } } }, content: jsonContent(ref("Error"), config) },
      },
      [idParam, { name: "Range", in: "header", schema: { type: "string" }, description: "bytes=start-end" }, { name: "If-Modified-Since", in: "header", schema: { type: "string" }, description: "the date of a cached copy: 304 when the file has not changed since" }],
    );
  }
  return paths;
}

export function buildPaths(ctx: PathContext): Record<string, unknown> {
  const visible = Object.values(ctx.config.DOMAIN).filter((r) => !r.internal_resource);
  const paths = fixedPaths(ctx, visible);
  for (const resource of visible) {
    const names = ctx.names.get(resource.name)!;
    const base = template(resource.url, resource.urlParams);
    paths[base.path] = withParameters(collectionPath(ctx, resource, names), base.parameters);
    const item = itemEndpoint(ctx, resource, base, names);
    if (item && Object.keys(item[1]).length) paths[item[0]] = withParameters(item[1], item[2]);
  }
  return paths;
}
