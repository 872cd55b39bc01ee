// One resource's schemas: the documents it serves (schema fields, meta fields, embedded documents,
// media as served), the bodies it accepts (POST/PUT with `required`, PATCH without), and its
// collection and write-result envelopes.
import type { Config, Resource } from "../settings/normalize.ts";
import { documentSchema, type JsonSchema } from "../validation/index.ts";
import { ref } from "./components.ts";
import { operatorProperties } from "./updates.ts";
import { OBJECT_ID_PATTERN } from "../util/objectid.ts";
import { isMediaRule } from "../settings/media-rules.ts";

/** Component names of a resource's schemas (resource names need not be valid component names). */
export interface ResourceNames {
  item: string;
  input: string;
  patch: string;
  /** The multipart/form-data bodies of a resource with media fields (files go there only). */
  inputForm: string;
  patchForm: string;
  collection: string;
  written: string;
  bulkWritten: string;
}

export function resourceNames(resources: Resource[], taken: Set<string>): Map<string, ResourceNames> {
  const names = new Map<string, ResourceNames>();
  for (const resource of resources) {
    let base = resource.name.replace(/[^A-Za-z0-9._-]/g, "_") || "resource";
    while (taken.has(base)) base += "_";
    const set: ResourceNames = {
      item: base,
      input: `${base}Input`,
      patch: `${base}Patch`,
      inputForm: `${base}Form`,
      patchForm: `${base}PatchForm`,
      collection: `${base}Collection`,
      written: `${base}Written`,
      bulkWritten: `${base}BulkWritten`,
    };
    for (const name of Object.values(set)) taken.add(name);
    names.set(resource.name, set);
  }
  return names;
}

const OBJECT_ID: JsonSchema = { type: "string", pattern: OBJECT_ID_PATTERN };

function datetime(config: Config): JsonSchema {
  return { type: "string", description: `a date in the format ${config.DATE_FORMAT}` };
}

/** A media field as documents serve it (src/features/media.ts). */
function servedMedia(config: Config): JsonSchema {
  const file: JsonSchema =
    config.RETURN_MEDIA_AS_BASE64_STRING ? { type: ["string", "null"], contentEncoding: "base64" }
    : config.RETURN_MEDIA_AS_URL ? { type: ["string", "null"], format: "uri-reference", description: `served at /${config.MEDIA_ENDPOINT}/{id}` }
    : { type: "null" };
  if (config.EXTENDED_MEDIA_INFO.length === 0) return file;
  const properties: Record<string, JsonSchema> = { file };
  for (const name of config.EXTENDED_MEDIA_INFO) properties[name] = name === "length" ? { type: "integer" } : {};
  return { type: ["object", "null"], properties };
}

/** _meta of a page read with cursors or count strategies (docs/paging.md). */
function pagedMeta(resource: Resource, config: Config): JsonSchema {
  const page = resource.pagination_cursor ? "the page number, when the page was asked for by number rather than by cursor" : "the page served";
  return {
    type: "object",
    properties: {
      [config.QUERY_PAGE]: { type: "integer", description: page },
      [config.QUERY_MAX_RESULTS]: { type: "integer" },
      total: { type: "integer", description: "the total, unless count is none" },
      count: { type: "string", enum: ["exact", "estimated", "none"], description: "how the total was found; the last link comes with an exact one only" },
    },
    required: [config.QUERY_MAX_RESULTS, "count"],
  };
}

/** The meta fields everest adds to every served document of the resource. */
function metaFields(resource: Resource, config: Config): Record<string, JsonSchema> {
  const fields: Record<string, JsonSchema> = {
    [resource.id_field]: { ...OBJECT_ID, readOnly: true },
    [config.DATE_CREATED]: { ...datetime(config), readOnly: true },
    [config.LAST_UPDATED]: { ...datetime(config), readOnly: true },
  };
  if (config.IF_MATCH) fields[config.ETAG] = { type: "string", readOnly: true, description: "send it back in If-Match to change the document" };
  if (resource.hateoas) fields[config.LINKS] = ref("Links");
  if (resource.versioning) {
    fields[config.VERSION] = { type: "integer", minimum: 1, readOnly: true };
    fields[config.LATEST_VERSION] = { type: "integer", minimum: 1, readOnly: true };
  }
  if (resource.soft_delete) fields[config.DELETED] = { type: "boolean", readOnly: true };
  return fields;
}

export function resourceSchemas(resource: Resource, config: Config, all: Map<string, ResourceNames>): Record<string, JsonSchema> {
  const names = all.get(resource.name)!;
  const options = { allowUnknown: resource.allow_unknown, dateFormat: config.DATE_FORMAT };
  // A field that may be embedded holds the referenced document when the client asks for it.
  const relation = (rel: Record<string, unknown>, schema: JsonSchema): JsonSchema => {
    const target = typeof rel.resource === "string" ? all.get(rel.resource) : undefined;
    if (!resource.embedding || rel.embeddable !== true || !target) return schema;
    return { anyOf: [schema, ref(target.item)], description: `embeddable: ?${config.QUERY_EMBEDDED}={"<field>": 1} serves the ${String(rel.resource)} document` };
  };
  const served = documentSchema(resource.schema, { ...options, required: false, media: servedMedia(config), relation });
  delete served.additionalProperties;
  served.properties = { ...metaFields(resource, config), ...(served.properties as Record<string, JsonSchema>) };
  if (resource.raw.description) served.description = String(resource.raw.description);

  const input = documentSchema(resource.schema, options);
  const patch = documentSchema(resource.schema, { ...options, required: false });
  // Clients may choose the id of a new document (src/features/schema-endpoint.ts shows it too).
  for (const body of [input, patch]) {
    const properties = body.properties as Record<string, JsonSchema>;
    if (!(resource.id_field in properties)) properties[resource.id_field] = OBJECT_ID;
  }
  // Files come in a form only: in JSON a media field's every value is refused (422), so the
  // JSON bodies leave it out (a required one stays required: such a resource takes no JSON).
  const media = Object.keys(resource.schema).filter((field) => isMediaRule(resource.schema[field]));
  const forms: Record<string, JsonSchema> = media.length > 0 ? { [names.inputForm]: structuredClone(input), [names.patchForm]: structuredClone(patch) } : {};
  for (const body of [input, patch]) for (const field of media) delete (body.properties as Record<string, JsonSchema>)[field];
  // Update operators sit beside the fields of a PATCH body (docs/updates.md).
  if (resource.update_operators.length > 0) Object.assign(patch.properties as Record<string, JsonSchema>, operatorProperties(resource, config, patch));

  const collection: JsonSchema = {
    type: "object",
    properties: {
      // A pipeline's results are what its stages make, not the source's documents.
      [config.ITEMS]: { type: "array", items: resource.datasource.aggregation ? { type: "object", description: "a result of the pipeline" } : ref(names.item) },
      ...(resource.hateoas ? { [config.LINKS]: ref("Links") } : {}),
      ...(resource.pagination ? { [config.META]: resource.paged ? pagedMeta(resource, config) : ref("Meta") } : {}),
    },
    required: [config.ITEMS],
  };
  const status = { [config.STATUS]: { const: config.STATUS_OK } };
  return {
    [names.item]: served,
    [names.input]: input,
    [names.patch]: patch,
    ...forms,
    [names.collection]: collection,
    [names.written]: {
      description: resource.bandwidth_saver ? "the meta fields of the document written (BANDWIDTH_SAVER)" : "the document written",
      allOf: [ref(names.item), { type: "object", properties: status, required: [config.STATUS] }],
    },
    [names.bulkWritten]: {
      type: "object",
      properties: { ...status, [config.ITEMS]: { type: "array", items: ref(names.written) } },
      required: [config.STATUS, config.ITEMS],
    },
  };
}
