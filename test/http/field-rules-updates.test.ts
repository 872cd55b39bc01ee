// Field rules under update operators and writes by filter (docs/contracts.md §4, docs/updates.md):
// a path the caller may not write, or one above such a field, refuses the request with a 403
// naming it before anything is checked or stored; a `where` naming a field the caller may not
// read is refused as an unknown field; the answers show only what the caller may read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, moduleSettings, testApi, type TestApi } from "../support/api.ts";
import cardSettings from "./field-rules/cards.ts";
import { expectNoHiddenValue, getAs, login, SECRET, seededApi, type Seeded } from "./field-rules/data.ts";

let api: TestApi;
let ids: Seeded;

beforeAll(
  async () =>
    ({ api, ids } = await seededApi({
      UPDATE_OPERATORS: ["$set", "$unset", "$inc", "$push"],
      PATCH_BY_FILTER: true,
      DELETE_BY_FILTER: true,
      RESOURCE_METHODS: ["GET", "POST", "PATCH", "DELETE"],
    })),
);
afterAll(() => api.close());

async function expectForbidden(response: Response, field: string): Promise<void> {
  expect(response.status, await response.clone().text()).toBe(403);
  expect(await json(response)).toEqual({ _status: "ERR", _error: { code: 403, message: `You don't have the permission to write the field '${field}'.` } });
}

const asHr = async (id: string) => json(await getAs(api, "hana", `/employees/${id}`));

describe("field rules on update operators", () => {
  it("refuses a path the caller may not write, or one above such a field, naming it; nothing is stored", async () => {
    const before = await asHr(ids.sam);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ $inc: { salary: 1 } }, "salary"],
      [{ $set: { "profile.ssn": "x" } }, "profile.ssn"],
      [{ $unset: { profile: "" } }, "profile"],
      [{ $push: { badges: { label: "new" } } }, "badges"],
      [{ $set: { review: "mine" } }, "review"],
      [{ name: "Sam", $set: { code: "x" } }, "code"],
    ];
    for (const [body, field] of cases) await expectForbidden(await api.patch(`/employees/${ids.sam}`, body, login("sam")), field);
    expect(await asHr(ids.sam)).toEqual(before);
  });

  it("changes what the caller may write, and answers with only what it may read", async () => {
    const response = await api.patch(`/employees/${ids.sam}`, { $set: { "profile.city": "Tromsø", pin: "4321" } }, login("sam"));
    expect(response.status, await response.clone().text()).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    const shown = await json(await getAs(api, "sam", `/employees/${ids.sam}`));
    expect(JSON.parse(text)._etag).toBe(shown._etag);
    expect(response.headers.get("etag")).toBe(`"${shown._etag}"`);
    expect(await asHr(ids.sam)).toMatchObject({ profile: { city: "Tromsø" }, pin: "4321" });
    expect((await api.patch(`/employees/${ids.sam}`, { $inc: { salary: 5 } }, login("hana"))).status).toBe(200);
  });
});

describe("field rules on writes by filter", () => {
  const where = (filter: object) => `where=${encodeURIComponent(JSON.stringify(filter))}`;

  it("refuses a PATCH that changes a field the caller may not write, and a where on one it may not read", async () => {
    const before = await asHr(ids.boss);
    await expectForbidden(await api.patch(`/employees?${where({ name: "Boss" })}`, { $inc: { salary: 1 } }, login("sam")), "salary");
    await expectForbidden(await api.patch(`/employees?${where({ name: "Boss" })}`, { status: "gone" }, login("sam")), "status");
    for (const filter of [{ salary: 970001 }, { "profile.ssn": { $exists: true } }, { $or: [{ name: "x" }, { code: "y" }] }]) {
      expect((await api.patch(`/employees?${where(filter)}`, { name: "X" }, login("sam"))).status).toBe(400);
      expect((await api.delete(`/employees?${where(filter)}`, login("sam"))).status).toBe(400);
    }
    expect(await asHr(ids.boss)).toEqual(before);
  });

  // The resource has a field_access hook (review): it waits for a document, the role lists do not.
  it("refuses fields by their role lists when nothing matches, as when something does", async () => {
    const none = `/employees?${where({ name: "Nobody" })}`;
    await expectForbidden(await api.patch(none, { $inc: { salary: 1 } }, login("sam")), "salary");
    await expectForbidden(await api.patch(none, { salary: 1 }, login("sam")), "salary");
    await expectForbidden(await api.patch(none, { $set: { login: "sam" } }, login("sam")), "login");
    await expectForbidden(await api.patch(none, { login: "sam" }, login("sam")), "login");
    await expectForbidden(await api.patch(none, { $set: { "profile.ssn": "x" } }, login("sam")), "profile.ssn");
    const probe = await api.patch(none, { $inc: { pin: 1 } }, login("sam"));
    expect(probe.status).toBe(400);
    expect((await json(probe))._error.message).toBe("filter on 'pin' is invalid");
    const nothing = { _status: "OK", _meta: { matched: 0, updated: 0 }, _items: [] };
    expect(await json(await api.patch(none, { $set: { review: "mine" } }, login("sam")))).toEqual(nothing);
    expect(await json(await api.patch(none, { $inc: { salary: 1 } }, login("hana")))).toEqual(nothing);
  });

  it("patches what the caller may write, its answer holding nothing it may not read", async () => {
    const response = await api.patch(`/employees?${where({ name: "Boss" })}`, { profile: { city: "Bergen" } }, login("sam"));
    expect(response.status).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    expect(JSON.parse(text)._meta).toEqual({ matched: 1, updated: 1 });
    expect(await asHr(ids.boss)).toMatchObject({ profile: { city: "Bergen", ssn: expect.stringContaining("ssn-boss") } });
  });
});

describe("field rules on dotted keys (NORMALIZE_DOTTED_FIELDS expands them into sub-documents)", () => {
  it("judges a dotted key as the field it sets, on POST, PATCH and PUT; nothing is stored", async () => {
    const before = await asHr(ids.sam);
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { "profile.ssn": "HACK" }, login("sam")), "profile.ssn");
    await expectForbidden(await api.put(`/employees/${ids.sam}`, { name: "Sam", "profile.ssn": "HACK" }, login("sam")), "profile.ssn");
    await expectForbidden(await api.post("/employees", { name: "Dot", "profile.ssn": "HACK" }, login("sam")), "profile.ssn");
    await expectForbidden(await api.post("/employees", [{ name: "Dot" }, { name: "Dot2", "profile.ssn": "HACK" }], login("sam")), "profile.ssn");
    expect(await asHr(ids.sam)).toEqual(before);
    const found = await json(await getAs(api, "hana", `/employees?where=${encodeURIComponent(JSON.stringify({ name: { $in: ["Dot", "Dot2"] } }))}`));
    expect(found._items).toEqual([]);
  });

  it("sets a dotted field the caller may write, keeping the sub-document's fields it may not", async () => {
    const response = await api.patch(`/employees/${ids.sam}`, { "profile.city": "Bodø" }, login("sam"));
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await asHr(ids.sam)).profile).toEqual({ city: "Bodø", ssn: `${SECRET}-ssn-sam` });
  });
});

describe("writes by filter over several documents under field rules", () => {
  const where = (filter: object) => `where=${encodeURIComponent(JSON.stringify(filter))}`;
  let twins: string[];
  beforeAll(async () => {
    const created = await api.post("/employees", [1, 2].map((n) => ({ name: "Twin", login: `twin${n}`, profile: { city: "Oslo", ssn: `${SECRET}-ssn-twin${n}` } })), login("hana"));
    expect(created.status, await created.clone().text()).toBe(201);
    twins = ((await json(created))._items as Array<{ _id: string }>).map((item) => item._id);
  });

  it("leaves each document its own value of a field the caller may not write", async () => {
    const response = await api.patch(`/employees?${where({ name: "Twin" })}`, { profile: { city: "Molde" } }, login("sam"));
    expect(response.status, await response.clone().text()).toBe(200);
    expectNoHiddenValue(await response.text());
    for (const [i, id] of twins.entries()) expect((await asHr(id)).profile).toEqual({ city: "Molde", ssn: `${SECRET}-ssn-twin${i + 1}` });
  });

  it("applies dotted keys, and refuses one the caller may not write", async () => {
    const response = await api.patch(`/employees?${where({ name: "Twin" })}`, { "profile.city": "Hamar", login: "twin" }, login("hana"));
    expect(response.status, await response.clone().text()).toBe(200);
    for (const [i, id] of twins.entries()) expect(await asHr(id)).toMatchObject({ login: "twin", profile: { city: "Hamar", ssn: `${SECRET}-ssn-twin${i + 1}` } });
    await expectForbidden(await api.patch(`/employees?${where({ name: "Twin" })}`, { "profile.ssn": "Y" }, login("sam")), "profile.ssn");
    expect((await asHr(twins[0]!)).profile).toEqual({ city: "Hamar", ssn: `${SECRET}-ssn-twin1` });
  });
});

// $pull and $addToSet act on what is stored: on a list whose items hold a field the caller may
// not read (but may write), what they did would tell its values, as a `where` naming it would.
describe("operators that compare stored values a caller may not read", () => {
  const cards = testApi(moduleSettings(cardSettings, new URL("./field-rules/cards.ts", import.meta.url)));
  const as = (user: string) => ({ Authorization: `Basic ${btoa(`${user}:pw`)}` });
  afterAll(() => cards.close());

  it("refuses $pull naming such a field or testing whole items, and $addToSet on such a list; nothing changes", async () => {
    const created = await json(await cards.post("/cards", { name: "sam", badges: [{ label: "gold", cost: 100 }], tags: ["a"] }, as("hr")));
    const stored = async () => json(await cards.get(`/cards/${created._id}`, as("hr")));
    const before = await stored();
    const byFilter = `/cards?where=${encodeURIComponent(JSON.stringify({ name: "sam" }))}`;
    for (const body of [{ $pull: { badges: { cost: 100 } } }, { $pull: { badges: { cost: { $gt: 10 } } } }, { $pull: { badges: { $in: [{ label: "gold", cost: 100 }] } } }, { $addToSet: { badges: { label: "gold", cost: 100 } } }]) {
      for (const url of [`/cards/${created._id}`, byFilter]) {
        const refused = await cards.patch(url, body, as("dev"));
        expect(refused.status, `${url} ${JSON.stringify(body)}`).toBe(400);
        expect((await json(refused))._error.message).toBe("filter on 'badges' is invalid");
      }
    }
    expect(await stored()).toEqual(before);
    // What the caller may read it may compare; and a caller who may read it all, everything.
    expect((await cards.patch(`/cards/${created._id}`, { $pull: { tags: "a" } }, as("dev"))).status).toBe(200);
    expect((await cards.patch(`/cards/${created._id}`, { $pull: { badges: { label: "silver" } } }, as("dev"))).status).toBe(200);
    expect((await cards.patch(`/cards/${created._id}`, { $pull: { badges: { cost: 100 } } }, as("hr"))).status).toBe(200);
    expect((await stored()).badges).toEqual([]);
  });

  it("refuses operators whose outcome turns on the stored value of a field the caller may not read; $set stays a write", async () => {
    // $inc under min: 0 answered 422 below the stored credit and 200 above it: a binary search read it.
    const created = await json(await cards.post("/cards", { name: "kim", credit: 37, slots: ["a", "b"] }, as("hr")));
    const stored = async () => json(await cards.get(`/cards/${created._id}`, as("hr")));
    const before = await stored();
    const byFilter = `/cards?where=${encodeURIComponent(JSON.stringify({ name: "kim" }))}`;
    const matchingNone = `/cards?where=${encodeURIComponent(JSON.stringify({ name: "nobody" }))}`;
    const bodies: Array<[Record<string, unknown>, string]> = [
      [{ $inc: { credit: -38 } }, "credit"],
      [{ $inc: { credit: -1 } }, "credit"],
      [{ $mul: { credit: 2 } }, "credit"],
      [{ $min: { credit: 1 } }, "credit"],
      [{ $max: { credit: 100 } }, "credit"],
      [{ $push: { slots: { $each: ["x", "y"] } } }, "slots"],
      [{ $addToSet: { slots: "a" } }, "slots"],
      [{ $pull: { slots: "a" } }, "slots"],
      // A whole list whose items hold a hidden field: $max compares, and may replace, all of it.
      [{ $max: { badges: [] } }, "badges"],
      [{ $min: { badges: [{ label: "z" }] } }, "badges"],
    ];
    for (const [body, field] of bodies) {
      for (const url of [`/cards/${created._id}`, byFilter, matchingNone]) {
        const refused = await cards.patch(url, body, as("dev"));
        expect(refused.status, `${url} ${JSON.stringify(body)}`).toBe(400);
        expect((await json(refused))._error.message).toBe(`filter on '${field}' is invalid`);
      }
    }
    expect(await stored()).toEqual(before);
    expect((await cards.patch(`/cards/${created._id}`, { $set: { credit: 5 } }, as("dev"))).status).toBe(200);
    expect((await cards.patch(`/cards/${created._id}`, { $inc: { credit: 1 } }, as("hr"))).status).toBe(200);
    expect((await stored()).credit).toBe(6);
  });

  it("hold on another resource over the same collection for the fields it does not declare", async () => {
    await cards.post("/cards", { name: "lee", credit: 500, slots: ["a"] }, as("hr"));
    const q = (filter: object) => encodeURIComponent(JSON.stringify(filter));
    for (const path of [`/names?where=${q({ credit: 500 })}`, `/names?where=${q({ $or: [{ credit: { $gt: 1 } }] })}`, "/names?sort=-credit", `/names?where=${encodeURIComponent("credit == 500")}`, `/names?projection=${q({ slots: 1 })}`]) {
      const refused = await cards.get(path, as("dev"));
      expect(refused.status, path).toBe(400);
    }
    const found = await json(await cards.get(`/names?where=${q({ name: "lee" })}`, as("dev")));
    expect(found._items.map((item: { name: string }) => item.name)).toEqual(["lee"]);
    expect(found._items[0]).not.toHaveProperty("credit");
    expect((await json(await cards.get(`/names?where=${q({ credit: 500 })}`, as("hr"))))._items).toHaveLength(1);
    // A resource that declares the field serves it as its author chose.
    expect((await json(await cards.get(`/credits?where=${q({ credit: 500 })}`, as("dev"))))._items[0]).toMatchObject({ name: "lee", credit: 500 });
  });
});
