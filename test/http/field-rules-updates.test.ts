// Field rules under update operators and writes by filter (docs/contracts.md §4, docs/updates.md):
// a path the caller may not write, or one above such a field, refuses the request with a 403
// naming it before anything is checked or stored; a `where` naming a field the caller may not
// read is refused as an unknown field; the answers show only what the caller may read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, type TestApi } from "../support/api.ts";
import { expectNoHiddenValue, getAs, login, seededApi, type Seeded } from "./field-rules/data.ts";

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

  it("patches what the caller may write, its answer holding nothing it may not read", async () => {
    const response = await api.patch(`/employees?${where({ name: "Boss" })}`, { profile: { city: "Bergen" } }, login("sam"));
    expect(response.status).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    expect(JSON.parse(text)._meta).toEqual({ matched: 1, updated: 1 });
    expect(await asHr(ids.boss)).toMatchObject({ profile: { city: "Bergen", ssn: expect.stringContaining("ssn-boss") } });
  });
});
