// The document proven against the server: openapi-typescript's types for examples/settings.json
// (test/openapi/generated/example.d.ts, checked current here) drive openapi-fetch against a live
// everest over HTTP, and every answer is validated against the schema the document gives it.
import { Validator } from "@cfworker/json-schema";
import { dereference } from "@readme/openapi-parser";
import createClient from "openapi-fetch";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type NodeServer } from "../../adapters/node.ts";
import { EXAMPLE_SETTINGS, EXAMPLE_TYPES, exampleTypes } from "../../scripts/openapi-types.ts";
import { createHandler } from "../../src/handler.ts";
import { openApiDocument } from "../../src/openapi/index.ts";
import type { Settings } from "../../src/settings/types.ts";
import type { paths } from "./generated/example.d.ts";

type Json = Record<string, any>;

let server: NodeServer;
// JSON only: the document also lists the XML rendering of each answer.
let client: ReturnType<typeof createClient<paths, "application/json">>;
let resolved: Json;

beforeAll(async () => {
  const settings = JSON.parse(await readFile(EXAMPLE_SETTINGS, "utf8")) as Settings;
  server = (await serve(createHandler(settings), { port: 0, host: "127.0.0.1", signals: false })) as NodeServer;
  client = createClient<paths, "application/json">({ baseUrl: server.url });
  resolved = (await dereference(structuredClone(openApiDocument(settings)) as never)) as Json;
});

afterAll(() => server?.close());

/** The body matches the schema the document gives this operation's answer with this status. */
function expectDocumented(path: string, method: string, response: Response, body: unknown): void {
  const answer = resolved.paths[path][method].responses[String(response.status)];
  expect(answer, `${method} ${path} ${response.status} is documented`).toBeDefined();
  const schema = answer.content?.["application/json"]?.schema;
  if (!schema) return expect(body).toBeUndefined();
  const result = new Validator(schema, "2020-12", false).validate(body);
  expect(result.errors, `${method} ${path} ${response.status}`).toEqual([]);
}

describe("a typed client generated from the document", () => {
  it("the committed types are what openapi-typescript generates today", async () => {
    expect(await readFile(EXAMPLE_TYPES, "utf8"), "run: node --import tsx scripts/openapi-types.ts").toBe(await exampleTypes());
  });

  it("creates, reads, patches with If-Match and lists with where", async () => {
    const created = await client.POST("/people", { body: { firstname: "Ada", lastname: "Lovelace", role: ["author"], born: "Sun, 10 Dec 1815 00:00:00 GMT" } });
    expect(created.response.status).toBe(201);
    expectDocumented("/people", "post", created.response, created.data);
    const written = created.data!;
    if ("_items" in written) throw new Error("one document in, one out");
    expect(written._status).toBe("OK");
    const id = written._id!;

    const read = await client.GET("/people/{_id}", { params: { path: { _id: id } } });
    expect(read.response.status).toBe(200);
    expectDocumented("/people/{_id}", "get", read.response, read.data);
    expect(read.data!.lastname).toBe("Lovelace");
    expect(read.response.headers.get("etag")).toBe(`"${read.data!._etag}"`);

    const refused = await client.PATCH("/people/{_id}", { params: { path: { _id: id }, header: { "If-Match": '"stale"' } }, body: { firstname: "Augusta" } });
    expect(refused.response.status).toBe(412);
    expectDocumented("/people/{_id}", "patch", refused.response, refused.error);

    const patched = await client.PATCH("/people/{_id}", { params: { path: { _id: id }, header: { "If-Match": read.data!._etag! } }, body: { firstname: "Augusta" } });
    expect(patched.response.status).toBe(200);
    expectDocumented("/people/{_id}", "patch", patched.response, patched.data);

    const listed = await client.GET("/people", { params: { query: { where: JSON.stringify({ lastname: "Lovelace" }), max_results: 10 } } });
    expect(listed.response.status).toBe(200);
    expectDocumented("/people", "get", listed.response, listed.data);
    expect(listed.data!._items.map((person) => person.firstname)).toEqual(["Augusta"]);
    expect(listed.data!._meta?.total).toBe(1);
    expect(listed.response.headers.get("x-total-count")).toBe("1");
  });

  it("errors come back in the documented envelopes", async () => {
    const invalid = await client.POST("/people", { body: { lastname: "x".repeat(40) } });
    expect(invalid.response.status).toBe(422);
    expectDocumented("/people", "post", invalid.response, invalid.error);
    const issues = invalid.error && "_issues" in invalid.error ? invalid.error._issues : undefined;
    expect(issues).toHaveProperty("lastname");

    const missing = await client.GET("/people/{_id}", { params: { path: { _id: "0".repeat(24) } } });
    expect(missing.response.status).toBe(404);
    expectDocumented("/people/{_id}", "get", missing.response, missing.error);

    const badQuery = await client.GET("/people", { params: { query: { where: "{not json" } } });
    expect(badQuery.response.status).toBe(400);
    expectDocumented("/people", "get", badQuery.response, badQuery.error);
  });

  it("bulk inserts, embedded documents and versions match their schemas too", async () => {
    const people = await client.POST("/people", { body: [{ lastname: "Hopper" }, { lastname: "Turing" }] });
    expect(people.response.status).toBe(201);
    expectDocumented("/people", "post", people.response, people.data);
    const bulk = people.data!;
    if (!("_items" in bulk)) throw new Error("two documents in, a list out");
    const owner = bulk._items[0]!._id!;

    const work = await client.POST("/works", { body: { title: "Compilers", owner } });
    expectDocumented("/works", "post", work.response, work.data);
    const embedded = await client.GET("/works", { params: { query: { embedded: JSON.stringify({ owner: 1 }) } } });
    expectDocumented("/works", "get", embedded.response, embedded.data);
    expect(embedded.data!._items[0]!.owner).toMatchObject({ lastname: "Hopper" });

    const note = await client.POST("/notes", { body: { title: "draft" } });
    const noteId = (note.data as { _id: string })._id;
    const versions = await client.GET("/notes/{_id}", { params: { path: { _id: noteId }, query: { version: "all" } } });
    expect(versions.response.status).toBe(200);
    expectDocumented("/notes/{_id}", "get", versions.response, versions.data);
  });
});

// Answers that are no resource document: an aggregation's results, a soft-deleted document's 404.
describe("the document against answers beyond the example's", () => {
  const settings: Settings = {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: { soft_delete: true, schema: { name: { type: "string" }, city: { type: "string" } } },
      cities: { datasource: { source: "people", aggregation: { pipeline: [{ $match: { city: "$town" } }, { $group: { _id: "$city", n: { $sum: 1 } } }] } } },
    },
  };
  let other: NodeServer;
  let document: Json;
  beforeAll(async () => {
    other = (await serve(createHandler(settings), { port: 0, host: "127.0.0.1", signals: false })) as NodeServer;
    document = (await dereference(structuredClone(openApiDocument(settings)) as never)) as Json;
  });
  afterAll(() => other?.close());

  const documented = async (path: string, template: string, init?: RequestInit) => {
    const response = await fetch(`${other.url}${path}`, init);
    const body = await response.json();
    const answer = document.paths[template][(init?.method ?? "GET").toLowerCase()].responses[String(response.status)];
    expect(answer, `${path} ${response.status} is documented`).toBeDefined();
    expect(new Validator(answer.content["application/json"].schema, "2020-12", false).validate(body).errors, `${path} ${response.status}`).toEqual([]);
    return { response, body };
  };

  it("an aggregation's results, without X-Total-Count, and a soft-deleted document's 404", async () => {
    const json = { "Content-Type": "application/json" };
    const created = await (await fetch(`${other.url}/people`, { method: "POST", headers: json, body: JSON.stringify({ name: "Ada", city: "Rome" }) })).json();
    const { response, body } = await documented(`/cities?aggregate=${encodeURIComponent('{"$town": "Rome"}')}`, "/cities");
    expect(body._items).toEqual([{ _id: "Rome", n: 1 }]);
    expect(response.headers.get("x-total-count")).toBeNull();
    expect(document.paths["/cities"].get.responses["200"].headers).not.toHaveProperty("X-Total-Count");

    expect((await fetch(`${other.url}/people/${created._id}`, { method: "DELETE", headers: { "If-Match": created._etag } })).status).toBe(204);
    const gone = await documented(`/people/${created._id}`, "/people/{_id}");
    expect(gone.response.status).toBe(404);
    expect(gone.body).toMatchObject({ name: "Ada", _deleted: true, _status: ["ERR"] });
    const missing = await documented(`/people/${"0".repeat(24)}`, "/people/{_id}");
    expect(missing.body._status).toBe("ERR");
  });
});
