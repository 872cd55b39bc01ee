// Query parameters and request headers, each only where the settings make it apply (src/query/,
// src/methods/get.ts, src/features/aggregation.ts read them), named as the settings name them.
import type { Config, Resource } from "../settings/normalize.ts";
import { converterRegex } from "../settings/urls.ts";
import { COUNT_CHOICES, defaultCount } from "../query/count.ts";
import { MAX_CURSOR_LENGTH } from "../query/cursor.ts";

export interface Parameter {
  name: string;
  in: "query" | "header" | "path";
  description?: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

// Examples go into the description: explorers prefill `example`s, and a prefilled filter would
// hide every document from whoever tries the endpoint.
const query = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }, example?: string): Parameter => ({
  name,
  in: "query",
  description: example === undefined ? description : `${description}; e.g. ${example}`,
  schema,
});

/** `^(?:…)$`: Eve's URL rules match whole path segments. */
export const anchored = (regex: string) => `^(?:${converterRegex(regex)})$`;

function schemaFields(resource: Resource): string[] {
  return Object.keys(resource.schema);
}

/** Fields with an embeddable data_relation, top level and in lists (src/features/embedding.ts). */
export function embeddableFields(resource: Resource): string[] {
  const fields = new Set(resource.embedded_fields);
  for (const [name, rules] of Object.entries(resource.schema)) {
    const relation = (rules?.data_relation ?? (rules?.schema as { data_relation?: unknown } | undefined)?.data_relation) as { embeddable?: unknown } | undefined;
    if (relation?.embeddable === true) fields.add(name);
  }
  return [...fields];
}

/** `$name` strings of an aggregation pipeline: the placeholders `aggregate` may fill. */
export function placeholders(node: unknown, found = new Set<string>()): Set<string> {
  if (typeof node === "string" && /^\$[A-Za-z_]\w*$/.test(node)) found.add(node);
  else if (Array.isArray(node)) node.forEach((member) => placeholders(member, found));
  else if (node && typeof node === "object") Object.values(node).forEach((member) => placeholders(member, found));
  return found;
}

function rendering(config: Config): Parameter[] {
  const out: Parameter[] = [query("pretty", "indents the JSON answer", { type: "boolean" })];
  if (config.JSONP_ARGUMENT) {
    out.push(query(String(config.JSONP_ARGUMENT), "JSONP: wraps the JSON answer in a call of this function", { type: "string", pattern: "^[A-Za-z_$][\\w$.]*$" }));
  }
  return out;
}

function projectionAndEmbedding(resource: Resource, config: Config): Parameter[] {
  const out: Parameter[] = [];
  if (resource.projection) {
    out.push(query(config.QUERY_PROJECTION, `fields to include (1) or leave out (0), as JSON; fields: ${schemaFields(resource).join(", ") || "none declared"}`, { type: "string" }, JSON.stringify({ [schemaFields(resource)[0] ?? config.ID_FIELD]: 1 })));
  }
  const embeddable = embeddableFields(resource);
  if (resource.embedding && embeddable.length) {
    out.push(query(config.QUERY_EMBEDDED, `referenced documents to embed, as JSON; embeddable: ${embeddable.join(", ")}`, { type: "string" }, JSON.stringify({ [embeddable[0]!]: 1 })));
  }
  return out;
}

/** `page` and `max_results`; `note` says when they apply, where not always. */
function pageAndSize(resource: Resource, config: Config, note = ""): Parameter[] {
  if (!resource.pagination) return [];
  return [
    query(config.QUERY_PAGE, `the page to serve, from 1${note}`, { type: "integer", minimum: 1, default: 1 }),
    query(config.QUERY_MAX_RESULTS, `documents per page; larger values are served as PAGINATION_LIMIT, ${resource.pagination_limit}${note}`, {
      type: "integer",
      minimum: 1,
      default: resource.pagination_default,
    }),
  ];
}

function paging(resource: Resource, config: Config): Parameter[] {
  return resource.pagination ? [...pageAndSize(resource, config), ...pagingChoices(resource, config)] : [];
}

/** Cursors and count strategies (docs/paging.md), where the resource has them. */
function pagingChoices(resource: Resource, config: Config): Parameter[] {
  if (!resource.paged) return [];
  const out: Parameter[] = [];
  if (resource.pagination_cursor) {
    out.push(query(config.PAGINATION_CURSOR_PARAM, `where the page starts: the opaque cursor of a page's next, prev or last link, with the same ${config.QUERY_SORT} and ${config.QUERY_WHERE}; not with ${config.QUERY_PAGE}`, { type: "string", pattern: "^[A-Za-z0-9_-]+$", maxLength: MAX_CURSOR_LENGTH }));
  }
  const strategies = { type: "string", enum: COUNT_CHOICES, default: defaultCount(resource) };
  out.push(query(config.PAGINATION_COUNT_PARAM, "how the total is found: exact (counted), estimated (the store's statistics where nothing narrows the read, else counted), none (not at all); _meta.count says which was used", strategies));
  out.push(header("Prefer", `count=exact, count=estimated or count=none: as the ${config.PAGINATION_COUNT_PARAM} parameter, which wins over it`));
  return out;
}

function showDeleted(resource: Resource, config: Config): Parameter[] {
  return resource.soft_delete ? [query(config.SHOW_DELETED_PARAM, "serves soft-deleted documents too (present = on)", { type: "boolean" })] : [];
}

/** GET on a collection. */
export function collectionQuery(resource: Resource, config: Config): Parameter[] {
  if (resource.datasource.aggregation) {
    const names = [...placeholders(resource.datasource.aggregation.pipeline)];
    return [
      query(config.QUERY_AGGREGATION, `values of the pipeline's placeholders, as JSON${names.length ? `; placeholders: ${names.join(", ")}` : ""}`, { type: "string" }, JSON.stringify(Object.fromEntries(names.slice(0, 1).map((n) => [n, 1])))),
      ...paging(resource, config),
      ...rendering(config),
    ];
  }
  return [...filterAndSort(resource, config), ...projectionAndEmbedding(resource, config), ...paging(resource, config), ...showDeleted(resource, config), ...rendering(config)];
}

/** `where` and `sort`, where the resource allows them; `note` says when they apply, where not always. */
function filterAndSort(resource: Resource, config: Config, note = ""): Parameter[] {
  const out: Parameter[] = [];
  if (resource.allowed_filters.length) {
    const fields = resource.allowed_filters.includes("*") ? "any field" : resource.allowed_filters.join(", ");
    out.push(
      query(
        config.QUERY_WHERE,
        `a filter, as a MongoDB query in JSON ({"field": "value"}, operators such as $gt, $in) or in Python syntax (field == "value" and other > 1); filterable: ${fields}${note}`,
        { type: "string" },
        JSON.stringify({ [schemaFields(resource)[0] ?? config.ID_FIELD]: "value" }),
      ),
    );
  }
  if (resource.sorting) out.push(query(config.QUERY_SORT, `the order: "-field,other" or [("field", -1)]${note}`, { type: "string" }, `-${config.LAST_UPDATED}`));
  return out;
}

/** GET on an item. */
export function itemQuery(resource: Resource, config: Config): Parameter[] {
  const out = projectionAndEmbedding(resource, config);
  if (resource.versioning) {
    out.push(query(config.VERSION_PARAM, "a version number, or all (every version) or diffs (the changes of each)", { type: "string", pattern: "^(?:[0-9]+|all|diffs)$" }));
    // Eve reads the versions listed as a collection page (docs/documents.md).
    const listing = `; with ${config.VERSION_PARAM}=all or diffs, over the versions listed`;
    out.push(...filterAndSort(resource, config, listing), ...pageAndSize(resource, config, listing));
  }
  out.push(...showDeleted(resource, config), ...rendering(config));
  return out;
}

const header = (name: string, description: string, required = false): Parameter => ({ name, in: "header", description, required, schema: { type: "string" } });

export const CONDITIONAL_GET: Parameter[] = [
  header("If-None-Match", "the ETag of a cached copy: 304 when it is still current"),
  header("If-Modified-Since", "the date of a cached copy: 304 when the document has not changed since"),
];

/** PATCH, PUT and DELETE of an item; `creates`: a PUT that may create the document (UPSERT_ON_PUT), which sends none. */
export function ifMatch(resource: Resource, creates = false): Parameter[] {
  if (!resource.if_match) return [];
  const enforced = resource.enforce_if_match;
  const when = creates ? " (required to replace a stored document, 428 without it; a PUT that creates one sends none: 412 with one)" : " (required: 428 without it)";
  return [header("If-Match", `the document's current ETag${enforced ? when : ""}; 412 when it has changed`, enforced && !creates)];
}
