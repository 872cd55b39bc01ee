// Whole-document behaviour: POST, PUT and PATCH, required and readonly fields, defaults,
// dotted keys, unknown fields, Eve's meta fields and keys that must never be stored.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { ENGINES, single } from "./support.ts";

const ID = new ObjectId("5f0000000000000000000001");

describe.each(ENGINES)("documents (%s engine)", (engine) => {
  describe("required", () => {
    const t = single(
      {
        name: { type: "string", required: true },
        role: { type: "string", required: true, default: "user" },
        address: { type: "dict", schema: { city: { type: "string", required: true }, zip: { type: "string" } } },
      },
      engine,
    );

    it("is checked on POST and PUT, at every level", async () => {
      expect(await t.issues({ address: { zip: "1" } })).toEqual({ address: { city: "required field" }, name: "required field" });
      expect(await t.issues({ address: {} }, "PUT", { original: { _id: ID, name: "x" } })).toEqual({ address: { city: "required field" }, name: "required field" });
    });

    it("is satisfied by a default", async () => {
      const result = await t.check({ name: "a" });
      expect(result.valid).toBe(true);
      expect(result.document).toEqual({ name: "a", role: "user" });
    });

    it("is not checked on PATCH", async () => {
      expect(await t.issues({ address: { zip: "1" } }, "PATCH", { original: { _id: ID, name: "a" } })).toEqual({});
    });

    it("with require_all, every field of a sub-document is required", async () => {
      const all = single({ a: { type: "dict", require_all: true, schema: { x: { type: "integer" }, y: { type: "integer" } } } }, engine);
      expect(await all.issues({ a: { x: 1 } })).toEqual({ a: { y: "required field" } });
    });
  });

  describe("readonly", () => {
    const t = single({ code: { type: "string", readonly: true }, note: { type: "string" } }, engine);
    const original = { _id: ID, code: "A1", note: "n" };

    it("refuses a value on POST", async () => {
      expect(await t.issues({ code: "B2" })).toEqual({ code: "field is read-only" });
    });

    it("hides the field's other errors, but not a null", async () => {
      expect(await t.issues({ code: 12 })).toEqual({ code: "field is read-only" });
      expect(await t.issues({ code: null }, "PUT", { original })).toEqual({ code: ["null value not allowed", "field is read-only"] });
      const untyped = single({ code: { readonly: true, maxlength: 1 } }, engine);
      expect(await untyped.issues({ code: null }, "PUT", { original })).toEqual({ code: ["null value not allowed", "field is read-only"] });
      expect(await untyped.issues({ code: "xyz" }, "PUT", { original })).toEqual({ code: "field is read-only" });
    });

    it("accepts the stored value unchanged on PUT and PATCH, and refuses a change", async () => {
      expect(await t.issues({ code: "A1", note: "m" }, "PUT", { original })).toEqual({});
      expect(await t.issues({ code: "A1" }, "PATCH", { original })).toEqual({});
      expect(await t.issues({ code: "B2" }, "PUT", { original })).toEqual({ code: "field is read-only" });
      expect(await t.issues({ code: "B2" }, "PATCH", { original })).toEqual({ code: "field is read-only" });
    });

    it("without normalize_on_patch, is checked with the other rules", async () => {
      const raw = single({ code: { type: "string", readonly: true } }, engine, { resource: { normalize_on_patch: false } });
      expect(await raw.issues({ code: 12 }, "PATCH", { original })).toEqual({ code: ["field is read-only", "must be of string type"] });
    });

    it("applies to nested fields against the stored sub-document", async () => {
      const nested = single({ meta: { type: "dict", schema: { serial: { type: "integer", readonly: true } } } }, engine);
      expect(await nested.issues({ meta: { serial: 1 } }, "PUT", { original: { _id: ID, meta: { serial: 1 } } })).toEqual({});
      expect(await nested.issues({ meta: { serial: 2 } }, "PUT", { original: { _id: ID, meta: { serial: 1 } } })).toEqual({ meta: { serial: "field is read-only" } });
    });
  });

  describe("PATCH", () => {
    const schema = {
      name: { type: "string" },
      visits: { type: "integer", default: 0 },
      location: { type: "dict", schema: { city: { type: "string" }, country: { type: "string", default: "US" } } },
    } as const;
    const original = { _id: ID, name: "a", location: { city: "Rome", country: "IT" } };

    it("expands dotted keys into sub-documents and validates them there", async () => {
      const t = single(schema, engine, { resource: { normalize_on_patch: false } });
      expect((await t.check({ "location.city": "Boston" }, "PATCH", { original })).document).toEqual({ location: { city: "Boston" } });
      expect(await t.issues({ "location.city": 5, "location.zip": "x" }, "PATCH", { original })).toEqual({
        location: { city: "must be of string type", zip: "unknown field" },
      });
    });

    it("normalize_on_patch gives missing sub-document fields and missing stored fields their defaults", async () => {
      const t = single(schema, engine);
      expect((await t.check({ location: { city: "Boston" } }, "PATCH", { original })).document).toEqual({ location: { city: "Boston", country: "US" }, visits: 0 });
      expect((await t.check({ name: "b" }, "PATCH", { original: { ...original, visits: 3 } })).document).toEqual({ name: "b" });
    });

    it("without normalize_on_patch, sends only what the client sent", async () => {
      const t = single(schema, engine, { resource: { normalize_on_patch: false } });
      expect((await t.check({ location: { city: "Boston" } }, "PATCH", { original })).document).toEqual({ location: { city: "Boston" } });
    });

    it("reports a dotted key that cannot be expanded", async () => {
      const t = single(schema, engine, { resource: { allow_unknown: true } });
      expect(await t.issues({ name: "x", "name.first": "y" }, "PATCH", { original })).toEqual({ "name.first": "cannot be expanded: 'name' is not a dict" });
    });
  });

  describe("defaults", () => {
    it("are applied on POST and PUT, copied per document", async () => {
      const t = single({ tags: { type: "list", default: ["new"] }, n: { type: "integer", nullable: true, default: 1 } }, engine);
      const first = await t.check({});
      const second = await t.check({}, "PUT", { original: { _id: ID, tags: ["old"] } });
      expect(first.document).toEqual({ tags: ["new"], n: 1 });
      expect(second.document).toEqual({ tags: ["new"], n: 1 });
      (first.document.tags as string[]).push("changed");
      expect((await t.check({})).document.tags).toEqual(["new"]);
      expect((await t.check({ n: null })).document).toEqual({ n: null, tags: ["new"] });
    });
  });

  describe("unknown fields", () => {
    it("are refused unless allow_unknown, which sub-documents inherit", async () => {
      const schema = { a: { type: "dict", schema: { x: { type: "integer" } } } } as const;
      expect(await single(schema, engine).issues({ b: 1, a: { y: 1 } })).toEqual({ a: { y: "unknown field" }, b: "unknown field" });
      const open = single(schema, engine, { resource: { allow_unknown: true } });
      const result = await open.check({ b: { any: 1 }, a: { y: "5" } });
      expect(result.issues).toEqual({});
      expect(result.document).toEqual({ b: { any: 1 }, a: { y: "5" } });
      expect(await single(schema, engine, { settings: { ALLOW_UNKNOWN: true } }).issues({ b: 1 })).toEqual({});
    });

    it("can be allowed for one sub-document only", async () => {
      const t = single({ a: { type: "dict", allow_unknown: true, schema: { x: { type: "integer" } } } }, engine);
      expect(await t.issues({ a: { y: 1 }, b: 1 })).toEqual({ b: "unknown field" });
    });

    it("an empty schema with allow_unknown accepts anything", async () => {
      const t = single({}, engine, { resource: { allow_unknown: true } });
      expect(await t.issues({ anything: [1, { b: 2 }], n: null })).toEqual({});
    });

    it("are dropped with purge_unknown", async () => {
      const t = single({ a: { type: "dict", purge_unknown: true, schema: { x: { type: "integer" } } } }, engine);
      const result = await t.check({ a: { x: 1, y: 2 } });
      expect(result.issues).toEqual({});
      expect(result.document).toEqual({ a: { x: 1 } });
    });
  });

  describe("meta fields", () => {
    it("accepts Eve's automatic fields and checks _id as an objectid", async () => {
      const t = single({ name: { type: "string" } }, engine);
      const result = await t.check({ _id: "5f0000000000000000000001", _created: "x", _updated: "y", _etag: "z", name: "a" });
      expect(result.issues).toEqual({});
      expect(result.document._id).toEqual(ID);
      expect(await t.issues({ _id: "nope" })).toEqual({ _id: "must be of objectid type" });
      expect(await t.issues({ _version: 1, _deleted: false })).toEqual({ _deleted: "unknown field", _version: "unknown field" });
    });

    it("refuses _version even with versioning (Eve's tests/versioning.py test_automatic_fields), and accepts _deleted only unchanged with soft delete", async () => {
      const t = single({ name: { type: "string" } }, engine, { resource: { versioning: true, soft_delete: true } });
      expect(await t.issues({ _version: 3 })).toEqual({ _version: "unknown field" });
      expect(await t.issues({ _latest_version: 3 })).toEqual({ _latest_version: "unknown field" });
      expect(await t.issues({ _deleted: true })).toEqual({ _deleted: "field is read-only" });
      expect(await t.issues({ _deleted: true }, "PATCH", { original: { _id: ID, _deleted: false } })).toEqual({ _deleted: "field is read-only" });
      expect(await t.issues({ _deleted: false, name: "a" }, "PUT", { original: { _id: ID, _deleted: false } })).toEqual({});
    });

    it("uses the schema's own _id definition when there is one", async () => {
      const t = single({ _id: { type: "string", regex: "[a-z]+" } }, engine);
      expect(await t.issues({ _id: "abc" })).toEqual({});
      expect(await t.issues({ _id: "ABC" })).toEqual({ _id: "value does not match regex '[a-z]+'" });
    });
  });

  describe("keys that could reach a prototype or the database as operators", () => {
    const t = single({ a: { type: "dict", allow_unknown: true, schema: {} }, list: { type: "list" } }, engine, { resource: { allow_unknown: true } });

    it("are refused wherever they are, and never stored", async () => {
      const body = JSON.parse('{"$set": {"x": 1}, "__proto__": {"polluted": true}, "constructor": 1, "a": {"$where": 1, "ok": 1}, "list": [{"prototype": 1}], "b.__proto__.c": 1}');
      const result = await t.check(body);
      expect(result.valid).toBe(false);
      // Built from JSON: an object literal's "__proto__" would set a prototype, not a key.
      const expected = JSON.parse(`{
        "$set": "field names starting with '$' are not allowed",
        "__proto__": "field name '__proto__' is not allowed",
        "constructor": "field name 'constructor' is not allowed",
        "a": { "$where": "field names starting with '$' are not allowed" },
        "list": { "0": { "prototype": "field name 'prototype' is not allowed" } },
        "b.__proto__.c": "field name '__proto__' is not allowed"
      }`);
      expect(result.issues).toEqual(expected);
      expect(Object.hasOwn(result.issues, "__proto__")).toBe(true);
      expect(result.document).toEqual({ a: { ok: 1 }, list: [{}] });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("do not change the caller's document", async () => {
      const body = { "location.city": "x", n: "1" };
      await single({ location: { type: "dict", schema: { city: { type: "string" } } }, n: { type: "integer" } }, engine).check(body, "PATCH", { original: { _id: ID } });
      expect(body).toEqual({ "location.city": "x", n: "1" });
    });
  });
});
