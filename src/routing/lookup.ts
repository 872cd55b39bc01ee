// Path values → database conditions: the item lookup and sub-resource segments of a URL, typed
// by the schema (ids become ObjectIds).
import { ObjectId } from "bson";
import type { CallScope } from "../scope.ts";
import type { Doc, Filter } from "../drivers/types.ts";
import { parseDate } from "../render/dates.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isObjectIdHex } from "../util/objectid.ts";

/**
 * A lookup value from the URL, typed by its field's schema (ids become ObjectIds). A field the
 * schema does not type gets Eve's cast of query values: 24 hex digits are an ObjectId (unless
 * query_objectid_as_string), a DATE_FORMAT date a datetime.
 */
export function convertPathValue(resource: Resource, field: string, value: string, config: Config): unknown {
  const type = resource.schema[field]?.type ?? (field === resource.id_field ? "objectid" : undefined);
  if (type === undefined) {
    if (isObjectIdHex(value) && !resource.query_objectid_as_string) return new ObjectId(value);
    return parseDate(value, config.DATE_FORMAT) ?? value;
  }
  if (type === "objectid" && isObjectIdHex(value) && !resource.query_objectid_as_string) return new ObjectId(value);
  if (type === "integer" && /^-?\d+$/.test(value)) return Number(value);
  if ((type === "number" || type === "float") && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** Conditions from sub-resource URL segments (`lists/<…:list_id>/items`). */
export function pathConditions(ctx: CallScope, resource: Resource, config: Config): Filter {
  const conditions: Filter = {};
  for (const param of resource.urlParams) {
    const raw = ctx.params[param.name];
    if (raw !== undefined) conditions[param.name] = convertPathValue(resource, param.name, raw, config);
  }
  return conditions;
}

/**
 * The sub-resource segments a written document takes from its URL: those the schema declares
 * are validated with the document; the others are stored as they are after validation, or the
 * document would be refused as unknown, or stored where its own URL cannot find it (Eve drops them).
 */
export function pathFields(ctx: CallScope, resource: Resource, config: Config): { declared: Doc; undeclared: Doc } {
  const declared: Doc = {};
  const undeclared: Doc = {};
  for (const [field, value] of Object.entries(pathConditions(ctx, resource, config))) {
    if (field in resource.schema) declared[field] = value;
    else undeclared[field] = value;
  }
  return { declared, undeclared };
}

/**
 * A PATCH's fields with the sub-resource segments it sets put back to the URL's values, as POST
 * and PUT take them: a write cannot move a document out of the URL it was sent to. Only those it
 * sets: the others (an undeclared one above all, which validation would refuse) are not added.
 * The payload itself when it sets none (every resource without segments).
 */
export function keepPathValues(ctx: CallScope, resource: Resource, config: Config, payload: Doc): Doc {
  if (!resource.urlParams.some((param) => Object.hasOwn(payload, param.name))) return payload;
  const kept: Doc = { ...payload };
  for (const [field, value] of Object.entries(pathConditions(ctx, resource, config))) if (Object.hasOwn(payload, field)) kept[field] = value;
  return kept;
}

/**
 * The item lookup of an item request, sub-resource segments included. Eve casts 24 hex digits
 * on the id field to an ObjectId whatever the schema types the field (eve/io/mongo/mongo.py
 * `_mongotize`), so a resource that declares its id a string still finds the documents it
 * created without one, which the store named by an ObjectId; a document created with that
 * string as its id is found too.
 */
export function itemLookup(ctx: CallScope, config: Config): Filter {
  const resource = ctx.resource!;
  const field = ctx.endpoint.lookupField ?? resource.id_field;
  const value = convertPathValue(resource, field, ctx.params.lookup ?? "", config);
  const either = field === resource.id_field && typeof value === "string" && isObjectIdHex(value) && !resource.query_objectid_as_string;
  return { ...pathConditions(ctx, resource, config), [field]: either ? { $in: [new ObjectId(value), value] } : value };
}
