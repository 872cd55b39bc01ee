import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { parseWhere } from "../../src/query/where.ts";
import type { Config } from "../../src/settings/normalize.ts";
import type { Settings } from "../../src/settings/types.ts";
import { config, expect400, resource } from "./fixture.ts";

const HEX = "6b017f44150443131587b088";
const BORN = "Thu, 27 Aug 1970 14:37:13 GMT";
const BORN_DATE = new Date(Date.UTC(1970, 7, 27, 14, 37, 13));

function where(raw: string, name = "people", cfg: Config = config()) {
  return parseWhere(raw, resource(cfg, name), cfg);
}

/** A `things` resource with nested and list fields, plus whatever `extra` adds. */
function thingsConfig(extra: (settings: Settings) => void = () => {}): Config {
  return config((settings) => {
    settings.DOMAIN!.things = {
      schema: {
        name: { type: "string" },
        meta: { type: "dict", schema: { seen: { type: "datetime" }, by: { type: "objectid" } } },
        rows: { type: "list", schema: { type: "dict", schema: { at: { type: "datetime" }, price: { type: "number" } } } },
        refs: { type: "list", schema: { type: "objectid" } },
        pair: { type: "list", items: [{ type: "string" }, { type: "objectid" }] },
        loose: {},
        person: { data_relation: { resource: "people" } },
      },
    };
    extra(settings);
  });
}

describe("parseWhere: syntaxes", () => {
  it("reads Mongo JSON (exchange 5)", () => {
    expect(where('{"lastname":"Doe"}')).toEqual({ lastname: "Doe" });
  });

  it("reads the Python syntax (exchange 6)", () => {
    expect(where('lastname=="Doe"')).toEqual({ lastname: "Doe" });
  });

  it("maps every comparison operator", () => {
    expect(where('firstname != "a"')).toEqual({ firstname: { $ne: "a" } });
    expect(where("firstname < 1")).toEqual({ firstname: { $lt: 1 } });
    expect(where("firstname <= 1.5")).toEqual({ firstname: { $lte: 1.5 } });
    expect(where("firstname > -5")).toEqual({ firstname: { $gt: -5 } });
    expect(where("firstname >= 1e3")).toEqual({ firstname: { $gte: 1000 } });
  });

  it("reads Python literals: quotes, escapes, True, False, None", () => {
    expect(where("lastname == 'Doe'")).toEqual({ lastname: "Doe" });
    expect(where('lastname == "D\\"oe\\u00e9"')).toEqual({ lastname: 'D"oeé' });
    expect(where('lastname == "\\101\\x42\\q"')).toEqual({ lastname: "AB\\q" });
    expect(where("a == True and b == False and c == None", "things", thingsConfig((s) => (s.DOMAIN!.things!.allow_unknown = true)))).toEqual({
      $and: [{ a: true }, { b: false }, { c: null }],
    });
  });

  it("groups and/or as Python does: one list per operator run, and before or", () => {
    expect(where('firstname == "a" and lastname == "b" and role == "copy"')).toEqual({
      $and: [{ firstname: "a" }, { lastname: "b" }, { role: "copy" }],
    });
    expect(where('firstname == "a" or lastname == "b" and role == "copy"')).toEqual({
      $or: [{ firstname: "a" }, { $and: [{ lastname: "b" }, { role: "copy" }] }],
    });
    expect(where('(firstname == "a" or lastname == "b") and role == "copy"')).toEqual({
      $and: [{ $or: [{ firstname: "a" }, { lastname: "b" }] }, { role: "copy" }],
    });
  });

  it("takes dotted names and, like Eve, a string literal as the field", () => {
    expect(where('location.city == "Auburn"')).toEqual({ "location.city": "Auburn" });
    expect(where('"lastname" == "Doe"')).toEqual({ lastname: "Doe" });
  });

  it("reads a bare (dotted) name on the right as a string, as Eve's visitor does", () => {
    expect(where("lastname == Doe")).toEqual({ lastname: "Doe" });
    expect(where("lastname != a.b and role == copy")).toEqual({ $and: [{ lastname: { $ne: "a.b" } }, { role: "copy" }] });
  });

  it("evaluates ObjectId() and datetime() (UTC)", () => {
    const filter = where(`owner == ObjectId("${HEX}")`, "works");
    expect(filter.owner).toBeInstanceOf(ObjectId);
    expect((filter.owner as ObjectId).toHexString()).toBe(HEX);
    expect(where("born < datetime(1980, 1, 2, 3, 4, 5)")).toEqual({ born: { $lt: new Date(Date.UTC(1980, 0, 2, 3, 4, 5)) } });
  });

  it("gives {} for an empty value and when the resource allows no filters (Eve ignores where)", () => {
    expect(where("")).toEqual({});
    const cfg = config((s) => (s.DOMAIN!.people!.allowed_filters = []));
    expect(where("anything at all", "people", cfg)).toEqual({});
  });
});

describe("parseWhere: refusals (400, never another error)", () => {
  it.each([
    ["bad", "a bare name (exchange 12)"],
    ["{'lastname': 'Doe'}", "single-quoted JSON"],
    ['{"lastname": "Doe"', "truncated JSON"],
    ["[1, 2]", "a JSON array"],
    ['"lastname"', "a JSON string"],
    ['lastname = "Doe"', "assignment"],
    ['not lastname == "Doe"', "not"],
    ['lastname in ["Doe"]', "in"],
    ["1 < firstname < 3", "a chained comparison"],
    ['lastname == "Doe"; firstname == "J"', "two statements"],
    ["lastname ==", "a missing value"],
    ['(lastname == "Doe"', "an unclosed bracket"],
    ['lastname == "Doe', "an unterminated string"],
    ["firstname == 01", "a leading zero"],
    ["firstname == len(x)", "another call"],
    ['owner == ObjectId("zz")', "a bad ObjectId"],
    ["born == datetime(2021, 2, 29)", "an impossible date"],
    ["born == datetime(2021, 13, 1)", "a month out of range"],
    ["born == datetime(2021)", "too few datetime arguments"],
    ["born == -True", "a sign on a constant"],
    ["lastname == 'a' + 'b'", "arithmetic"],
  ])("%s (%s)", (raw) => {
    expect400(() => where(raw, raw.startsWith("owner") ? "works" : "people"));
  });

  it("refuses blacklisted operators (exchange 13)", () => {
    expect400(() => where('{"lastname":{"$regex":"D"}}'));
    const cfg = config((s) => (s.DB_QUERY_BLACKLIST = ["$exists"]));
    expect400(() => where('{"lastname":{"$exists":true}}', "people", cfg));
    expect(where('{"lastname":{"$regex":"D"}}', "people", cfg)).toEqual({ lastname: { $regex: "D" } });
  });

  it("refuses server-side JavaScript even with an empty blacklist, anywhere in the tree", () => {
    const cfg = config((s) => (s.DB_QUERY_BLACKLIST = []));
    expect400(() => where('{"$where": "sleep(100)"}', "people", cfg));
    expect400(() => where('{"$expr": {"$function": {"body": "x", "args": [], "lang": "js"}}}', "people", cfg));
    expect400(() => where('{"$or": [{"lastname": "a"}, {"$expr": {"$accumulator": {}}}]}', "people", cfg));
    expect400(() => where('"$where" == "sleep(100)"', "people", cfg));
  });

  it("refuses operators outside Eve's list unless whitelisted globally or per resource", () => {
    expect400(() => where('{"lastname": {"$foo": 1}}'));
    expect400(() => where('{"$comment": "x", "lastname": "Doe"}'));
    const global = config((s) => (s.DB_QUERY_WHITELIST = ["$comment"]));
    expect(where('{"$comment": "x"}', "people", global)).toEqual({ $comment: "x" });
    const local = config((s) => (s.DOMAIN!.people!.mongo_query_whitelist = ["$comment"]));
    expect(where('{"$comment": "x"}', "people", local)).toEqual({ $comment: "x" });
  });

  it("refuses prototype keys, dotted segments included", () => {
    expect400(() => where('{"__proto__": {"x": 1}}'));
    expect400(() => where('{"location": {"constructor": 1}}'));
    expect400(() => where('{"a.prototype.b": 1}'));
    expect400(() => where("__proto__ == 1"));
  });

  it("refuses logical operators without a list of sub-queries", () => {
    expect400(() => where('{"$or": {"lastname": "a"}}'));
    expect400(() => where('{"$and": []}'));
    expect400(() => where('{"$nor": ["x"]}'));
  });

  it("bounds nesting by MAX_JSON_DEPTH in both syntaxes", () => {
    const deepJson = '{"lastname": ' + '{"$not": '.repeat(80) + '"x"' + "}".repeat(81);
    expect400(() => where(deepJson));
    const deepPython = "(".repeat(80) + 'lastname == "x"' + ")".repeat(80);
    expect400(() => where(deepPython));
    const shallow = config((s) => (s.MAX_JSON_DEPTH = 3));
    expect400(() => where('{"$or": [{"$or": [{"lastname": "a"}]}]}', "people", shallow));
    expect(where('(lastname == "a")', "people", shallow)).toEqual({ lastname: "a" });
  });
});

describe("parseWhere: value conversion by schema type", () => {
  it("turns date strings into Dates on datetime fields and meta dates, inside operators and lists", () => {
    expect(where(`{"born": "${BORN}"}`)).toEqual({ born: BORN_DATE });
    expect(where(`{"_created": {"$gt": "${BORN}"}}`)).toEqual({ _created: { $gt: BORN_DATE } });
    expect(where(`{"$or": [{"born": {"$in": ["${BORN}"]}}, {"_updated": {"$not": {"$lt": "${BORN}"}}}]}`)).toEqual({
      $or: [{ born: { $in: [BORN_DATE] } }, { _updated: { $not: { $lt: BORN_DATE } } }],
    });
  });

  it("leaves date-like text of a string field, and text that is no date, as strings", () => {
    expect(where(`{"lastname": "${BORN}"}`)).toEqual({ lastname: BORN });
    expect(where('{"born": "yesterday"}')).toEqual({ born: "yesterday" });
  });

  it("honours DATE_FORMAT", () => {
    const cfg = config((s) => (s.DATE_FORMAT = "%Y-%m-%d"));
    expect(where('{"born": "2020-01-02"}', "people", cfg)).toEqual({ born: new Date(Date.UTC(2020, 0, 2)) });
  });

  it("turns 24-hex strings into ObjectIds on objectid fields and the id, not on string fields", () => {
    const filter = where(`{"owner": "${HEX}", "_id": {"$in": ["${HEX}", "not-an-id"]}}`, "works");
    expect(filter.owner).toBeInstanceOf(ObjectId);
    const ids = (filter._id as { $in: unknown[] }).$in;
    expect(ids[0]).toBeInstanceOf(ObjectId);
    expect(ids[1]).toBe("not-an-id");
    expect(where(`{"lastname": "${HEX}"}`)).toEqual({ lastname: HEX });
  });

  it("follows dotted paths into dict and list schemas, and $elemMatch sub-fields", () => {
    const cfg = thingsConfig();
    const filter = where(
      `{"meta.seen": "${BORN}", "meta.by": "${HEX}", "rows.at": "${BORN}", "rows": {"$elemMatch": {"at": {"$gte": "${BORN}"}}}, "refs": "${HEX}", "pair.1": "${HEX}", "pair.0": "${HEX}", "name": "${HEX}"}`,
      "things",
      cfg,
    );
    expect(filter["meta.seen"]).toEqual(BORN_DATE);
    expect(filter["meta.by"]).toBeInstanceOf(ObjectId);
    expect(filter["rows.at"]).toEqual(BORN_DATE);
    expect(filter.rows).toEqual({ $elemMatch: { at: { $gte: BORN_DATE } } });
    expect(filter.refs).toBeInstanceOf(ObjectId);
    expect(filter["pair.1"]).toBeInstanceOf(ObjectId);
    expect(filter["pair.0"]).toBe(HEX);
    expect(filter.name).toBe(HEX);
  });

  it("does not convert operands that are not field values", () => {
    const cfg = thingsConfig((s) => (s.DB_QUERY_BLACKLIST = []));
    expect(where(`{"refs": {"$regex": "${HEX}"}, "meta.by": {"$type": "objectId"}}`, "things", cfg)).toEqual({
      refs: { $regex: HEX },
      "meta.by": { $type: "objectId" },
    });
  });

  it("casts untyped fields as Eve does, unless query_objectid_as_string", () => {
    const cfg = thingsConfig();
    const filter = where(`{"loose": "${HEX}", "person": "${HEX}", "unknown": "${BORN}"}`, "things", cfg);
    expect(filter.loose).toBeInstanceOf(ObjectId);
    expect(filter.person).toBeInstanceOf(ObjectId);
    expect(filter.unknown).toEqual(BORN_DATE);
    const asString = thingsConfig((s) => (s.DOMAIN!.things!.query_objectid_as_string = true));
    expect(where(`{"loose": "${HEX}", "_id": "${HEX}"}`, "things", asString)).toEqual({ loose: HEX, _id: new ObjectId(HEX) });
  });
});

describe("parseWhere: ALLOWED_FILTERS and VALIDATE_FILTERS", () => {
  const allowed = (list: string[]) => config((s) => (s.DOMAIN!.people!.allowed_filters = list));

  it("lets through listed fields and their sub-fields only, with Eve's message", () => {
    const cfg = allowed(["lastname", "location"]);
    expect(where('{"lastname": "Doe", "location.city": "x"}', "people", cfg)).toEqual({ lastname: "Doe", "location.city": "x" });
    expect(expect400(() => where(`{"born": "${BORN}"}`, "people", cfg)).message).toBe("filter on 'born' not allowed");
    expect(expect400(() => where('{"$or": [{"lastname": "a"}, {"role": "copy"}]}', "people", cfg)).message).toBe("filter on 'role' not allowed");
    expect(expect400(() => where('role == "copy"', "people", cfg)).message).toBe("filter on 'role' not allowed");
  });

  const validating = config((s) => (s.VALIDATE_FILTERS = true));
  const valid = (raw: string, name = "people") => where(raw, name, validating);
  const invalid = (raw: string, field: string, name = "people") =>
    expect(expect400(() => where(raw, name, validating)).message).toBe(`filter on '${field}' is invalid`);

  it("accepts values that suit the field's rule", () => {
    expect(valid('{"firstname": "x", "location.city": "y", "location": {"city": "z"}}')).toBeTruthy();
    expect(valid(`{"born": "${BORN}", "_created": {"$lt": "${BORN}"}, "_id": "${HEX}"}`)).toBeTruthy();
    expect(valid('{"role": "author", "lastname": {"$in": ["a", "b"]}, "firstname": {"$exists": false}}')).toBeTruthy();
    expect(valid(`{"owner": "${HEX}"}`, "works")).toBeTruthy();
  });

  it("refuses unknown fields and values that do not suit", () => {
    invalid('{"bad_field": 1}', "bad_field");
    invalid('{"$and": [{"lastname": "x"}, {"bad_field": 1}]}', "bad_field");
    invalid('{"firstname": 5}', "firstname");
    invalid('{"born": "yesterday"}', "born");
    invalid('{"owner": "1234"}', "owner", "works");
    invalid('{"role": "boss"}', "role");
    invalid('{"location": {"zip": "x"}}', "location");
    invalid('{"lastname": {"$in": ["a", 5]}}', "lastname");
    invalid('{"lastname": null}', "lastname");
  });
});
