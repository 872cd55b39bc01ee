// Update operators in an item PATCH (UPDATE_OPERATORS, docs/updates.md): each operator, each
// refusal, the rules kept atomically under concurrent requests, and the guarantees of a plain
// PATCH (If-Match, ETag, versioning, oplog, soft delete, BANDWIDTH_SAVER). Runs on every driver
// and runtime.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UpdateOperatorName } from "../../src/settings/opt-in.ts";
import type { Schema, Settings } from "../../src/settings/types.ts";
import { json, moduleSettings, testApi, type TestApi } from "../support/api.ts";
import { ON_MONGODB_EMULATOR } from "../support/drivers.ts";
import pageSettings from "./update-operators/pages.ts";

const ALL: UpdateOperatorName[] = ["$set", "$unset", "$inc", "$mul", "$min", "$max", "$push", "$pull", "$addToSet", "$currentDate"];

const schema: Schema = {
  name: { type: "string", maxlength: 20 },
  code: { type: "string", unique: true },
  stock: { type: "integer", min: 0, max: 1000 },
  price: { type: "float" },
  level: { type: "integer", allowed: [1, 2, 3] },
  tags: { type: "list", maxlength: 4, schema: { type: "string", allowed: ["a", "b", "c", "d", "e", "f"] } },
  scores: { type: "list", schema: { type: "integer" } },
  parts: { type: "list", schema: { type: "dict", schema: { sku: { type: "string", required: true }, qty: { type: "integer" } } } },
  seen: { type: "datetime" },
  stats: { type: "dict", schema: { views: { type: "integer", min: 0 }, label: { type: "string" } } },
  fixed: { type: "string", readonly: true },
  required_note: { type: "string", required: true },
  secret: { type: "string", forbidden: ["x"] },
};

function settings(extra: Partial<Settings> = {}): Settings {
  return {
    UPDATE_OPERATORS: ALL,
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "DELETE"],
    DOMAIN: { items: { schema }, plain: { update_operators: [], schema: { name: { type: "string" }, stock: { type: "integer" } } } },
    ...extra,
  };
}

const start = { name: "widget", code: "w-1", stock: 10, price: 2.5, level: 1, tags: ["a", "b"], scores: [5, 1, 9], parts: [{ sku: "p1", qty: 1 }], stats: { views: 1 }, required_note: "n" };

async function create(api: TestApi, document: Record<string, unknown> = start, path = "/items"): Promise<{ _id: string; _etag: string }> {
  const response = await api.post(path, document);
  expect(response.status, await response.clone().text()).toBe(201);
  return json(response);
}

async function patch(api: TestApi, id: string, body: unknown, etag?: string, path = "/items"): Promise<Response> {
  const current = etag ?? (await json(await api.get(`${path}/${id}`)))._etag;
  return api.patch(`${path}/${id}`, body, { "If-Match": current });
}

async function stored(api: TestApi, id: string, path = "/items"): Promise<Record<string, any>> {
  return json(await api.get(`${path}/${id}`));
}

describe("update operators", () => {
  let api: TestApi;
  beforeAll(() => {
    api = testApi(settings());
  });
  afterAll(() => api.close());

  it.each([
    ["$set, on a dotted path too", { $set: { name: "gadget", "stats.label": "hot" } }, { name: "gadget", stats: { views: 1, label: "hot" } }],
    ["$unset", { $unset: { name: "" } }, { name: undefined }],
    ["$inc", { $inc: { stock: -3, "stats.views": 4, price: 0.5 } }, { stock: 7, stats: { views: 5 }, price: 3 }],
    ["$mul", { $mul: { stock: 3, price: 2 } }, { stock: 30, price: 5 }],
    ["$min", { $min: { stock: 4 } }, { stock: 4 }],
    ["$max", { $max: { stock: 40, name: "zebra" } }, { stock: 40, name: "zebra" }],
    ["$push with $each and $position", { $push: { tags: { $each: ["c", "d"], $position: 0 } } }, { tags: ["c", "d", "a", "b"] }],
    ["$push of a sub-document", { $push: { parts: { sku: "p2" } } }, { parts: [{ sku: "p1", qty: 1 }, { sku: "p2" }] }],
    ["$addToSet", { $addToSet: { tags: { $each: ["b", "e"] } } }, { tags: ["a", "b", "e"] }],
    ["$pull of a value", { $pull: { tags: "a" } }, { tags: ["b"] }],
    ["$pull by a condition", { $pull: { scores: { $gt: 4 } } }, { scores: [1] }],
    ["$pull of sub-documents by a field", { $pull: { parts: { sku: "p1" } } }, { parts: [] }],
  ])("%s: the store applies it, with a new ETag and _updated", async (_label, body, expected) => {
    const { _id, _etag } = await create(api, { ...start, code: `c-${Math.random()}` });
    const response = await patch(api, _id, body, _etag);
    expect(response.status, await response.clone().text()).toBe(200);
    const answer = await json(response);
    expect(Object.keys(answer).sort()).toEqual(["_created", "_etag", "_id", "_links", "_status", "_updated"]);
    expect(answer._etag).not.toBe(_etag);
    expect(response.headers.get("etag")).toBe(`"${answer._etag}"`);
    const after = await stored(api, _id);
    expect(after._etag).toBe(answer._etag);
    for (const [field, value] of Object.entries(expected)) expect(after[field], field).toEqual(value);
  });

  it("$currentDate sets the request's time, as _updated", async () => {
    const { _id, _etag } = await create(api, { ...start, code: "date" });
    expect((await patch(api, _id, { $currentDate: { seen: true } }, _etag)).status).toBe(200);
    const after = await stored(api, _id);
    expect(after.seen).toBe(after._updated);
  });

  it("mixes plain fields, merged as a PATCH merges them, with operators", async () => {
    const { _id, _etag } = await create(api, { ...start, code: "mixed" });
    const response = await patch(api, _id, { name: "both", stats: { label: "merged" }, $inc: { stock: 1 } }, _etag);
    expect(response.status).toBe(200);
    expect(await stored(api, _id)).toMatchObject({ name: "both", stock: 11, stats: { views: 1, label: "merged" } });
  });

  it("gives the ETag of what is stored: a GET shows it, and If-Match with the old one is 412", async () => {
    const { _id, _etag } = await create(api, { ...start, code: "etag" });
    const first = await json(await patch(api, _id, { $inc: { stock: 1 } }, _etag));
    expect((await api.get(`/items/${_id}`)).headers.get("etag")).toBe(`"${first._etag}"`);
    const stale = await api.patch(`/items/${_id}`, { $inc: { stock: 1 } }, { "If-Match": _etag });
    expect(stale.status).toBe(412);
    expect((await stored(api, _id)).stock).toBe(11);
    expect((await api.patch(`/items/${_id}`, { $inc: { stock: 1 } })).status).toBe(428);
  });

  describe("refuses, with Cerberus' wording, storing nothing", () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ["an unknown operator", { $rename: { name: "x" } }, { $rename: "unknown update operator" }],
      ["server-side JavaScript", { $where: "1", $function: {}, $expr: {} }, { $where: "unknown update operator", $function: "unknown update operator", $expr: "unknown update operator" }],
      ["a path outside the schema", { $inc: { nothing: 1, "stats.nothing": 1 } }, { $inc: { nothing: "unknown field", "stats.nothing": "unknown field" } }],
      ["an operand of the wrong type", { $inc: { stock: "1", price: true }, $mul: { "stats.views": 1.5 } }, { $inc: { stock: "must be of integer type", price: "must be of number type" }, $mul: { "stats.views": "must be of integer type" } }],
      ["an operator on a field of the wrong type", { $inc: { name: 1 }, $push: { code: "a" }, $currentDate: { "stats.label": true } }, { $inc: { name: "$inc needs a field of number type" }, $push: { code: "$push needs a field of list type" }, $currentDate: { "stats.label": "$currentDate needs a field of datetime type" } }],
      ["read-only and meta fields", { $set: { fixed: "x", _id: "x", _etag: "x", _created: "x" } }, { $set: { fixed: "field is read-only", _id: "field is read-only", _etag: "field is read-only", _created: "field is read-only" } }],
      ["a required field's $unset", { $unset: { required_note: "" } }, { $unset: { required_note: "required field" } }],
      ["a value the field's rules refuse", { $set: { name: 5, stock: -1 }, $max: { level: 9 } }, { $set: { name: "must be of string type", stock: "min value is 0" }, $max: { level: "unallowed value 9" } }],
      ["list items the list's rules refuse", { $push: { tags: { $each: ["a", "zz", 3] } }, $addToSet: { scores: "x" } }, { $push: { tags: { "1": "unallowed value zz", "2": "must be of string type" } }, $addToSet: { scores: { "0": "must be of integer type" } } }],
      ["a pushed sub-document missing a required field", { $push: { parts: { qty: 2 } } }, { $push: { parts: { "0": { sku: "required field" } } } }],
      ["more items than maxlength at once", { $push: { tags: { $each: ["a", "b", "c", "d", "e"] } } }, { $push: { tags: "max length is 4" } }],
      ["a rule that cannot be kept atomically", { $mul: { level: 2 }, $set: { secret: "x" } }, { $mul: { level: "rule 'allowed' cannot be kept by $mul" }, $set: { secret: "unallowed value x" } }],
      ["two updates of one field", { $inc: { stock: 1 }, $set: { stock: 2 }, $unset: { stats: "" }, $max: { "stats.views": 3 } }, { $set: { stock: "conflicts with the update of 'stock'" }, $max: { "stats.views": "conflicts with the update of 'stats'" } }],
      ["malformed operators", { $inc: 5, $set: {}, $pull: { tags: { $where: "1" } }, $push: { scores: { $each: "a" } }, $addToSet: { parts: { $each: [], $slice: 1 } } }, { $inc: "must be of dict type", $set: "empty values not allowed", $pull: { tags: "unknown operator $where (a $pull condition compares with $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin)" }, $push: { scores: "$each must be a list" }, $addToSet: { parts: "unknown modifier $slice ($addToSet takes $each)" } }],
      ["an operator inside a plain field's value", { stats: { $inc: { views: 1 } } }, { stats: { $inc: "field names starting with '$' are not allowed" } }],
    ];
    it.each(cases)("%s", async (_label, body, issues) => {
      const { _id, _etag } = await create(api, { ...start, code: `r-${Math.random()}` });
      const before = await stored(api, _id);
      const response = await patch(api, _id, body, _etag);
      expect(response.status).toBe(422);
      expect(await json(response)).toEqual({ _status: "ERR", _issues: issues });
      expect(await stored(api, _id)).toEqual(before);
    });

    it("a plain field that an operator changes too", async () => {
      const { _id, _etag } = await create(api, { ...start, code: "clash" });
      const response = await patch(api, _id, { stock: 3, $inc: { stock: 1 } }, _etag);
      expect(await json(response)).toEqual({ _status: "ERR", _issues: { stock: "conflicts with an update operator on the same field" } });
    });
  });

  it("keeps `$` keys refused as before on a resource without operators", async () => {
    const { _id, _etag } = await create(api, { name: "p" }, "/plain");
    const response = await patch(api, _id, { $inc: { stock: 1 } }, _etag, "/plain");
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({ _status: "ERR", _issues: { $inc: "field names starting with '$' are not allowed" } });
  });

  it("refuses an operator the resource does not list", async () => {
    const limited = testApi(settings({ UPDATE_OPERATORS: ["$inc"] }));
    const { _id, _etag } = await create(limited, { ...start, code: "limited" });
    const response = await patch(limited, _id, { $inc: { stock: 1 }, $mul: { stock: 2 } }, _etag);
    expect(await json(response)).toEqual({ _status: "ERR", _issues: { $mul: "unallowed update operator" } });
    await limited.close();
  });

  describe("rules that depend on the stored value, kept by the store's own step", () => {
    it("refuses an increment past max, or a decrement past min, saying which rule", async () => {
      const { _id, _etag } = await create(api, { ...start, code: "bounds", stock: 998 });
      const over = await patch(api, _id, { $inc: { stock: 3 } }, _etag);
      expect(over.status).toBe(422);
      expect(await json(over)).toEqual({ _status: "ERR", _issues: { $inc: { stock: "max value is 1000" } } });
      expect((await patch(api, _id, { $inc: { stock: 2 } }, _etag)).status).toBe(200);
      const under = await patch(api, _id, { $mul: { stock: -1 } });
      expect(await json(under)).toEqual({ _status: "ERR", _issues: { $mul: { stock: "min value is 0" } } });
      expect((await stored(api, _id)).stock).toBe(1000);
    });

    it("refuses a result too large for a double, which JSON could not carry, and a number that already is", async () => {
      const { _id } = await create(api, { ...start, code: "huge", price: 1e308 });
      expect(await json(await patch(api, _id, { $mul: { price: 10 } }))).toEqual({ _status: "ERR", _issues: { $mul: { price: "the result would be too large a number" } } });
      expect(await json(await patch(api, _id, { $mul: { price: -10 } }))).toEqual({ _status: "ERR", _issues: { $mul: { price: "the result would be too large a number" } } });
      expect(await json(await patch(api, _id, { $inc: { price: 1e308 } }))).toEqual({ _status: "ERR", _issues: { $inc: { price: "the result would be too large a number" } } });
      expect((await patch(api, _id, { $mul: { price: 0.5 } })).status).toBe(200);
      expect((await patch(api, _id, { $inc: { price: -1e308 } })).status).toBe(200);
      expect((await patch(api, _id, { $mul: { price: 1.5 } })).status).toBe(200);
      // The operand itself: JSON.parse reads 1e400 as Infinity; a numeric string converted to one stays text.
      const etag = (await stored(api, _id))._etag;
      const infinite = await api.patch(`/items/${_id}`, '{"$inc": {"price": 1e400}}', { "Content-Type": "application/json", "If-Match": etag });
      expect(infinite.status).toBe(400);
      expect((await json(infinite))._error.message).toBe("The JSON document holds a number too large to represent");
      expect(await json(await patch(api, _id, { $set: { price: "1e999" } }))).toEqual({ _status: "ERR", _issues: { $set: { price: "must be of float type" } } });
      expect((await api.post("/items", `{"required_note": "n", "price": -1e400}`, { "Content-Type": "application/json" })).status).toBe(400);
      const page = await api.get(`/items?where=${encodeURIComponent('{"code": "huge"}')}`);
      expect(page.status).toBe(200);
      expect(JSON.parse(await page.text())._items.find((item: { _id: string }) => item._id === _id).price).toBe((1e308 * 0.5 - 1e308) * 1.5);
    });

    it("refuses a $push past maxlength and an increment to a value not allowed", async () => {
      const { _id } = await create(api, { ...start, code: "lengths", tags: ["a", "b", "c"], level: 3 });
      expect(await json(await patch(api, _id, { $push: { tags: { $each: ["d", "e"] } } }))).toEqual({ _status: "ERR", _issues: { $push: { tags: "max length is 4" } } });
      expect((await patch(api, _id, { $push: { tags: "d" } })).status).toBe(200);
      expect(await json(await patch(api, _id, { $inc: { level: 1 } }))).toEqual({ _status: "ERR", _issues: { $inc: { level: "unallowed value" } } });
      expect((await patch(api, _id, { $inc: { level: -2 } })).status).toBe(200);
      expect(await stored(api, _id)).toMatchObject({ tags: ["a", "b", "c", "d"], level: 1 });
    });

    it("20 clients × 50 concurrent $inc leave exactly +1000", async () => {
      const concurrent = testApi(settings({ ENFORCE_IF_MATCH: false }));
      const { _id } = await create(concurrent, { ...start, code: "count", stock: 0 });
      const client = async () => {
        for (let i = 0; i < 50; i++) expect((await concurrent.patch(`/items/${_id}`, { $inc: { stock: 1 } })).status).toBe(200);
      };
      await Promise.all(Array.from({ length: 20 }, client));
      expect((await stored(concurrent, _id)).stock).toBe(1000);
      await concurrent.close();
    }, 120_000);

    it("min: 0 is never crossed by 50 concurrent $inc -1 on 10: ten succeed, forty are refused", async () => {
      const concurrent = testApi(settings({ ENFORCE_IF_MATCH: false }));
      const { _id } = await create(concurrent, { ...start, code: "floor", stock: 10 });
      const statuses = await Promise.all(Array.from({ length: 50 }, async () => (await concurrent.patch(`/items/${_id}`, { $inc: { stock: -1 } })).status));
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 422)).toHaveLength(40);
      expect((await stored(concurrent, _id)).stock).toBe(0);
      await concurrent.close();
    }, 120_000);

    it("concurrent $push onto a list with maxlength fill it exactly, losing none", async () => {
      const concurrent = testApi(settings({ ENFORCE_IF_MATCH: false }));
      const { _id } = await create(concurrent, { ...start, code: "push", tags: [] });
      const statuses = await Promise.all(["a", "b", "c", "d", "e", "f"].map(async (tag) => (await concurrent.patch(`/items/${_id}`, { $push: { tags: tag } })).status));
      expect(statuses.filter((status) => status === 200)).toHaveLength(4);
      expect((await stored(concurrent, _id)).tags).toHaveLength(4);
      await concurrent.close();
    }, 60_000);
  });
});

describe("update operators and the rest of a PATCH", () => {
  it("UPDATE_OPERATORS_ENFORCE_IF_MATCH false lets a PATCH of operators alone go without If-Match, not one with plain fields", async () => {
    const api = testApi(settings({ UPDATE_OPERATORS_ENFORCE_IF_MATCH: false }));
    const { _id } = await create(api);
    expect((await api.patch(`/items/${_id}`, { $inc: { stock: 1 } })).status).toBe(200);
    expect((await api.patch(`/items/${_id}`, { name: "x", $inc: { stock: 1 } })).status).toBe(428);
    expect((await api.patch(`/items/${_id}`, { name: "x" })).status).toBe(428);
    expect((await api.patch(`/items/${_id}`, { $inc: { stock: 1 } }, { "If-Match": '"stale"' })).status).toBe(412);
    expect((await stored(api, _id)).stock).toBe(11);
    await api.close();
  });

  it("versioning stores the resulting document as a new version", async () => {
    const api = testApi(settings({ VERSIONING: true }));
    const { _id } = await create(api);
    expect((await patch(api, _id, { $inc: { stock: 5 }, $push: { tags: "c" } })).status).toBe(200);
    expect((await patch(api, _id, { $inc: { stock: 5 } })).status).toBe(200);
    const latest = await stored(api, _id);
    expect(latest).toMatchObject({ stock: 20, _version: 3, _latest_version: 3 });
    const second = await json(await api.get(`/items/${_id}?version=2`));
    expect(second).toMatchObject({ stock: 15, tags: ["a", "b", "c"], _version: 2 });
    await api.close();
  });

  it("the oplog records the fields the operators changed, with their resulting values", async () => {
    const api = testApi(settings({ OPLOG: true, OPLOG_ENDPOINT: "oplog", OPLOG_AUDIT: true }));
    const { _id } = await create(api);
    expect((await patch(api, _id, { $inc: { stock: 2 }, name: "logged" })).status).toBe(200);
    const log = await json(await api.get(`/oplog?where={"o":"PATCH"}`));
    expect(log._items).toHaveLength(1);
    expect(log._items[0]).toMatchObject({ r: "items", o: "PATCH", i: _id, c: { name: "logged", stock: 12 } });
    await api.close();
  });

  it("$addToSet leaves a list's stored items as they are, duplicates too, and adds each new value once; the version and the oplog hold what was stored", async () => {
    const api = testApi(settings({ VERSIONING: true, OPLOG: true, OPLOG_ENDPOINT: "oplog", OPLOG_AUDIT: true }));
    const { _id } = await create(api, { ...start, scores: [1, 1] });
    const steps: Array<[unknown, number[]]> = [
      [{ $addToSet: { scores: 2 } }, [1, 1, 2]],
      [{ $addToSet: { scores: 1 } }, [1, 1, 2]],
      [{ $addToSet: { scores: { $each: [3, 1] } } }, [1, 1, 2, 3]],
    ];
    // The emulator (mongomock) adds a value $each repeats as often as it is repeated; MongoDB once.
    if (!ON_MONGODB_EMULATOR) steps.push([{ $addToSet: { scores: { $each: [4, 4] } } }, [1, 1, 2, 3, 4]]);
    for (const [body, scores] of steps) {
      expect((await patch(api, _id, body)).status).toBe(200);
      const after = await stored(api, _id);
      expect(after.scores, JSON.stringify(body)).toEqual(scores);
      expect((await json(await api.get(`/items/${_id}?version=${after._version}`))).scores).toEqual(scores);
    }
    const log = await json(await api.get(`/oplog?where={"o":"PATCH"}`));
    expect(log._items.map((entry: { c: { scores?: number[] } }) => entry.c.scores).filter(Boolean).at(-1)).toEqual(steps.at(-1)![1]);
    await api.close();
  });

  it("answers with the resulting document where BANDWIDTH_SAVER is off, through the projection", async () => {
    const api = testApi(settings({ BANDWIDTH_SAVER: false }));
    const { _id } = await create(api);
    const answer = await json(await patch(api, _id, { $inc: { stock: 2 }, $pull: { tags: "a" } }));
    expect(answer).toMatchObject({ stock: 12, tags: ["b"], name: "widget", _status: "OK" });
    await api.close();
  });

  it("restores a soft-deleted document, as any PATCH does", async () => {
    const api = testApi(settings({ SOFT_DELETE: true }));
    const { _id } = await create(api);
    const etag = (await stored(api, _id))._etag;
    expect((await api.delete(`/items/${_id}`, { "If-Match": etag })).status).toBe(204);
    expect((await api.get(`/items/${_id}`)).status).toBe(404);
    const deleted = await json(await api.get(`/items/${_id}?show_deleted=true`));
    expect((await api.patch(`/items/${_id}`, { $inc: { stock: 1 } }, { "If-Match": deleted._etag })).status).toBe(200);
    expect(await stored(api, _id)).toMatchObject({ stock: 11, _deleted: false });
    await api.close();
  });

  it("keeps a unique field's operators to where a unique index keeps it: refused under soft delete, checked otherwise", async () => {
    const indexed = testApi(settings());
    const first = await create(indexed, { ...start, code: "taken" });
    const second = await create(indexed, { ...start, code: "free" });
    const clash = await patch(indexed, second._id, { $set: { code: "taken" } });
    expect(clash.status).toBe(422);
    expect(await json(clash)).toMatchObject({ _status: "ERR", _issues: { $set: { code: "value 'taken' is not unique" } } });
    expect((await patch(indexed, first._id, { $set: { code: "other" } })).status).toBe(200);
    await indexed.close();
    // An $inc the index refuses is reported under its operator too.
    const serials = testApi({ UPDATE_OPERATORS: ["$inc"], RESOURCE_METHODS: ["GET", "POST"], ITEM_METHODS: ["GET", "PATCH"], DOMAIN: { tickets: { schema: { serial: { type: "integer", unique: true } } } } });
    const ten = await create(serials, { serial: 10 }, "/tickets");
    await create(serials, { serial: 11 }, "/tickets");
    const bumped = await patch(serials, ten._id, { $inc: { serial: 1 } }, undefined, "/tickets");
    expect(bumped.status).toBe(422);
    expect((await json(bumped))._issues).toEqual({ $inc: { serial: "value '11' is not unique" } });
    expect((await stored(serials, ten._id, "/tickets")).serial).toBe(10);
    await serials.close();
    const unindexed = testApi(settings({ SOFT_DELETE: true }));
    const { _id } = await create(unindexed, { ...start, code: "soft" });
    expect(await json(await patch(unindexed, _id, { $set: { code: "x" } }))).toEqual({
      _status: "ERR",
      _issues: { $set: { code: "unique is kept for update operators only where the store keeps a unique index (see docs/updates.md)" } },
    });
    await unindexed.close();
  });
});

// Eve's other unique rules are kept by lookups alone, as `unique` is under soft delete: an operator
// can bring a value no lookup saw (`$inc` onto a neighbour's number), so it is refused there too.
describe("update operators on fields unique within a resource or to a user, and on media fields", () => {
  const api = testApi({
    UPDATE_OPERATORS: ALL,
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      tickets: { datasource: { filter: { kind: "t" } }, schema: { kind: { type: "string" }, serial: { type: "integer", unique_within_resource: true }, n: { type: "integer" } } },
      files: { schema: { name: { type: "string" }, pic: { type: "media" }, pics: { type: "list", schema: { type: "media" } } } },
    },
  });
  afterAll(() => api.close());

  it("refuses them on a unique_within_resource field, and leaves the document as it was", async () => {
    const ticket = await create(api, { kind: "t", serial: 1, n: 1 }, "/tickets");
    await create(api, { kind: "t", serial: 2, n: 2 }, "/tickets");
    const bumped = await patch(api, ticket._id, { $inc: { serial: 1 } }, undefined, "/tickets");
    expect(bumped.status).toBe(422);
    expect((await json(bumped))._issues).toEqual({ $inc: { serial: "unique is kept for update operators only where the store keeps a unique index (see docs/updates.md)" } });
    expect((await patch(api, ticket._id, { $inc: { n: 1 } }, undefined, "/tickets")).status).toBe(200);
    expect(await stored(api, ticket._id, "/tickets")).toMatchObject({ serial: 1, n: 2 });
  });

  it.each([{ $unset: { pics: 1 } }, { $set: { pics: [] } }, { $min: { pics: [] } }, { $unset: { pic: 1 } }])("refuses %j on a media field or a list of them", async (body) => {
    const file = await create(api, { name: "f" }, "/files");
    const answer = await patch(api, file._id, body, undefined, "/files");
    expect(answer.status).toBe(422);
    const [operator, fields] = Object.entries(body)[0]!;
    expect((await json(answer))._issues).toEqual({ [operator]: { [Object.keys(fields)[0]!]: "media fields are sent as files, not with update operators" } });
  });
});

// Rules that describe a field rather than its value leave every operator free to change it.
describe("update operators on fields with descriptive rules", () => {
  const api = testApi(moduleSettings(pageSettings, new URL("./update-operators/pages.ts", import.meta.url)));
  afterAll(() => api.close());

  it("an unversioned counter and list, and fields with field_access, take $inc, $mul, $push, $addToSet and $pull", async () => {
    const { _id } = await create(api, { views: 1, refs: [1], hits: 1, marks: ["a"] }, "/pages");
    for (const body of [{ $inc: { views: 1, hits: 2 } }, { $mul: { views: 3 } }, { $push: { refs: 2, marks: "b" } }, { $addToSet: { refs: 3 } }, { $pull: { refs: 1, marks: "a" } }]) {
      const response = await patch(api, _id, body, undefined, "/pages");
      expect(response.status, `${JSON.stringify(body)}: ${await response.clone().text()}`).toBe(200);
    }
    expect(await stored(api, _id, "/pages")).toMatchObject({ views: 6, refs: [2, 3], hits: 3, marks: ["b"] });
  });
});

describe("the ETag of an operator PATCH", () => {
  const api = testApi({ UPDATE_OPERATORS: ["$set"], RESOURCE_METHODS: ["GET", "POST"], ITEM_METHODS: ["GET", "PATCH"], DOMAIN: { tags: { schema: { n: { type: "integer" } } } } });
  afterAll(() => api.close());

  it("is new at every write, as a plain PATCH's is: setting a value back gives no earlier ETag", async () => {
    const { _id } = await create(api, { n: 0 }, "/tags");
    const seen: string[] = [];
    for (const n of [1, 2, 1, 1]) {
      const response = await patch(api, _id, { $set: { n } }, undefined, "/tags");
      expect(response.status).toBe(200);
      seen.push((await json(response))._etag);
    }
    expect(new Set(seen).size).toBe(4);
  });
});

describe("$set of a sub-field with dependencies", () => {
  const api = testApi({
    UPDATE_OPERATORS: ["$set"],
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: { deps: { schema: { a: { type: "string" }, sub: { type: "dict", schema: { x: { type: "string" }, y: { type: "string", dependencies: ["x"] } } } } } },
  });
  afterAll(() => api.close());

  it("looks for what it depends on beside it, stored or set by the same request", async () => {
    // It was refused with "field 'x' is required" whatever was stored.
    const { _id } = await create(api, { a: "a", sub: { x: "1", y: "2" } }, "/deps");
    expect((await patch(api, _id, { $set: { "sub.y": "3" } }, undefined, "/deps")).status).toBe(200);
    const both = await patch(api, _id, { $set: { "sub.y": "4", "sub.x": "9" } }, undefined, "/deps");
    expect(both.status).toBe(200);
    expect((await stored(api, _id, "/deps")).sub).toEqual({ x: "9", y: "4" });
    const alone = await create(api, { a: "b" }, "/deps");
    const refused = await patch(api, alone._id, { $set: { "sub.y": "5" } }, undefined, "/deps");
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ $set: { "sub.y": "field 'x' is required" } });
  });
});

describe("$unset of a field another depends on", () => {
  const api = testApi({
    UPDATE_OPERATORS: ["$unset"],
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      orders: {
        schema: {
          status: { type: "string", allowed: ["active", "archived"] },
          dep: { type: "integer", dependencies: ["status"] },
          note: { type: "string" },
          box: { type: "dict", schema: { size: { type: "integer" }, label: { type: "string", dependencies: { size: [1, 2] } } } },
        },
      },
    },
  });
  afterAll(() => api.close());

  it("is refused, naming the dependent field, and nothing is written; other fields unset as before", async () => {
    const { _id } = await create(api, { status: "active", dep: 1, note: "n", box: { size: 1, label: "l" } }, "/orders");
    const refused = await patch(api, _id, { $unset: { status: "", "box.size": "" } }, undefined, "/orders");
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ $unset: { status: "cannot be unset: field 'dep' depends on it", "box.size": "cannot be unset: field 'label' depends on it" } });
    expect(await stored(api, _id, "/orders")).toMatchObject({ status: "active", dep: 1, box: { size: 1 } });
    expect((await patch(api, _id, { $unset: { note: "", "box.label": "" } }, undefined, "/orders")).status).toBe(200);
    const after = await stored(api, _id, "/orders");
    expect(after.note).toBeUndefined();
    expect(after.box).toEqual({ size: 1 });
  });
});
