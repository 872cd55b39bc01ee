// An Eve schema as a JSON Schema (draft 2020-12) describing documents as clients send them
// (ids as hex strings, datetimes as strings), for the schema endpoint and OpenAPI. Rules that
// need the database or code (unique, data_relation, coerce, custom rules and types) cannot be
// expressed: they are left out of the checks and named in the field's description instead, so
// that whatever a schema holds still gives a valid JSON Schema.
import type { Schema } from "../settings/types.ts";
import { GEO_TYPES, type GeoTypeName } from "./geo.ts";
import { compilePattern } from "./rules.ts";
import { expandDefinition, KNOWN_RULES, schemaIsForItems } from "./vocabulary.ts";
import { isPlainObject } from "../util/objects.ts";
import { OBJECT_ID_PATTERN } from "../util/objectid.ts";

export type JsonSchema = Record<string, unknown>;

export interface JsonSchemaOptions {
  /** The resource's allow_unknown (sub-documents inherit it, as in validation). */
  allowUnknown?: boolean;
  /** DATE_FORMAT, mentioned in the description of datetime fields. */
  dateFormat?: string;
  /** Whether `required` is kept (default true); off for PATCH bodies and for served documents. */
  required?: boolean;
  /** What a media field holds (default: a file, `format: binary`, as uploaded). */
  media?: JsonSchema;
  /** Rewrites the schema of a field with a data_relation (served documents may embed it). */
  relation?: (relation: Record<string, unknown>, schema: JsonSchema) => JsonSchema;
}

// Longitude and latitude within their bounds, then an optional altitude (isPosition, src/validation/geo.ts).
const position = {
  type: "array",
  prefixItems: [
    { type: "number", minimum: -180, maximum: 180 },
    { type: "number", minimum: -90, maximum: 90 },
  ],
  items: { type: "number" },
  minItems: 2,
  maxItems: 3,
};
const line = { type: "array", items: position, minItems: 2 };
const ring = { type: "array", items: position, minItems: 4 };
const COORDINATES = {
  point: position,
  multipoint: { type: "array", items: position },
  linestring: line,
  multilinestring: { type: "array", items: line },
  polygon: { type: "array", items: ring, minItems: 1 },
  multipolygon: { type: "array", items: { type: "array", items: ring, minItems: 1 } },
} satisfies Partial<Record<GeoTypeName, JsonSchema>>;

const geometry = (type: keyof typeof COORDINATES): JsonSchema => ({
  type: "object",
  properties: { type: { const: GEO_TYPES[type] }, coordinates: COORDINATES[type] },
  required: ["type", "coordinates"],
});
const ANY_GEOMETRY: JsonSchema = { oneOf: (Object.keys(COORDINATES) as Array<keyof typeof COORDINATES>).map(geometry) };
const FEATURE: JsonSchema = {
  type: "object",
  properties: { type: { const: "Feature" }, geometry: { anyOf: [ANY_GEOMETRY, { type: "null" }] }, properties: { type: ["object", "null"] } },
  required: ["type", "geometry"],
};

/** GeoJSON (RFC 7946) objects as MongoDB's 2dsphere index takes them (src/validation/geo.ts). */
function geoSchema(type: GeoTypeName): JsonSchema {
  if (type in COORDINATES) return geometry(type as keyof typeof COORDINATES);
  if (type === "feature") return FEATURE;
  const [member, items] = type === "geometrycollection" ? ["geometries", ANY_GEOMETRY] : ["features", FEATURE];
  return { type: "object", properties: { type: { const: GEO_TYPES[type] }, [member]: { type: "array", items } }, required: ["type", member] };
}

function typeSchema(type: string, options: JsonSchemaOptions): JsonSchema {
  switch (type) {
    case "string":
    case "integer":
    case "number":
    case "boolean":
      return { type };
    case "float":
      return { type: "number" };
    case "list":
      return { type: "array" };
    case "dict":
      return { type: "object" };
    case "datetime":
    case "date":
      return { type: "string", description: `a date in the format ${options.dateFormat ?? "%a, %d %b %Y %H:%M:%S GMT"}` };
    case "objectid":
      return { type: "string", pattern: OBJECT_ID_PATTERN };
    case "decimal":
    case "decimal128":
      return { type: ["string", "number"] };
    case "media":
      return options.media ?? { type: "string", format: "binary" };
  }
  if (type in GEO_TYPES) return geoSchema(type as GeoTypeName);
  return { description: `of the custom type '${type}', checked by the server` };
}

function objectSchema(schema: Schema, allowUnknown: boolean, options: JsonSchemaOptions): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, definition] of Object.entries(schema)) {
    properties[name] = fieldSchema(definition as Record<string, unknown>, allowUnknown, options);
    if ((definition as { required?: unknown }).required === true && options.required !== false) required.push(name);
  }
  const out: JsonSchema = { type: "object", properties };
  if (required.length) out.required = required;
  if (!allowUnknown) out.additionalProperties = false;
  return out;
}

function fieldSchema(raw: Record<string, unknown>, allowUnknown: boolean, options: JsonSchemaOptions): JsonSchema {
  const def = expandDefinition(raw);
  const types = def.type === undefined ? [] : Array.isArray(def.type) ? (def.type as string[]) : [def.type as string];
  const list = types.length === 1 && types[0] === "list";
  const out: JsonSchema = types.length === 1 ? { ...typeSchema(types[0]!, options) } : types.length ? { anyOf: types.map((t) => typeSchema(t, options)) } : {};
  const allOf: JsonSchema[] = [];
  const notes: string[] = [];
  const items = (extra: JsonSchema) => (out.items = { ...(out.items as JsonSchema | undefined), ...extra });

  if (def.nullable === true) {
    if (typeof out.type === "string") out.type = [out.type, "null"];
    else if (out.anyOf) (out.anyOf as JsonSchema[]).push({ type: "null" });
    else if (types.length) out.anyOf = [{ ...out }, { type: "null" }];
  }
  for (const [rule, value] of Object.entries(def)) {
    switch (rule) {
      case "minlength":
      case "maxlength": {
        const bound = rule === "minlength" ? ["minLength", "minItems", "minProperties"] : ["maxLength", "maxItems", "maxProperties"];
        const relevant = types.length ? types : ["string", "list", "dict"];
        if (relevant.includes("string")) out[bound[0]!] = value;
        if (relevant.includes("list")) out[bound[1]!] = value;
        if (relevant.includes("dict")) out[bound[2]!] = value;
        break;
      }
      case "min":
      case "max":
        if (typeof value === "number") out[rule === "min" ? "minimum" : "maximum"] = value;
        break;
      case "allowed":
        if (list) items({ enum: value });
        else out.enum = value;
        break;
      case "forbidden":
        if (list) items({ not: { enum: value } });
        else out.not = { enum: value };
        break;
      case "regex":
        out.pattern = compilePattern(value as string).source;
        break;
      case "contains":
        for (const member of Array.isArray(value) ? value : [value]) allOf.push({ contains: { const: member } });
        break;
      case "items":
        out.prefixItems = (value as Record<string, unknown>[]).map((d) => fieldSchema(d, allowUnknown, options));
        out.minItems = out.maxItems = (value as unknown[]).length;
        break;
      case "schema": {
        const nested = value as Record<string, unknown>;
        if (schemaIsForItems(def.type, nested, () => false)) items(fieldSchema(nested, allowUnknown, options));
        else Object.assign(out, objectSchema(nested as Schema, (def.allow_unknown ?? allowUnknown) === true, options));
        break;
      }
      case "keysrules":
        out.propertyNames = fieldSchema(value as Record<string, unknown>, allowUnknown, options);
        break;
      case "valuesrules":
        allOf.push({ additionalProperties: fieldSchema(value as Record<string, unknown>, allowUnknown, options) });
        break;
      case "anyof":
      case "allof":
      case "oneof":
      case "noneof": {
        const definitions = (value as Record<string, unknown>[]).map((d) => fieldSchema(d, allowUnknown, options));
        if (rule === "noneof") allOf.push({ not: { anyOf: definitions } });
        else allOf.push({ [rule === "anyof" ? "anyOf" : rule === "allof" ? "allOf" : "oneOf"]: definitions });
        break;
      }
      case "default":
        if (value === null || typeof value !== "object" || Array.isArray(value) || isPlainObject(value)) out.default = value;
        break;
      case "readonly":
        if (value === true) out.readOnly = true;
        break;
      case "empty":
        if (value === false && types.includes("string")) out.minLength = Math.max(Number(out.minLength ?? 0), 1);
        break;
      case "description":
        if (typeof value === "string") notes.unshift(value);
        break;
      default: {
        const note = ruleNote(rule, value);
        if (note) notes.push(note);
      }
    }
  }
  if (def.nullable === true && Array.isArray(out.enum)) out.enum = [...out.enum, null];
  if (allOf.length) out.allOf = allOf;
  if (typeof out.description === "string") notes.push(out.description);
  if (notes.length) out.description = notes.join(". ");
  return isPlainObject(def.data_relation) && options.relation ? options.relation(def.data_relation, out) : out;
}

const callableName = (value: unknown) => (typeof value === "string" ? `'${value}'` : "server code");

/** What the server checks or does beyond the JSON Schema, in words; undefined for rules the schema expresses. */
function ruleNote(rule: string, value: unknown): string | undefined {
  switch (rule) {
    case "unique":
    case "unique_within_resource":
      return value === true ? "unique in the resource" : undefined;
    case "unique_to_user":
      return value === true ? "unique among the user's documents" : undefined;
    case "data_relation": {
      const relation = value as { resource?: unknown; field?: unknown };
      return `refers to ${String(relation.resource)}${relation.field ? "." + String(relation.field) : ""}`;
    }
    case "coerce":
      return `converted on the server by ${[value].flat().map(callableName).join(", then ")}`;
    case "default_setter":
      return `defaulted on the server by ${callableName(value)}`;
    case "check_with":
      return `also checked on the server by ${[value].flat().map(callableName).join(", ")}`;
    case "dependencies":
      return `needs ${typeof value === "string" ? value : Array.isArray(value) ? value.join(", ") : Object.keys(value as object).join(", ")}`;
    case "excludes":
      return `excludes ${[value].flat().join(", ")}`;
    // Field rules (docs/auth.md): who is shown the field, and who may set it.
    case "allowed_read_roles":
      return `shown only to the roles ${(value as string[]).join(", ")}`;
    case "allowed_write_roles":
      return `set only by the roles ${(value as string[]).join(", ")}`;
    case "field_access":
      return "who is shown it and who may set it is also decided by the server, per user and document";
  }
  if (KNOWN_RULES.includes(rule)) return undefined;
  return `the custom rule '${rule}' is checked by the server and not described here`;
}

/** The JSON Schema of documents valid against an Eve schema (meta fields not included). */
export function toJsonSchema(schema: Schema, options: JsonSchemaOptions = {}): JsonSchema {
  return { $schema: "https://json-schema.org/draft/2020-12/schema", ...documentSchema(schema, options) };
}

/** toJsonSchema without `$schema`, to embed in another document (OpenAPI's components). */
export function documentSchema(schema: Schema, options: JsonSchemaOptions = {}): JsonSchema {
  return objectSchema(schema, options.allowUnknown === true, options);
}
