// ETags under field rules (src/read/visible.ts): a caller shown every field gets the stored ETag;
// one shown fewer gets the hash of what it is shown, which a change it cannot see leaves as it
// was (a 304 stays a 304) and which If-Match is compared with, the write still atomic.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, type TestApi } from "./../support/api.ts";
import { getAs, login, SALARY, SECRET, seededApi, type Seeded } from "./field-rules/data.ts";

let api: TestApi;
let ids: Seeded;

beforeAll(async () => ({ api, ids } = await seededApi()));
afterAll(() => api.close());

const etagOf = async (account: "hana" | "sam" | "kim", id: string) => (await getAs(api, account, `/employees/${id}`)).headers.get("etag")!;

describe("field rules and ETags", () => {
  it("callers shown different fields get different ETags; the one shown everything the stored one", async () => {
    const stored = (await json(await getAs(api, "hana", `/employees/${ids.boss}`)))._etag;
    const [hana, sam, kim] = [await etagOf("hana", ids.boss), await etagOf("sam", ids.boss), await etagOf("kim", ids.boss)];
    expect(hana).toBe(`"${stored}"`);
    expect(new Set([hana, sam, kim]).size).toBe(3);
    // The page shows the same ETag per document as the item does.
    const page = await json(await getAs(api, "sam", "/employees"));
    const item = page._items.find((doc: { _id: string }) => doc._id === ids.boss);
    expect(`"${item._etag}"`).toBe(sam);
  });

  it("a change to a field the caller cannot see leaves its ETag, and its 304, as they were", async () => {
    const before = await etagOf("sam", ids.sam);
    const hanaBefore = await etagOf("hana", ids.sam);
    const changed = await api.patch(`/employees/${ids.sam}`, { salary: SALARY.sam + 1, profile: { city: "Bergen", ssn: `${SECRET}-ssn-new` } }, login("hana"));
    expect(changed.status).toBe(200);
    expect(await etagOf("sam", ids.sam)).toBe(before);
    expect((await getAs(api, "sam", `/employees/${ids.sam}`, { "If-None-Match": before })).status).toBe(304);
    // HR sees the change.
    expect(await etagOf("hana", ids.sam)).not.toBe(hanaBefore);
    expect((await getAs(api, "hana", `/employees/${ids.sam}`, { "If-None-Match": hanaBefore })).status).toBe(200);
  });

  it("a change the caller can see gives it a new ETag", async () => {
    const before = await etagOf("sam", ids.sam);
    await api.patch(`/employees/${ids.sam}`, { profile: { city: "Tromsø" } }, login("hana"));
    expect(await etagOf("sam", ids.sam)).not.toBe(before);
    expect((await getAs(api, "sam", `/employees/${ids.sam}`, { "If-None-Match": before })).status).toBe(200);
  });

  it("If-Match is compared with the ETag the caller was shown; the hidden fields stay as stored", async () => {
    const shown = await etagOf("sam", ids.boss);
    const stored = await etagOf("hana", ids.boss);
    expect((await api.patch(`/employees/${ids.boss}`, { name: "The Boss" }, { ...login("sam"), "If-Match": stored })).status).toBe(412);
    const written = await api.patch(`/employees/${ids.boss}`, { name: "The Boss" }, { ...login("sam"), "If-Match": shown });
    expect(written.status).toBe(200);
    const after = await json(await getAs(api, "hana", `/employees/${ids.boss}`));
    expect(after).toMatchObject({ name: "The Boss", salary: SALARY.boss, profile: { ssn: `${SECRET}-ssn-boss` } });
    // The ETag of the answer is the one to send next.
    expect((await api.patch(`/employees/${ids.boss}`, { name: "Big Boss" }, { ...login("sam"), "If-Match": written.headers.get("etag")! })).status).toBe(200);
    expect((await api.patch(`/employees/${ids.boss}`, { name: "Boss" }, { ...login("sam"), "If-Match": shown })).status).toBe(412);
  });
});
