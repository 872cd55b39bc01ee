import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { parseWhere } from "../../src/query/where.ts";
import type { Config } from "../../src/settings/normalize.ts";
import type { Settings } from "../../src/settings/types.ts";
import { config, rejects400, resource } from "./fixture.ts";

const HEX = "6b017f44150443131587b088";
const BORN = "Thu, 27 Aug 1970 14:37:13 GMT";
const BORN_DATE = new Date(Date.UTC(1970, 7, 27, 14, 37, 13));

/** A promise, as parseWhere is one for the Python syntax (its parser is imported on first use). */
async function where(raw: string, name = "people", cfg: Config = config()) {
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
  it("reads Mongo JSON (exchange 5)", async () => {
    expect(await where('{"lastname":"Doe"}')).toEqual({ lastname: "Doe" });
  });

  it("reads the Python syntax (exchange 6)", async () => {
    expect(await where('lastname=="Doe"')).toEqual({ lastname: "Doe" });
  });

  it("maps every comparison operator", async () => {
    expect(await where('firstname != "a"')).toEqual({ firstname: { $ne: "a" } });
    expect(await where("firstname < 1")).toEqual({ firstname: { $lt: 1 } });
    expect(await where("firstname <= 1.5")).toEqual({ firstname: { $lte: 1.5 } });
    expect(await where("firstname > -5")).toEqual({ firstname: { $gt: -5 } });
    expect(await where("firstname >= 1e3")).toEqual({ firstname: { $gte: 1000 } });
  });

  it("reads Python literals: quotes, escapes, True, False, None", async () => {
    expect(await where("lastname == 'Doe'")).toEqual({ lastname: "Doe" });
    expect(await where('lastname == "D\\"oe\\u00e9"')).toEqual({ lastname: 'D"oeé' });
    expect(await where('lastname == "\\101\\x42\\q"')).toEqual({ lastname: "AB\\q" });
    expect(await where("a == True and b == False and c == None", "things", thingsConfig((s) => (s.DOMAIN!.things!.allow_unknown = true)))).toEqual({
      $and: [{ a: true }, { b: false }, { c: null }],
    });
  });

  it("groups and/or as Python does: one list per operator run, and before or", async () => {
    expect(await where('firstname == "a" and lastname == "b" and role == "copy"')).toEqual({
      $and: [{ firstname: "a" }, { lastname: "b" }, { role: "copy" }],
    });
    expect(await where('firstname == "a" or lastname == "b" and role == "copy"')).toEqual({
      $or: [{ firstname: "a" }, { $and: [{ lastname: "b" }, { role: "copy" }] }],
    });
    expect(await where('(firstname == "a" or lastname == "b") and role == "copy"')).toEqual({
      $and: [{ $or: [{ firstname: "a" }, { lastname: "b" }] }, { role: "copy" }],
    });
  });

  it("takes dotted names and, like Eve, a string literal as the field", async () => {
    expect(await where('location.city == "Auburn"')).toEqual({ "location.city": "Auburn" });
    expect(await where('"lastname" == "Doe"')).toEqual({ lastname: "Doe" });
  });

  it("reads a bare (dotted) name on the right as a string, as Eve's visitor does", async () => {
    expect(await where("lastname == Doe")).toEqual({ lastname: "Doe" });
    expect(await where("lastname != a.b and role == copy")).toEqual({ $and: [{ lastname: { $ne: "a.b" } }, { role: "copy" }] });
  });

  it("evaluates ObjectId() and datetime() (UTC)", async () => {
    const filter = await where(`owner == ObjectId("${HEX}")`, "works");
    expect(filter.owner).toBeInstanceOf(ObjectId);
    expect((filter.owner as ObjectId).toHexString()).toBe(HEX);
    expect(await where("born < datetime(1980, 1, 2, 3, 4, 5)")).toEqual({ born: { $lt: new Date(Date.UTC(1980, 0, 2, 3, 4, 5)) } });
  });

  it("gives {} for an empty value and when the resource allows no filters (Eve ignores where)", async () => {
    expect(await where("")).toEqual({});
    const cfg = config((s) => (s.DOMAIN!.people!.allowed_filters = []));
    expect(await where("anything at all", "people", cfg)).toEqual({});
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
  ])("%s (%s)", async (raw) => {
    await rejects400(() => where(raw, raw.startsWith("owner") ? "works" : "people"));
  });

  it("refuses blacklisted operators (exchange 13)", async () => {
    await rejects400(() => where('{"lastname":{"$regex":"D"}}'));
    const cfg = config((s) => (s.DB_QUERY_BLACKLIST = ["$exists"]));
    await rejects400(() => where('{"lastname":{"$exists":true}}', "people", cfg));
    expect(await where('{"lastname":{"$regex":"D"}}', "people", cfg)).toEqual({ lastname: { $regex: "D" } });
  });

  it("refuses server-side JavaScript even with an empty blacklist, anywhere in the tree", async () => {
    const cfg = config((s) => (s.DB_QUERY_BLACKLIST = []));
    await rejects400(() => where('{"$where": "sleep(100)"}', "people", cfg));
    await rejects400(() => where('{"$expr": {"$function": {"body": "x", "args": [], "lang": "js"}}}', "people", cfg));
    await rejects400(() => where('{"$or": [{"lastname": "a"}, {"$expr": {"$accumulator": {}}}]}', "people", cfg));
    await rejects400(() => where('"$where" == "sleep(100)"', "people", cfg));
  });

  it("refuses operators outside Eve's list unless whitelisted globally or per resource", async () => {
    await rejects400(() => where('{"lastname": {"$foo": 1}}'));
    await rejects400(() => where('{"$comment": "x", "lastname": "Doe"}'));
    const global = config((s) => (s.DB_QUERY_WHITELIST = ["$comment"]));
    expect(await where('{"$comment": "x"}', "people", global)).toEqual({ $comment: "x" });
    const local = config((s) => (s.DOMAIN!.people!.mongo_query_whitelist = ["$comment"]));
    expect(await where('{"$comment": "x"}', "people", local)).toEqual({ $comment: "x" });
  });

  it("refuses prototype keys, dotted segments included", async () => {
    await rejects400(() => where('{"__proto__": {"x": 1}}'));
    await rejects400(() => where('{"location": {"constructor": 1}}'));
    await rejects400(() => where('{"a.prototype.b": 1}'));
    await rejects400(() => where("__proto__ == 1"));
  });

  it("refuses logical operators without a list of sub-queries", async () => {
    await rejects400(() => where('{"$or": {"lastname": "a"}}'));
    await rejects400(() => where('{"$and": []}'));
    await rejects400(() => where('{"$nor": ["x"]}'));
  });

  it("bounds nesting by MAX_JSON_DEPTH in both syntaxes", async () => {
    const deepJson = '{"lastname": ' + '{"$not": '.repeat(80) + '"x"' + "}".repeat(81);
    await rejects400(() => where(deepJson));
    const deepPython = "(".repeat(80) + 'lastname == "x"' + ")".repeat(80);
    await rejects400(() => where(deepPython));
    const shallow = config((s) => (s.MAX_JSON_DEPTH = 3));
    await rejects400(() => where('{"$or": [{"$or": [{"lastname": "a"}]}]}', "people", shallow));
    expect(await where('(lastname == "a")', "people", shallow)).toEqual({ lastname: "a" });
  });
});

describe("parseWhere: value conversion by schema type", () => {
  it("turns date strings into Dates on datetime fields and meta dates, inside operators and lists", async () => {
    expect(await where(`{"born": "${BORN}"}`)).toEqual({ born: BORN_DATE });
    expect(await where(`{"_created": {"$gt": "${BORN}"}}`)).toEqual({ _created: { $gt: BORN_DATE } });
    expect(await where(`{"$or": [{"born": {"$in": ["${BORN}"]}}, {"_updated": {"$not": {"$lt": "${BORN}"}}}]}`)).toEqual({
      $or: [{ born: { $in: [BORN_DATE] } }, { _updated: { $not: { $lt: BORN_DATE } } }],
    });
  });

  it("leaves date-like text of a string field, and text that is no date, as strings", async () => {
    expect(await where(`{"lastname": "${BORN}"}`)).toEqual({ lastname: BORN });
    expect(await where('{"born": "yesterday"}')).toEqual({ born: "yesterday" });
  });

  it("honours DATE_FORMAT", async () => {
    const cfg = config((s) => (s.DATE_FORMAT = "%Y-%m-%d"));
    expect(await where('{"born": "2020-01-02"}', "people", cfg)).toEqual({ born: new Date(Date.UTC(2020, 0, 2)) });
  });

  it("turns 24-hex strings into ObjectIds on objectid fields and the id, not on string fields", async () => {
    const filter = await where(`{"owner": "${HEX}", "_id": {"$in": ["${HEX}", "not-an-id"]}}`, "works");
    expect(filter.owner).toBeInstanceOf(ObjectId);
    const ids = (filter._id as { $in: unknown[] }).$in;
    expect(ids[0]).toBeInstanceOf(ObjectId);
    expect(ids[1]).toBe("not-an-id");
    expect(await where(`{"lastname": "${HEX}"}`)).toEqual({ lastname: HEX });
  });

  it("follows dotted paths into dict and list schemas, and $elemMatch sub-fields", async () => {
    const cfg = thingsConfig();
    const filter = await where(
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

  it("does not convert operands that are not field values", async () => {
    const cfg = thingsConfig((s) => (s.DB_QUERY_BLACKLIST = []));
    expect(await where(`{"refs": {"$regex": "${HEX}"}, "meta.by": {"$type": "objectId"}}`, "things", cfg)).toEqual({
      refs: { $regex: HEX },
      "meta.by": { $type: "objectId" },
    });
  });

  it("casts untyped fields as Eve does, unless query_objectid_as_string", async () => {
    const cfg = thingsConfig();
    const filter = await where(`{"loose": "${HEX}", "person": "${HEX}", "unknown": "${BORN}"}`, "things", cfg);
    expect(filter.loose).toBeInstanceOf(ObjectId);
    expect(filter.person).toBeInstanceOf(ObjectId);
    expect(filter.unknown).toEqual(BORN_DATE);
    const asString = thingsConfig((s) => (s.DOMAIN!.things!.query_objectid_as_string = true));
    expect(await where(`{"loose": "${HEX}", "_id": "${HEX}"}`, "things", asString)).toEqual({ loose: HEX, _id: new ObjectId(HEX) });
  });
});

describe("parseWhere: ALLOWED_FILTERS and VALIDATE_FILTERS", () => {
  const allowed = (list: string[]) => config((s) => (s.DOMAIN!.people!.allowed_filters = list));

  it("lets through listed fields and their sub-fields only, with Eve's message", async () => {
    const cfg = allowed(["lastname", "location"]);
    expect(await where('{"lastname": "Doe", "location.city": "x"}', "people", cfg)).toEqual({ lastname: "Doe", "location.city": "x" });
    expect((await rejects400(() => where(`{"born": "${BORN}"}`, "people", cfg))).message).toBe("filter on 'born' not allowed");
    expect((await rejects400(() => where('{"$or": [{"lastname": "a"}, {"role": "copy"}]}', "people", cfg))).message).toBe("filter on 'role' not allowed");
    expect((await rejects400(() => where('role == "copy"', "people", cfg))).message).toBe("filter on 'role' not allowed");
  });

  const validating = config((s) => (s.VALIDATE_FILTERS = true));
  const valid = (raw: string, name = "people") => where(raw, name, validating);
  const invalid = async (raw: string, field: string, name = "people") =>
    expect((await rejects400(() => where(raw, name, validating))).message).toBe(`filter on '${field}' is invalid`);

  it("accepts values that suit the field's rule", async () => {
    expect(await valid('{"firstname": "x", "location.city": "y", "location": {"city": "z"}}')).toBeTruthy();
    expect(await valid(`{"born": "${BORN}", "_created": {"$lt": "${BORN}"}, "_id": "${HEX}"}`)).toBeTruthy();
    expect(await valid('{"role": "author", "lastname": {"$in": ["a", "b"]}, "firstname": {"$exists": false}}')).toBeTruthy();
    expect(await valid(`{"owner": "${HEX}"}`, "works")).toBeTruthy();
  });

  it("refuses unknown fields and values that do not suit", async () => {
    await invalid('{"bad_field": 1}', "bad_field");
    await invalid('{"$and": [{"lastname": "x"}, {"bad_field": 1}]}', "bad_field");
    await invalid('{"firstname": 5}', "firstname");
    await invalid('{"born": "yesterday"}', "born");
    await invalid('{"owner": "1234"}', "owner", "works");
    await invalid('{"role": "boss"}', "role");
    await invalid('{"location": {"zip": "x"}}', "location");
    await invalid('{"lastname": {"$in": ["a", 5]}}', "lastname");
    await invalid('{"lastname": null}', "lastname");
  });
});
