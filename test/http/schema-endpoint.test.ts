// SCHEMA_ENDPOINT: every visible resource's schema as Eve serves it, and one resource's alone.
import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { TokenAuth } from "../../src/auth/auth.ts";
import type { Settings } from "../../src/settings/types.ts";

function settings(): Settings {
  return {
    SCHEMA_ENDPOINT: "schema",
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      people: {
        schema: {
          name: { type: "string", maxlength: 10, coerce: (v: unknown) => String(v).trim() },
          job: { type: "dict", schema: { employer: { type: "objectid", data_relation: { resource: "companies" } } } },
          tags: { type: "list", schema: { type: "objectid", data_relation: { resource: "companies", field: "_id" } } },
        },
      },
      companies: { schema: { _id: { type: "string" }, title: { type: "string" } } },
      audits: { internal_resource: true, schema: { what: { type: "string" } } },
      secrets: { authentication: new TokenAuth({ tokens: { "let-me-in": {} } }), schema: { code: { type: "integer" } } },
    },
  };
}

const PEOPLE_SCHEMA = {
  name: { type: "string", maxlength: 10, coerce: "<callable>" },
  job: { type: "dict", schema: { employer: { type: "objectid", data_relation: { resource: "companies", field: "_id" } } } },
  tags: { type: "list", schema: { type: "objectid", data_relation: { resource: "companies", field: "_id" } } },
  _id: { type: "objectid" },
};

describe("schema endpoint", () => {
  const api = testApi(settings());
  afterAll(() => api.close());

  it("serves one resource's schema with Eve's defaults and code shown as <callable>", async () => {
    const response = await api.get("/schema/people");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await json(response);
    expect(body).toEqual(PEOPLE_SCHEMA);
    expect(Object.keys(body)).toEqual(["name", "job", "tags", "_id"]);
    // A declared id field is served as declared.
    expect(await json(await api.get("/schema/companies"))).toEqual({ _id: { type: "string" }, title: { type: "string" } });
  });

  it("lists the schemas of the resources the caller may read, never internal ones", async () => {
    const anonymous = await json(await api.get("/schema"));
    expect(Object.keys(anonymous)).toEqual(["people", "companies"]);
    expect(anonymous.people).toEqual(PEOPLE_SCHEMA);
    const authorized = await json(await api.get("/schema", { Authorization: "Bearer let-me-in" }));
    expect(Object.keys(authorized)).toEqual(["people", "companies", "secrets"]);
    expect(authorized.secrets).toEqual({ code: { type: "integer" }, _id: { type: "objectid" } });
  });

  it("answers 404 for unknown and internal resources, 401 for an unreadable one", async () => {
    expect((await api.get("/schema/nothing")).status).toBe(404);
    expect((await api.get("/schema/audits")).status).toBe(404);
    expect((await api.get("/schema/__proto__")).status).toBe(404);
    expect((await api.get("/schema/secrets")).status).toBe(401);
    expect((await api.get("/schema/secrets", { Authorization: "Bearer let-me-in" })).status).toBe(200);
  });

  it("is read-only and linked from the home page", async () => {
    for (const method of ["POST", "PATCH", "PUT", "DELETE"]) {
      expect((await api.fetch("/schema/people", { method })).status, method).toBe(405);
    }
    const home = await json(await api.get("/"));
    expect(home._links.child).toContainEqual({ href: "schema", title: "schema" });
  });
});

describe("without SCHEMA_ENDPOINT", () => {
  const api = testApi({ ...settings(), SCHEMA_ENDPOINT: null });
  afterAll(() => api.close());

  it("there is no such route", async () => {
    expect((await api.get("/schema/people")).status).toBe(404);
  });
});
