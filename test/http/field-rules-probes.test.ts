// A field a caller may not read cannot be probed (docs/auth.md, "Field rules"): `where` in either
// syntax, at any depth and inside every operator, `sort`, `projection` and `embedded` naming it
// get the 400 that VALIDATE_FILTERS gives a field the schema does not have, before anything is
// read. The same query from HR is answered. One test per operator, each in both syntaxes where
// the Python one can say it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi, type TestApi } from "./../support/api.ts";
import { fieldRulesApi, getAs, seed, type Seeded } from "./field-rules/data.ts";

let api: TestApi;
let ids: Seeded;
/** What an unknown field gets under VALIDATE_FILTERS, from an API without field rules. */
let unknownField: (field: string) => Promise<unknown>;
let plain: TestApi;

beforeAll(async () => {
  // $regex is on Eve's default blacklist; allowed here so that it too can be tried.
  api = fieldRulesApi({ DB_QUERY_BLACKLIST: ["$where"] });
  ids = await seed(api);
  plain = testApi({ VALIDATE_FILTERS: true, DOMAIN: { things: { schema: { name: { type: "string" } } } } });
  unknownField = async (field) => json(await plain.get(`/things?where=${encodeURIComponent(JSON.stringify({ [field]: 1 }))}`));
});
afterAll(async () => {
  await api.close();
  await plain.close();
});

const where = (clause: string) => `/employees?where=${encodeURIComponent(clause)}`;

/** The caller who may not read the field is refused as an unknown field would be; HR is answered. */
async function refused(path: string, field: string, parameter = "filter"): Promise<void> {
  const response = await getAs(api, "sam", path);
  expect(response.status, path).toBe(400);
  const body = await json(response);
  expect(body).toEqual({ _status: "ERR", _error: { code: 400, message: `${parameter} on '${field}' is invalid` } });
  if (parameter === "filter" && !field.startsWith("$")) expect(body).toEqual(await unknownField(field));
  const asHr = await getAs(api, "hana", path);
  expect(asHr.status, `${path} as HR: ${await asHr.clone().text()}`).toBe(200);
}

// [operator, JSON where, the Python syntax's (or null), the field the refusal names]
const WHERE: Array<[string, string, string | null, string]> = [
  ["equality", '{"salary": 970001}', "salary == 970001", "salary"],
  ["$ne", '{"salary": {"$ne": 1}}', "salary != 1", "salary"],
  ["$gt", '{"salary": {"$gt": 1}}', "salary > 1", "salary"],
  ["$gte", '{"salary": {"$gte": 1}}', "salary >= 1", "salary"],
  ["$lt", '{"salary": {"$lt": 1}}', "salary < 1", "salary"],
  ["$lte", '{"salary": {"$lte": 1}}', "salary <= 1", "salary"],
  ["$in", '{"salary": {"$in": [970001]}}', null, "salary"],
  ["$nin", '{"salary": {"$nin": [1]}}', null, "salary"],
  ["$exists", '{"code": {"$exists": true}}', null, "code"],
  ["$type", '{"code": {"$type": "string"}}', null, "code"],
  ["$regex", '{"code": {"$regex": "^zq"}}', null, "code"],
  ["$not", '{"salary": {"$not": {"$gt": 1}}}', null, "salary"],
  ["$or", '{"$or": [{"name": "Sam"}, {"salary": 970001}]}', 'name == "Sam" or salary == 970001', "salary"],
  ["$and", '{"$and": [{"name": "Sam"}, {"salary": {"$gt": 1}}]}', 'name == "Sam" and salary > 1', "salary"],
  ["$nor", '{"$nor": [{"salary": 1}]}', null, "salary"],
  ["nested $or and $and", '{"$or": [{"name": "x"}, {"$and": [{"name": "Boss"}, {"profile.ssn": "y"}]}]}', 'name == "x" or (name == "Boss" and profile.ssn == "y")', "profile.ssn"],
  ["a dict's field, dotted", '{"profile.ssn": "zq"}', 'profile.ssn == "zq"', "profile.ssn"],
  ["a list's items' field, dotted", '{"badges.cost": 970003}', "badges.cost == 970003", "badges.cost"],
  ["a list item by index", '{"badges.0.cost": 970003}', null, "badges.0.cost"],
  ["$elemMatch", '{"badges": {"$elemMatch": {"cost": {"$gt": 1}}}}', null, "badges"],
  ["$all of a list holding such fields", '{"badges": {"$all": [{"label": "gold", "cost": 970003}]}}', null, "badges"],
  ["a dict compared whole", '{"profile": {"city": "Oslo", "ssn": "zq"}}', null, "profile"],
  ["a dict's field as a sub-document", '{"profile": {"ssn": {"$exists": true}}}', null, "profile"],
  ["a field a hook withholds", '{"review": {"$exists": true}}', 'review == "x"', "review"],
  ["$expr, which reaches fields by path", '{"$expr": {"$gt": ["$salary", 0]}}', null, "$expr"],
];

describe("field rules: where", () => {
  for (const [operator, clause, python, field] of WHERE) {
    it(`${operator} (JSON${python ? " and Python syntax" : ""})`, async () => {
      await refused(where(clause), field);
      if (python) await refused(where(python), field);
    });
  }

  it("answers what only names fields the caller may read, shapes of lists and dicts included", async () => {
    const found = async (account: "sam" | "hana", clause: string) => {
      const response = await getAs(api, account, where(clause));
      expect(response.status, clause).toBe(200);
      return (await json(response))._items.map((doc: { _id: string }) => doc._id);
    };
    for (const clause of ['{"profile.city": "Oslo"}', '{"badges.label": "gold"}', '{"badges": {"$size": 2}}', 'name == "Boss"']) {
      expect(await found("sam", clause), clause).toEqual([ids.boss]);
    }
    expect((await found("sam", '{"profile": {"$exists": true}}')).sort()).toEqual(await found("hana", '{"profile": {"$exists": true}}').then((list) => list.sort()));
  });
});

describe("field rules: sort, projection, embedded", () => {
  it.each([
    ["a field", "salary"],
    ["a field, descending", "-code"],
    ["a dict's field", "profile.ssn"],
    ["a list's items' field, as a literal", '[("badges.cost", 1)]'],
    ["a dict holding such a field, compared whole", "profile"],
  ])("sort on %s", async (_what, sort) => {
    const field = sort.replace(/^-/, "").replace(/^\[\("(.+)", 1\)\]$/, "$1");
    await refused(`/employees?sort=${encodeURIComponent(sort)}`, field, "sort");
  });

  it.each([
    ["including a field", '{"salary": 1}', "salary"],
    ["excluding a field", '{"code": 0}', "code"],
    ["a dict's field", '{"profile.ssn": 1}', "profile.ssn"],
    ["a list's items' field", '{"badges.cost": 1}', "badges.cost"],
  ])("projection %s", async (_what, projection, field) => {
    await refused(`/employees/${ids.boss}?projection=${encodeURIComponent(projection)}`, field, "projection");
    await refused(`/employees?projection=${encodeURIComponent(projection)}`, field, "projection");
  });

  it("a projection of a dict holding such a field shows what the caller may see of it", async () => {
    const document = await json(await getAs(api, "sam", `/employees/${ids.boss}?projection={"profile":1}`));
    expect(document.profile).toEqual({ city: "Oslo" });
    expect(document).not.toHaveProperty("name");
  });

  it("embedded naming such a field, in the resource or in the one embedded", async () => {
    const team = (await json(await api.post("/teams", { name: "Ops", budget: 5, lead: ids.boss }, { Authorization: `Basic ${btoa("hana:hana-pw")}` })))._id;
    await refused(`/teams/${team}?embedded={"budget":1}`, "budget", "embedding");
    await refused(`/teams/${team}?embedded={"lead.salary":1}`, "lead.salary", "embedding");
    expect((await getAs(api, "sam", `/teams/${team}?embedded={"lead":1}`)).status).toBe(200);
  });

  it("an aggregation parameter naming such a field", async () => {
    await refused(`/headcount?aggregate=${encodeURIComponent('{"$by": "$salary"}')}`, "salary", "aggregation parameter");
    await refused(`/headcount?aggregate=${encodeURIComponent('{"$by": "$profile.ssn"}')}`, "profile.ssn", "aggregation parameter");
    // A field named by a plain string, which no read rule sees as a path: refused to every caller.
    for (const by of ['{"$getField": "salary"}', '{"$getField": {"field": {"$concat": ["sal", "ary"]}}}']) {
      const leaking = await getAs(api, "sam", `/headcount?aggregate=${encodeURIComponent(`{"$by": ${by}}`)}`);
      expect(leaking.status, by).toBe(400);
      expect((await json(leaking))._error.message).toBe("operator $getField is not allowed in an aggregation parameter");
    }
    const response = await getAs(api, "sam", `/headcount?aggregate=${encodeURIComponent('{"$by": "$status"}')}`);
    expect(response.status).toBe(200);
    expect((await json(response))._items).toEqual([{ _id: "active", count: 2 }]);
  });
});
