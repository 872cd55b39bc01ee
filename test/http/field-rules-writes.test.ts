// Field rules on every way a document is written (docs/auth.md, "Field rules"): a body that sets a
// field the caller may not write — or replaces a dict or list whose stored value holds one — is
// refused as a whole with a 403 naming the field, and nothing is stored; a PUT keeps such fields
// as stored; defaults and readonly work as before; no message quotes a value the caller may not read.
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, type TestApi } from "./../support/api.ts";
import { fieldRulesApi, getAs, login, SALARY, SECRET, seed, seededApi, type Seeded } from "./field-rules/data.ts";

let api: TestApi;
let ids: Seeded;

beforeAll(async () => ({ api, ids } = await seededApi()));
afterAll(() => api.close());

async function expectForbidden(response: Response, field: string): Promise<void> {
  expect(response.status, await response.clone().text()).toBe(403);
  expect(await json(response)).toEqual({ _status: "ERR", _error: { code: 403, message: `You don't have the permission to write the field '${field}'.` } });
}

const count = async () => (await json(await getAs(api, "hana", "/employees")))._meta.total as number;
const stored = async (id: string) => json(await getAs(api, "hana", `/employees/${id}`));

describe("field rules on writes", () => {
  it("POST: a field, a dict's field or a list's items' field the caller may not write refuses the request; nothing is stored", async () => {
    const before = await count();
    await expectForbidden(await api.post("/employees", { name: "Eve", salary: 1 }, login("sam")), "salary");
    await expectForbidden(await api.post("/employees", { name: "Eve", profile: { ssn: "1" } }, login("sam")), "profile.ssn");
    await expectForbidden(await api.post("/employees", { name: "Eve", badges: [{ label: "a" }, { label: "b", cost: 1 }] }, login("sam")), "badges.cost");
    // A field_access hook decides writes too: the owner reads their review, never writes it.
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { review: "great" }, login("sam")), "review");
    // Nor says whose a record is, which would let them read another's review (docs/auth.md).
    await expectForbidden(await api.patch(`/employees/${ids.boss}`, { login: "sam" }, login("sam")), "login");
    await expectForbidden(await api.post("/employees", { name: "Eve", login: "sam" }, login("sam")), "login");
    // A bulk insert is all or nothing.
    await expectForbidden(await api.post("/employees", [{ name: "Ok" }, { name: "Eve", code: "x" }], login("sam")), "code");
    expect(await count()).toBe(before);
    expect((await api.post("/employees", { name: "Eve", salary: 1 }, login("hana"))).status).toBe(201);
  });

  it("POST: defaults fill fields the caller may not write; readonly still refuses what is sent", async () => {
    const created = await json(await api.post("/employees", { name: "Ola" }, login("sam")));
    expect(await stored(created._id)).toMatchObject({ status: "active", number: 7 });
    await expectForbidden(await api.post("/employees", { name: "Ola", status: "on leave" }, login("sam")), "status");
    const readonly = await api.post("/employees", { name: "Ola", number: 8 }, login("sam"));
    expect(readonly.status).toBe(422);
    expect((await json(readonly))._issues).toEqual({ number: "field is read-only" });
  });

  it("form and multipart bodies are the same documents", async () => {
    await expectForbidden(await api.fetch("/employees", { method: "POST", headers: { ...login("sam"), "Content-Type": "application/x-www-form-urlencoded" }, body: "name=Eve&salary=5" }), "salary");
    const form = new FormData();
    form.append("name", "Eve");
    form.append("code", "x");
    await expectForbidden(await api.fetch("/employees", { method: "POST", headers: login("sam"), body: form }), "code");
    const upload = new FormData();
    upload.append("title", "mine");
    upload.append("scan", new File(["bytes"], "scan.txt", { type: "text/plain" }));
    await expectForbidden(await api.fetch("/scans", { method: "POST", headers: login("sam"), body: upload }), "scan");
    const ok = new FormData();
    ok.append("name", "Eve");
    expect((await api.fetch("/employees", { method: "POST", headers: login("sam"), body: ok })).status).toBe(201);
  });

  it("PATCH: refused for such a field; a merged dict keeps what it holds; replacing a value that holds one is refused", async () => {
    const before = await stored(ids.sam);
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { name: "Sammy", salary: 1 }, login("sam")), "salary");
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { profile: { city: "Oslo", ssn: "1" } }, login("sam")), "profile.ssn");
    // null would erase the ssn; a new list would erase the stored badges' costs.
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { profile: null }, login("sam")), "profile.ssn");
    await expectForbidden(await api.patch(`/employees/${ids.sam}`, { badges: [] }, login("sam")), "badges.cost");
    expect(await stored(ids.sam)).toEqual(before);

    expect((await api.patch(`/employees/${ids.sam}`, { name: "Sammy", profile: { city: "Oslo" } }, login("sam"))).status).toBe(200);
    expect(await stored(ids.sam)).toMatchObject({ name: "Sammy", salary: SALARY.sam, profile: { city: "Oslo", ssn: `${SECRET}-ssn-sam` } });
  });

  it("PATCH replacing a dict (MERGE_NESTED_DOCUMENTS off) keeps the fields of it the caller may not write", async () => {
    const unmerged = fieldRulesApi({ MERGE_NESTED_DOCUMENTS: false });
    try {
      const own = await seed(unmerged);
      expect((await unmerged.patch(`/employees/${own.boss}`, { profile: { city: "Rome" } }, login("sam"))).status).toBe(200);
      expect((await json(await getAs(unmerged, "hana", `/employees/${own.boss}`))).profile).toEqual({ city: "Rome", ssn: `${SECRET}-ssn-boss` });
    } finally {
      await unmerged.close();
    }
  });

  it("PUT: keeps every field the caller may not write as stored, at any depth; refused when it sets one", async () => {
    const before = await stored(ids.boss);
    await expectForbidden(await api.put(`/employees/${ids.boss}`, { name: "Boss", salary: 1 }, login("sam")), "salary");
    await expectForbidden(await api.put(`/employees/${ids.boss}`, { name: "Boss", badges: [{ label: "new" }] }, login("sam")), "badges.cost");
    expect(await stored(ids.boss)).toEqual(before);

    const put = await api.put(`/employees/${ids.boss}`, { name: "New Boss", profile: { city: "Paris" } }, login("sam"));
    expect(put.status, await put.clone().text()).toBe(200);
    const after = await stored(ids.boss);
    expect(after).toMatchObject({
      name: "New Boss",
      login: before.login,
      salary: before.salary,
      review: before.review,
      code: before.code,
      status: before.status,
      profile: { city: "Paris", ssn: before.profile.ssn },
      badges: before.badges,
    });
    // Any role may write the pin: a PUT without it removes it, as Eve's PUT does.
    expect(after).not.toHaveProperty("pin");
  });

  it("PUT and PATCH leave a field the caller may not write absent where it was, defaults notwithstanding", async () => {
    // A document another program stored, without the status every POST gives.
    const app = api.handler.app;
    const id = new ObjectId();
    await app.data.insert(null, app.config.DOMAIN.employees!, [{ _id: id, name: "Legacy" }]);
    expect((await api.patch(`/employees/${id}`, { name: "Legacy 2" }, login("sam"))).status).toBe(200);
    expect(await stored(String(id))).not.toHaveProperty("status");
    expect((await api.put(`/employees/${id}`, { name: "Legacy 3" }, login("sam"))).status).toBe(200);
    expect(await stored(String(id))).not.toHaveProperty("status");
    // HR may write it: its PUT gets the default, as any PUT does.
    expect((await api.put(`/employees/${id}`, { name: "Legacy 4" }, login("hana"))).status).toBe(200);
    expect((await stored(String(id))).status).toBe("active");
  });

  it("PUT to a missing item creates it as a POST would, refusing the same fields", async () => {
    await expectForbidden(await api.put("/employees/6b0000000000000000000001", { name: "New", salary: 1 }, login("sam")), "salary");
    expect((await getAs(api, "hana", "/employees/6b0000000000000000000001")).status).toBe(404);
  });

  it("a unique clash does not quote a value the caller may not read", async () => {
    const first = await json(await api.post("/badges", { login: "a-1", pin: `${SECRET}-1234` }, login("hana")));
    const second = await json(await api.post("/badges", { login: "b-1", pin: `${SECRET}-1234` }, login("hana")));
    expect(first._id).toBeDefined();
    const clash = await api.patch(`/badges/${second._id}`, { login: "a-1" }, login("sam"));
    expect(clash.status).toBe(422);
    const text = await clash.text();
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text)._issues).toMatchObject({ login: "value 'a-1' is not unique" });
    const asHr = await api.patch(`/badges/${second._id}`, { login: "a-1" }, login("hana"));
    expect(await asHr.text()).toContain(`${SECRET}-1234`);
  });
});
