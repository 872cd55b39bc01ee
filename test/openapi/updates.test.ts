// The OpenAPI document of update operators and writes by filter (docs/updates.md): each
// operator's fields and operands in the PATCH body, and the collection's PATCH and DELETE.
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/openapi/index.ts";
import { operatorsAndFilters } from "./fixtures.ts";

type Json = Record<string, any>;

const doc = openApiDocument(operatorsAndFilters()) as Json;
const schemas = doc.components.schemas as Json;

describe("update operators and writes by filter in the OpenAPI document", () => {
  it("shows each operator beside the PATCH body's fields, with the fields it may change and its operand", () => {
    const patch = schemas.itemsPatch.properties;
    expect(patch.name).toEqual({ type: "string" });
    expect(Object.keys(patch.$inc.properties)).toEqual(["stock", "price", "stats.views"]);
    expect(patch.$inc.properties.stock).toEqual({ type: "integer" });
    expect(patch.$inc.properties.price).toEqual({ type: "number" });
    expect(patch.$inc.description).toContain("min, max and allowed hold");
    // Read-only fields, the id and meta fields are no operator's; unique only with its index.
    expect(Object.keys(patch.$set.properties)).toEqual(["name", "code", "stock", "price", "seen", "tags", "stats", "stats.views", "stats.label"]);
    expect(Object.keys(patch.$unset.properties)).not.toContain("name");
    expect(Object.keys(patch.$currentDate.properties)).toEqual(["seen"]);
    expect(Object.keys(patch.$push.properties)).toEqual(["tags"]);
    expect(patch.$push.properties.tags.anyOf[0]).toEqual({ type: "string" });
    expect(patch.$push.properties.tags.anyOf[1].properties).toHaveProperty("$slice");
    expect(patch.$addToSet.properties.tags.anyOf[1].properties).not.toHaveProperty("$slice");
    expect(schemas.logsPatch.properties).not.toHaveProperty("$set");
  });

  it("describes PATCH and DELETE by filter on the collection, with where, Prefer and the counts they answer", () => {
    const patch = doc.paths["/items"].patch;
    expect(patch.operationId).toBe("updateWhere_items");
    expect(patch.parameters.map((p: Json) => p.name)).toEqual(["where", "Prefer"]);
    expect(patch.parameters[1].description).toContain("at most 500");
    expect(patch.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/itemsPatch" });
    const answer = patch.responses["200"].content["application/json"].schema;
    expect(answer.properties._meta.required).toEqual(["matched", "updated"]);
    expect(Object.keys(patch.responses)).toEqual(expect.arrayContaining(["200", "400", "422"]));
    const remove = doc.paths["/items"].delete;
    expect(remove.operationId).toBe("deleteWhere_items");
    expect(remove.responses["200"].content["application/json"].schema.properties._meta.required).toEqual(["matched", "deleted"]);
    // Without the switch, DELETE on the collection stays Eve's, and PATCH is not there.
    expect(doc.paths["/logs"].delete.operationId).toBe("deleteAll_logs");
    expect(doc.paths["/logs"].patch).toBeUndefined();
  });
});
