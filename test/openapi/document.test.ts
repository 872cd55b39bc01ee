// The OpenAPI document: valid OpenAPI 3.1 (checked by @readme/openapi-parser) for every example
// and fixture, and saying what the router, the validator and the auth checks actually do.
import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument, type OpenApiDocument } from "../../src/openapi/index.ts";
import { SettingsError } from "../../src/settings/validate.ts";
import type { Settings } from "../../src/settings/types.ts";
import { everything, SETTINGS } from "./fixtures.ts";
import fieldRules from "../http/field-rules/settings.ts";

async function expectValid(document: OpenApiDocument): Promise<void> {
  // The parser dereferences in place; the document under test stays as generated.
  const result = await validate(structuredClone(document) as never);
  expect(result.valid ? "" : compileErrors(result)).toBe("");
}

type Json = Record<string, any>;

const doc = openApiDocument(everything()) as Json;
const schemas = doc.components.schemas as Json;
const op = (path: string, method: string) => doc.paths[path][method] as Json;
const paramNames = (operation: Json) => (operation.parameters ?? []).map((p: Json) => p.name);

describe("the OpenAPI document validates as 3.1", () => {
  for (const [name, settings] of Object.entries(SETTINGS)) {
    it(name, async () => {
      const document = openApiDocument(settings());
      expect(document.openapi).toBe("3.1.0");
      await expectValid(document);
    });
  }

  it("300 resources", async () => {
    const domain: Settings["DOMAIN"] = {};
    for (let i = 0; i < 300; i++) {
      domain[`things${i}`] = {
        schema: { name: { type: "string", required: true }, at: { type: "datetime" }, ref: { type: "objectid", data_relation: { resource: "things0", embeddable: true } } },
      };
    }
    const document = openApiDocument({ RESOURCE_METHODS: ["GET", "POST"], ITEM_METHODS: ["GET", "PATCH"], DOMAIN: domain });
    expect(Object.keys(document.paths)).toHaveLength(1 + 300 * 2);
    await expectValid(document);
    // The validator, not the generator, takes the time: it dereferences every schema.
  }, 120_000);

  it("refuses what the settings check refuses", () => {
    expect(() => openApiDocument({ DOMAIN: { people: { description: 5 as never } } })).toThrow(SettingsError);
  });
});

describe("paths and methods", () => {
  it("every endpoint the router serves, under URL_PREFIX/API_VERSION, with only its methods", () => {
    expect(doc.servers).toEqual([{ url: "/api/v2" }]);
    expect(Object.keys(doc.paths).sort()).toEqual(
      ["/", "/schema", "/schema/{resource}", "/media/{id}", "/people", "/people/{_id}", "/works", "/works/{_id}", "/notes", "/notes/{_id}", "/notes/{note}/replies", "/totals"].sort(),
    );
    expect(Object.keys(doc.paths["/people"])).toEqual(["get", "post", "delete"]);
    expect(Object.keys(doc.paths["/people/{_id}"])).toEqual(["parameters", "get", "patch", "put", "delete"]);
    // Aggregations read only; replies have no item endpoint (item_lookup off).
    expect(Object.keys(doc.paths["/totals"])).toEqual(["get"]);
    expect(doc.paths["/notes/{note}/replies/{_id}"]).toBeUndefined();
    expect(doc.paths["/secrets"]).toBeUndefined();
  });

  it("path parameters carry the URL rules' patterns; additional_lookup shares the item path", () => {
    expect(doc.paths["/notes/{note}/replies"].parameters).toEqual([{ name: "note", in: "path", required: true, schema: { type: "string", pattern: "^(?:[a-f0-9]{24})$" } }]);
    const [lookup] = doc.paths["/people/{_id}"].parameters;
    expect(lookup.schema.anyOf).toEqual([{ pattern: "^(?:[a-f0-9]{24})$" }, { pattern: "^(?:[\\w]+)$" }]);
    expect(lookup.description).toContain("lastname (GET only)");
  });

  it("query parameters where they apply", () => {
    expect(paramNames(op("/people", "get"))).toEqual(["where", "sort", "projection", "page", "max_results", "pretty", "callback"]);
    expect(paramNames(op("/works", "get"))).toContain("embedded");
    expect(op("/works", "get").parameters.find((p: Json) => p.name === "embedded").description).toContain("owner, editors");
    expect(paramNames(op("/notes", "get"))).toContain("show_deleted");
    expect(paramNames(op("/notes/{_id}", "get"))).toEqual(expect.arrayContaining(["version", "show_deleted", "If-None-Match", "If-Modified-Since"]));
    // ?version=all and diffs list the versions as a page, filtered and sorted (docs/documents.md).
    expect(paramNames(op("/notes/{_id}", "get"))).toEqual(expect.arrayContaining(["where", "sort", "page", "max_results"]));
    expect(op("/notes/{_id}", "get").parameters.find((p: Json) => p.name === "where").description).toContain("with version=all or diffs");
    expect(paramNames(op("/people/{_id}", "get"))).not.toContain("where");
    expect(paramNames(op("/totals", "get"))).toEqual(["aggregate", "page", "max_results", "pretty", "callback"]);
    expect(op("/totals", "get").parameters[0].description).toContain("$owner");
    expect(op("/people", "get").parameters.find((p: Json) => p.name === "max_results").description).toContain("50");
  });

  it("cursors and count strategies where a resource has them: parameters, Prefer, headers and _meta", async () => {
    const paged = openApiDocument({
      PAGINATION_COUNT_PARAM: "counting",
      DOMAIN: { cursored: { pagination_cursor: true, schema: { name: { type: "string" } } }, counted: { pagination_count: "none", schema: { name: { type: "string" } } }, plain: { schema: { name: { type: "string" } } } },
    }) as Json;
    await expectValid(paged as OpenApiDocument);
    const list = (path: string) => paged.paths[path].get as Json;
    expect(paramNames(list("/cursored"))).toEqual(expect.arrayContaining(["page", "max_results", "cursor", "counting", "Prefer"]));
    expect(list("/counted").parameters.find((p: Json) => p.name === "counting").schema).toEqual({ type: "string", enum: ["exact", "estimated", "none"], default: "none" });
    expect(paramNames(list("/counted"))).not.toContain("cursor");
    expect(paramNames(list("/plain"))).not.toEqual(expect.arrayContaining(["counting"]));
    expect(Object.keys(list("/cursored").responses[200].headers)).toEqual(["X-Total-Count", "X-Total-Count-Estimate", "Preference-Applied"]);
    expect(paged.components.schemas.cursoredCollection.properties._meta.properties.count.enum).toEqual(["exact", "estimated", "none"]);
    expect(paged.components.schemas.plainCollection.properties._meta).toEqual({ $ref: "#/components/schemas/Meta" });
  });

  it("If-Match is required where ENFORCE_IF_MATCH is on", () => {
    expect(op("/people/{_id}", "patch").parameters).toEqual([expect.objectContaining({ name: "If-Match", in: "header", required: true })]);
    expect(op("/notes/{_id}", "delete").parameters).toEqual([expect.objectContaining({ name: "If-Match", required: false })]);
    expect(Object.keys(op("/people/{_id}", "patch").responses)).toEqual(expect.arrayContaining(["200", "412", "422", "428"]));
    expect(Object.keys(op("/notes/{_id}", "patch").responses)).not.toContain("428");
    // A PUT that may create the document (UPSERT_ON_PUT, on by default) sends none when it does.
    expect(op("/people/{_id}", "put").parameters).toEqual([expect.objectContaining({ name: "If-Match", required: false, description: expect.stringContaining("a PUT that creates one sends none") })]);
    const strict = openApiDocument({ ...everything(), UPSERT_ON_PUT: false }) as Json;
    expect(strict.paths["/people/{_id}"].put.parameters).toEqual([expect.objectContaining({ name: "If-Match", required: true })]);
  });
});

describe("bodies and documents", () => {
  it("POST takes one document or a list; PATCH requires nothing", () => {
    const post = op("/people", "post");
    expect(post.requestBody.content["application/json"].schema.oneOf[0]).toEqual({ $ref: "#/components/schemas/peopleInput" });
    expect(post.requestBody.content["multipart/form-data"]).toBeDefined();
    expect(op("/notes", "post").requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/notesInput" });
    expect(schemas.peopleInput.required).toEqual(["lastname"]);
    expect(schemas.peoplePatch.required).toBeUndefined();
    expect(schemas.peopleInput.additionalProperties).toBe(false);
  });

  it("fields as JSON Schema: types, bounds, patterns, nesting, readOnly, defaults, descriptions", () => {
    const p = schemas.peopleInput.properties;
    expect(p.firstname).toEqual({ type: "string", minLength: 1, maxLength: 10, description: "Given name" });
    expect(p.lastname).toEqual({ type: "string", minLength: 1, description: "unique in the resource" });
    expect(p.born.type).toEqual(["string", "null"]);
    expect(p.age).toEqual({ type: "integer", minimum: 0, maximum: 150, default: 0 });
    expect(p.code).toMatchObject({ readOnly: true, pattern: "^(?:[A-Z]{3}$)" });
    expect(p.location).toMatchObject({ type: "object", required: ["city"], additionalProperties: false });
    expect(p.tags).toEqual({ type: "array", items: { type: "string", maxLength: 20 } });
    expect(p.role.items).toEqual({ enum: ["author", "contributor"] });
    expect(schemas.peopleForm.properties.picture).toEqual({ type: "string", format: "binary" });
    expect(p._id).toEqual({ type: "string", pattern: "^[0-9a-fA-F]{24}$" });
  });

  it("field rules: the full schema, each ruled field saying who is shown it and who may set it", async () => {
    // Shown to every caller: it names fields and roles, never a value (docs/auth.md, "Field rules").
    const document = openApiDocument(fieldRules) as Json;
    await expectValid(document as OpenApiDocument);
    const input = document.components.schemas.employeesInput.properties;
    expect(input.salary.description).toBe("shown only to the roles hr. set only by the roles hr");
    expect(input.profile.properties.ssn.description).toBe("shown only to the roles hr. set only by the roles hr");
    expect(input.badges.items.properties.cost.description).toContain("shown only to the roles hr");
    expect(input.review.description).toContain("also decided by the server, per user and document");
    expect(document.components.schemas.employees.properties.salary.description).toContain("shown only to the roles hr");
  });

  it("GeoJSON fields as GeoJSON", () => {
    const p = schemas.peopleInput.properties;
    expect(p.home.properties.type).toEqual({ const: "Point" });
    expect(p.area.properties.coordinates.items.items.minItems).toBe(2);
    expect(p.trips.properties.features.items.properties.geometry.anyOf[0].oneOf).toHaveLength(6);
    expect(p.shapes.properties.geometries.items.oneOf.map((g: Json) => g.properties.type.const)).toContain("MultiPolygon");
  });

  it("custom rules and types, coercers: described loosely, never dropped", () => {
    const p = schemas.peopleInput.properties;
    expect(p.badge.description).toContain("custom rule 'is_badge'");
    expect(p.special.description).toContain("custom type 'special_thing'");
    expect(p.score.description).toContain("'to_float'");
  });

  it("served documents: meta fields, links, versions, soft delete, embeddable relations, media as served", () => {
    const people = schemas.people.properties;
    expect(Object.keys(people).slice(0, 5)).toEqual(["_id", "_created", "_updated", "_etag", "_links"]);
    expect(people.picture).toMatchObject({ type: ["object", "null"], properties: { file: { contentEncoding: "base64" }, length: { type: "integer" } } });
    expect(schemas.people.required).toBeUndefined();
    expect(schemas.people.description).toBe("The people who write and own works.");
    expect(Object.keys(schemas.notes.properties)).toEqual(expect.arrayContaining(["_version", "_latest_version", "_deleted"]));
    expect(schemas.works.properties.owner.anyOf[1]).toEqual({ $ref: "#/components/schemas/people" });
    expect(schemas.works.properties.editors.items.anyOf[1]).toEqual({ $ref: "#/components/schemas/people" });
    expect(schemas.worksCollection.properties).toHaveProperty("_meta");
  });

  it("answers: envelopes, error statuses, headers", () => {
    const created = op("/people", "post").responses;
    expect(created["201"].headers).toHaveProperty("Location");
    expect(created["201"].content["application/json"].schema.anyOf).toEqual([{ $ref: "#/components/schemas/peopleWritten" }, { $ref: "#/components/schemas/peopleBulkWritten" }]);
    expect(created["422"]).toEqual({ $ref: "#/components/responses/validation" });
    expect(Object.keys(created)).toEqual(expect.arrayContaining(["400", "401", "403", "406", "409", "429", "503"]));
    expect(op("/people", "get").responses["200"].headers).toHaveProperty("X-Total-Count");
    expect(op("/people/{_id}", "get").responses["200"].headers).toHaveProperty("ETag");
    expect(schemas.ValidationError.properties).toHaveProperty("_issues");
    expect(Object.keys(doc.components.responses)).toEqual(expect.arrayContaining(["400", "401", "403", "404", "405", "406", "409", "412", "428", "429", "503", "validation"]));
  });

  it("the media endpoint: the file's own type, ranges, 304 and 416; a form is one document; a PUT that creates sends no ETag", () => {
    const media = op("/media/{id}", "get");
    expect(Object.keys(media.responses)).toEqual(expect.arrayContaining(["200", "206", "304", "404", "416"]));
    expect(Object.keys(media.responses["200"].content)).toEqual(["*/*"]);
    expect(media.responses["206"].headers).toHaveProperty("Content-Range");
    expect(media.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["Range", "If-Modified-Since"]));
    const put = op("/people/{_id}", "put").responses;
    expect(put["200"].headers).toHaveProperty("ETag");
    expect(put["201"].headers).not.toHaveProperty("ETag");
    // A form holds one document: the bulk list is JSON's alone.
    const forms = op("/people", "post").requestBody.content;
    expect(forms["application/json"].schema.oneOf).toHaveLength(2);
    expect(forms["multipart/form-data"].schema).toEqual({ $ref: "#/components/schemas/peopleForm" });
    // A file comes in a form only: JSON's every value for a media field is refused (422).
    expect(schemas.peopleForm.properties.picture).toEqual({ type: "string", format: "binary" });
    expect(schemas.peopleInput.properties).not.toHaveProperty("picture");
    expect(schemas.peoplePatch.properties).not.toHaveProperty("picture");
    expect(op("/people/{_id}", "patch").requestBody.content["multipart/form-data"].schema).toEqual({ $ref: "#/components/schemas/peoplePatchForm" });
    expect(schemas.peoplePatchForm.properties.picture).toEqual({ type: "string", format: "binary" });
    expect(schemas.peoplePatchForm.required).toBeUndefined();
    expect(schemas).not.toHaveProperty("notesForm");
  });
});

describe("security", () => {
  it("one scheme per auth class in use, per resource and method, public methods open", () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["basicAuth", "customAuth", "hmacAuth", "tokenAuth"]);
    expect(doc.components.securitySchemes.hmacAuth).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(op("/people", "get").security).toEqual([]);
    expect(op("/people", "post").security).toEqual([{ basicAuth: ["editor"] }]);
    expect(op("/works", "get").security).toEqual([{ tokenAuth: [] }]);
    expect(op("/works/{_id}", "get").security).toEqual([]);
    expect(op("/notes/{_id}", "patch").security).toEqual([{ hmacAuth: [] }]);
    expect(op("/notes/{note}/replies", "get").security).toEqual([{ customAuth: [] }]);
    expect(Object.keys(op("/notes/{note}/replies", "get").responses)).toContain("401");
  });

  it("an API without auth has no security at all", () => {
    const open = openApiDocument(SETTINGS["examples/settings.json"]!()) as Json;
    expect(Object.keys(SETTINGS)).toContain("test/fixtures/reference/settings.json");
    expect(open.components.securitySchemes).toBeUndefined();
    expect(open.paths["/people"].post.security).toBeUndefined();
    expect(Object.keys(open.paths["/people"].post.responses)).not.toContain("401");
  });
});

describe("the change feed in the document", () => {
  const settings: Settings = {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      people: { change_feed: true, schema: { name: { type: "string" } } },
      plain: { schema: { name: { type: "string" } } },
    },
  };
  const feedDoc = openApiDocument(settings) as Json;

  it("lists text/event-stream on the GETs of a resource with the feed, with its events and Last-Event-ID", async () => {
    const item = Object.keys(feedDoc.paths).find((path) => path.startsWith("/people/{"))!;
    for (const path of ["/people", item]) {
      const get = feedDoc.paths[path].get;
      const content = get.responses[200].content;
      expect(Object.keys(content)).toContain("text/event-stream");
      expect(Object.keys(content["text/event-stream"]["x-events"])).toEqual(["insert", "update", "replace", "enter", "delete", "leave", "reset", "end"]);
      expect(paramNames(get)).toEqual(expect.arrayContaining(["Last-Event-ID", "access_token"]));
    }
    await expectValid(feedDoc as OpenApiDocument);
  });

  it("leaves resources without the feed as they were", () => {
    const get = feedDoc.paths["/plain"].get;
    expect(Object.keys(get.responses[200].content)).not.toContain("text/event-stream");
    expect(paramNames(get)).not.toContain("Last-Event-ID");
  });
});
