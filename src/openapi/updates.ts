// What update operators and writes by filter (docs/updates.md) add to the OpenAPI document: the
// operators a PATCH body may carry, each with the fields it may change and the operand it takes;
// the parameters of a PATCH or DELETE on the collection; and the answer they give.
import { uniqueIndexFields } from "../data/layer.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { JsonSchema } from "../validation/index.ts";
import { operatorTargets } from "../validation/operators.ts";
import { declaredTypes } from "../settings/rule-types.ts";
import type { Parameter } from "./parameters.ts";

const INTEGRAL = (types: ReadonlySet<string>) => types.has("integer") && !types.has("float") && !types.has("number");

const DESCRIPTIONS: Record<string, string> = {
  $set: "sets fields, dotted paths reaching into sub-documents",
  $unset: "removes fields (the values are ignored)",
  $inc: "adds to numbers; min, max and allowed hold for the result",
  $mul: "multiplies numbers; min and max hold for the result",
  $min: "sets a field to the value where it is lower than the stored one",
  $max: "sets a field to the value where it is higher than the stored one",
  $push: "appends items ($each for several, with $position and $slice); maxlength holds for the result",
  $addToSet: "appends items not there yet ($each for several)",
  $pull: "removes the items equal to a value, or matching comparisons ($gt, $in …)",
  $currentDate: "sets datetime fields to the request's time",
};

/** The JSON Schema of the field at a dotted path, within a body's schema. */
function fieldSchema(body: JsonSchema, path: string): JsonSchema {
  let schema: JsonSchema | undefined = body;
  for (const segment of path.split(".")) schema = (schema?.properties as Record<string, JsonSchema> | undefined)?.[segment];
  return schema ?? {};
}

function operand(operator: string, field: JsonSchema, types: ReadonlySet<string>): JsonSchema {
  const item = (field.items as JsonSchema | undefined) ?? {};
  switch (operator) {
    case "$unset":
      return {};
    case "$inc":
    case "$mul":
      return { type: INTEGRAL(types) ? "integer" : "number" };
    case "$currentDate":
      return { anyOf: [{ const: true }, { type: "object", properties: { $type: { const: "date" } }, required: ["$type"], additionalProperties: false }] };
    case "$push":
    case "$addToSet": {
      const modifiers: Record<string, JsonSchema> = { $each: { type: "array", items: item } };
      if (operator === "$push") Object.assign(modifiers, { $position: { type: "integer" }, $slice: { type: "integer" } });
      return { anyOf: [item, { type: "object", properties: modifiers, required: ["$each"], additionalProperties: false }] };
    }
    case "$pull":
      return { anyOf: [item, { type: "object", description: "comparisons with $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin (and, for sub-document items, their fields')" }] };
    default:
      return field;
  }
}

/** The operators a PATCH body of the resource may carry, as properties beside its fields; none without UPDATE_OPERATORS. */
export function operatorProperties(resource: Resource, config: Config, patch: JsonSchema): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  for (const [operator, targets] of operatorTargets(resource, config, new Set(uniqueIndexFields(config, resource)))) {
    const fields: Record<string, JsonSchema> = {};
    for (const { path, def } of targets) fields[path] = operand(operator, fieldSchema(patch, path), declaredTypes(def));
    properties[operator] = { type: "object", description: `update operator: ${DESCRIPTIONS[operator]}`, properties: fields, additionalProperties: false, minProperties: 1 };
  }
  return properties;
}

/** The `where` and `Prefer` of a PATCH or DELETE by filter. */
export function byFilterParameters(resource: Resource, config: Config): Parameter[] {
  const limit = resource.by_filter_max_affected;
  return [
    {
      name: config.QUERY_WHERE,
      in: "query",
      description: "the documents to change, as a GET's filter; required unless Prefer: all asks for every document",
      schema: { type: "string" },
    },
    {
      name: "Prefer",
      in: "header",
      description: `all: every document (no where needed); max-affected=N: refuse the request when more than N documents match${limit === null ? "" : ` (at most ${limit}, BY_FILTER_MAX_AFFECTED)`}`,
      schema: { type: "string" },
    },
  ];
}

/** The answer of a write by filter: how many documents matched and were changed, and each one when they fit in a page. */
export function byFilterAnswer(resource: Resource, config: Config, done: "updated" | "deleted", item: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      [config.STATUS]: { const: config.STATUS_OK },
      [config.META]: { type: "object", properties: { matched: { type: "integer" }, [done]: { type: "integer" } }, required: ["matched", done] },
      [config.ITEMS]: { type: "array", items: item, description: `each document ${done}, when there are at most ${resource.pagination_limit} (PAGINATION_LIMIT)` },
    },
    required: [config.STATUS, config.META],
  };
}
