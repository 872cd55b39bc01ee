// Rules that ask the database: unique (and its variants), data_relation, and the batch check of
// a bulk insert.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { ENGINES, harness, single, type Store } from "./support.ts";

const A = new ObjectId("5f0000000000000000000001");
const B = new ObjectId("5f0000000000000000000002");
const C = new ObjectId("5f0000000000000000000003");
const MISSING = "5f00000000000000000000ff";

describe.each(ENGINES)("database rules (%s engine)", (engine) => {
  describe("unique", () => {
    const store = (): Store => ({
      things: [
        { _id: A, lastname: "Doe", n: 5, info: { code: "c1" }, lines: [{ sku: "s1" }] },
        { _id: B, lastname: "Gone", _deleted: true },
      ],
    });
    const schema = {
      lastname: { type: "string", unique: true },
      n: { type: "integer", unique: true, nullable: true },
      info: { type: "dict", schema: { code: { type: "string", unique: true } } },
      lines: { type: "list", schema: { type: "dict", schema: { sku: { type: "string", unique: true } } } },
    } as const;

    it("refuses a value another live document holds", async () => {
      const t = single(schema, engine, { store: store() });
      expect(await t.issues({ lastname: "Doe", n: "5" })).toEqual({ lastname: "value 'Doe' is not unique", n: "value '5' is not unique" });
      expect(await t.issues({ lastname: "Gone" })).toEqual({});
      expect(await t.issues({ n: null })).toEqual({});
    });

    it("looks in the whole collection, at the field's dotted path, lists skipped", async () => {
      const t = single(schema, engine, { store: store() });
      expect(await t.issues({ info: { code: "c1" }, lines: [{ sku: "new" }, { sku: "s1" }] })).toEqual({
        info: { code: "value 'c1' is not unique" },
        lines: { 1: { sku: "value 's1' is not unique" } },
      });
      expect(t.lookups.map((l) => [l.filter, l.options])).toEqual([
        [{ "info.code": "c1" }, { ignoreFilter: true }],
        [{ "lines.sku": "new" }, { ignoreFilter: true }],
        [{ "lines.sku": "s1" }, { ignoreFilter: true }],
      ]);
    });

    it("does not compare a document with itself on PUT and PATCH", async () => {
      const t = single(schema, engine, { store: store() });
      expect(await t.issues({ lastname: "Doe" }, "PUT", { original: { _id: A, lastname: "Doe" } })).toEqual({});
      expect(await t.issues({ lastname: "Doe" }, "PATCH", { original: { _id: A, lastname: "Doe" } })).toEqual({});
      expect(await t.issues({ lastname: "Doe" }, "PATCH", { original: { _id: C } })).toEqual({ lastname: "value 'Doe' is not unique" });
      expect(t.lookups.at(-1)!.filter).toEqual({ lastname: "Doe", _id: { $ne: C } });
    });

    it("unique_to_user compares with the current user's documents only", async () => {
      const t = single({ email: { type: "string", unique_to_user: true } }, engine, {
        resource: { auth_field: "owner" },
        store: { things: [{ _id: A, owner: "u1", email: "x@y" }] },
      });
      expect(await t.issues({ email: "x@y" }, "POST", { requestAuthValue: "u2" })).toEqual({});
      expect(await t.issues({ email: "x@y" }, "POST", { requestAuthValue: "u1" })).toEqual({ email: "value 'x@y' is not unique" });
      expect(t.lookups.at(-1)!.filter).toEqual({ email: "x@y", owner: "u1" });
    });

    it("unique_within_resource honours the datasource filter, unique does not", async () => {
      const documents = { things: [{ _id: A, kind: "b", code: "x" }] };
      const resource = { datasource: { filter: { kind: "a" } } };
      const within = single({ code: { type: "string", unique_within_resource: true } }, engine, { resource, store: documents });
      const everywhere = single({ code: { type: "string", unique: true } }, engine, { resource, store: documents });
      expect(await within.issues({ code: "x" })).toEqual({});
      expect(await everywhere.issues({ code: "x" })).toEqual({ code: "value 'x' is not unique" });
      documents.things.push({ _id: B, kind: "a", code: "y" });
      expect(await within.issues({ code: "y" })).toEqual({ code: "value 'y' is not unique" });
    });
  });

  describe("a bulk insert", () => {
    it("also refuses a unique value an earlier document of the batch holds", async () => {
      const h = harness({ DOMAIN: { people: { schema: { lastname: { type: "string", unique: true }, n: { type: "integer" } } } } }, { engine, store: { people: [{ _id: A, lastname: "Doe" }] } });
      const results = await h.validateMany("people", [{ lastname: "X" }, { lastname: "X", n: "x" }, { lastname: "Doe" }, { lastname: "Y" }]);
      expect(results.map((r) => r.issues)).toEqual([
        {},
        { lastname: "value 'X' is not unique", n: "must be of integer type" },
        { lastname: "value 'Doe' is not unique" },
        {},
      ]);
      expect(results.map((r) => r.valid)).toEqual([true, false, false, true]);
    });
  });

  describe("data_relation", () => {
    const settings = (extra: Record<string, unknown> = {}): Settings => ({
      DOMAIN: {
        people: { schema: { name: { type: "string" } }, ...extra },
        notes: { schema: { text: { type: "string" } } },
        works: {
          schema: {
            owner: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
            editors: { type: "list", schema: { type: "objectid", data_relation: { resource: "people" } } },
            readers: { type: "list", data_relation: { resource: "people" } },
            by_name: { type: "string", nullable: true, data_relation: { resource: "people", field: "name" } },
          },
        },
      },
    });
    const store = (): Store => ({ people: [{ _id: A, name: "Ann" }, { _id: B, name: "Bob", _deleted: true }] });

    it("accepts a reference to a live document and refuses a dangling or soft-deleted one", async () => {
      const h = harness(settings(), { engine, store: store() });
      expect((await h.validate("works", { owner: A.toHexString() })).issues).toEqual({});
      expect((await h.validate("works", { owner: MISSING })).issues).toEqual({ owner: `value '${MISSING}' must exist in resource 'people', field '_id'.` });
      expect((await h.validate("works", { owner: B.toHexString() })).issues).toEqual({ owner: `value '${B}' must exist in resource 'people', field '_id'.` });
      expect(h.lookups.at(-1)).toEqual({ resource: "people", filter: { _id: B }, options: undefined });
    });

    it("checks every reference of a list", async () => {
      const h = harness(settings(), { engine, store: store() });
      expect((await h.validate("works", { editors: [A.toHexString(), MISSING], readers: [MISSING, A] })).issues).toEqual({
        editors: { 1: `value '${MISSING}' must exist in resource 'people', field '_id'.` },
        readers: `value '${MISSING}' must exist in resource 'people', field '_id'.`,
      });
    });

    it("is checked on PATCH and PUT", async () => {
      const h = harness(settings(), { engine, store: store() });
      const original = { _id: C, owner: A };
      expect((await h.validate("works", { owner: MISSING }, "PATCH", { original })).issues).toEqual({ owner: `value '${MISSING}' must exist in resource 'people', field '_id'.` });
      expect((await h.validate("works", { "editors": [MISSING] }, "PUT", { original })).issues).toEqual({ editors: { 0: `value '${MISSING}' must exist in resource 'people', field '_id'.` } });
      expect((await h.validate("works", { owner: A.toHexString() }, "PATCH", { original })).issues).toEqual({});
    });

    it("uses the related field, and lets a nullable field be empty", async () => {
      const h = harness(settings(), { engine, store: store() });
      expect((await h.validate("works", { by_name: "Ann" })).issues).toEqual({});
      expect((await h.validate("works", { by_name: "Zed" })).issues).toEqual({ by_name: "value 'Zed' must exist in resource 'people', field 'name'." });
      expect((await h.validate("works", { by_name: null })).issues).toEqual({});
      expect((await h.validate("works", { by_name: "" })).issues).toEqual({});
      expect(h.lookups).toHaveLength(2);
    });

    describe("with version", () => {
      const versioned = (target: string): Settings => ({
        DOMAIN: {
          people: { versioning: true, schema: { name: { type: "string" } } },
          notes: { schema: { text: { type: "string" } } },
          works: {
            schema: {
              owner: {
                type: "dict",
                schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
                data_relation: { resource: target, field: "_id", version: true },
              },
            },
          },
        },
      });

      it("looks the version up in the shadow collection", async () => {
        const h = harness(versioned("people"), { engine, store: { people_versions: [{ _id: C, _id_document: A, _version: 2 }] } });
        expect((await h.validate("works", { owner: { _id: A.toHexString(), _version: "2" } })).issues).toEqual({});
        expect(h.lookups.at(-1)).toEqual({ resource: "people_versions", filter: { _id_document: A, _version: 2 }, options: undefined });
        expect((await h.validate("works", { owner: { _id: A.toHexString(), _version: 3 } })).issues).toEqual({
          owner: `value '${A}' must exist in resource 'people', field '_id' at version '3'.`,
        });
        expect((await h.validate("works", { owner: { _id: A.toHexString() } })).issues).toEqual({
          owner: "versioned data_relation must be a dict with fields '_id' and '_version'",
        });
      });

      it("refuses a version of a resource that is not versioned", async () => {
        const h = harness(versioned("notes"), { engine });
        expect((await h.validate("works", { owner: { _id: A.toHexString(), _version: 1 } })).issues).toEqual({
          owner: "can't save a version with data_relation if 'notes' isn't versioned",
        });
      });
    });
  });
});
