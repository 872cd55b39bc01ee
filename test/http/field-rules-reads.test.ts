// Field rules on every way a document is read (docs/auth.md, "Field rules"): HR (hana) is shown
// every field; staff (sam) never a salary, an ssn in the profile dict, a badge's cost in the
// badges list, a code or a pin — but its own review, through a field_access hook; kim, staff and
// auditor, the codes too. Each read path is its own test.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, type TestApi } from "./../support/api.ts";
import { COST, expectNoHiddenValue, getAs, login, SALARY, SECRET, seed, seededApi, type Seeded } from "./field-rules/data.ts";

let api: TestApi;
let ids: Seeded;

beforeAll(async () => ({ api, ids } = await seededApi()));
afterAll(() => api.close());

describe("field rules on reads", () => {
  it("item GET: each caller is shown the fields its roles may read, at any depth", async () => {
    const asHr = await json(await getAs(api, "hana", `/employees/${ids.sam}`));
    expect(asHr).toMatchObject({ salary: SALARY.sam, profile: { city: "Bergen", ssn: `${SECRET}-ssn-sam` }, badges: [{ label: "bronze", cost: COST }], code: `${SECRET}-code-sam` });

    const response = await getAs(api, "sam", `/employees/${ids.sam}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    const own = JSON.parse(text);
    expect(own).not.toHaveProperty("salary");
    expect(own).not.toHaveProperty("code");
    expect(own.profile).toEqual({ city: "Bergen" });
    expect(own.badges).toEqual([{ label: "bronze" }]);
    // The hook: an employee reads their own review, no one else's.
    expect(own.review).toBe("Sam's own review");
    expect(await json(await getAs(api, "sam", `/employees/${ids.boss}`))).not.toHaveProperty("review");

    // Roles add up: an auditor who is also staff reads the codes, not the salaries.
    const asAuditor = await json(await getAs(api, "kim", `/employees/${ids.sam}`));
    expect(asAuditor.code).toBe(`${SECRET}-code-sam`);
    expect(asAuditor).not.toHaveProperty("salary");
  });

  it("collection GET: every document of the page, with its own hook decisions", async () => {
    const response = await getAs(api, "sam", "/employees");
    const text = await response.text();
    expectNoHiddenValue(text);
    const items = JSON.parse(text)._items;
    expect(items.map((item: { name: string }) => item.name).sort()).toEqual(["Boss", "Sam"]);
    expect(items.find((item: { name: string }) => item.name === "Sam").review).toBe("Sam's own review");
    expect(items.find((item: { name: string }) => item.name === "Boss")).not.toHaveProperty("review");
    const asHr = await json(await getAs(api, "hana", "/employees"));
    expect(asHr._items.map((item: { salary: number }) => item.salary).sort()).toEqual([SALARY.boss, SALARY.sam]);
  });

  it("HEAD: the headers of the GET a caller would get, its own ETag and no Last-Modified", async () => {
    for (const path of [`/employees/${ids.sam}`, "/employees"]) {
      const head = await api.fetch(path, { method: "HEAD", headers: login("sam") });
      const get = await getAs(api, "sam", path);
      expect(head.status).toBe(200);
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
      expect(head.headers.get("last-modified")).toBeNull();
      expect(await head.text()).toBe("");
    }
    expect((await api.fetch(`/employees/${ids.sam}`, { method: "HEAD", headers: login("hana") })).headers.get("last-modified")).not.toBeNull();
  });

  it("XML: the same fields as JSON", async () => {
    const response = await getAs(api, "sam", `/employees/${ids.boss}`, { Accept: "application/xml" });
    expect(response.headers.get("content-type")).toContain("xml");
    const text = await response.text();
    expect(text).toContain("Oslo");
    expectNoHiddenValue(text);
    expect(await (await getAs(api, "hana", `/employees/${ids.boss}`, { Accept: "application/xml" })).text()).toContain(String(SALARY.boss));
  });

  it("JSONP: the same fields as JSON", async () => {
    const text = await (await getAs(api, "sam", "/employees?callback=show")).text();
    expect(text.startsWith("show(")).toBe(true);
    expect(text).toContain("Oslo");
    expectNoHiddenValue(text);
  });

  it("embedded documents of the same resource follow its rules", async () => {
    const response = await getAs(api, "sam", `/employees/${ids.sam}?embedded={"manager":1}`);
    const text = await response.text();
    expectNoHiddenValue(text);
    const manager = JSON.parse(text).manager;
    expect(manager).toMatchObject({ name: "Boss", profile: { city: "Oslo" }, badges: [{ label: "gold" }, { label: "silver" }] });
    expect(manager).not.toHaveProperty("salary");
    const asHr = await json(await getAs(api, "hana", `/employees/${ids.sam}?embedded={"manager":1}`));
    expect(asHr.manager.salary).toBe(SALARY.boss);
  });

  it("embedded documents of another resource follow theirs, beside the embedding one's", async () => {
    const posted = await api.post("/teams", { name: "Core", budget: 970009, lead: ids.boss }, login("hana"));
    const team = (await json(posted))._id;
    for (const path of [`/teams/${team}?embedded={"lead":1}`, `/teams?embedded={"lead":1}`]) {
      const text = await (await getAs(api, "sam", path)).text();
      expectNoHiddenValue(text);
      expect(text).not.toContain("970009");
      expect(text).toContain("Oslo");
    }
    const asHr = await json(await getAs(api, "hana", `/teams/${team}?embedded={"lead":1}`));
    expect(asHr).toMatchObject({ budget: 970009, lead: { salary: SALARY.boss } });
  });

  it("write responses (BANDWIDTH_SAVER off): what the writer may read of what it wrote", async () => {
    const posted = await api.post("/employees", { name: "Noor", profile: { city: "Rome" } }, login("sam"));
    expect(posted.status).toBe(201);
    const created = await json(posted);
    expect(created).toMatchObject({ name: "Noor", status: "active", profile: { city: "Rome" } });

    const patched = await api.patch(`/employees/${ids.boss}`, { name: "Boss" }, login("sam"));
    expect(patched.status).toBe(200);
    const text = await patched.text();
    expectNoHiddenValue(text);
    // The ETag it is answered with is the one its next GET shows.
    const again = await getAs(api, "sam", `/employees/${ids.boss}`);
    expect(patched.headers.get("etag")).toBe(again.headers.get("etag"));
    expect(JSON.parse(text)._etag).toBe((await json(again))._etag);

    const put = await api.put(`/employees/${created._id}`, { name: "Noor", profile: { city: "Milan" } }, login("sam"));
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ name: "Noor", profile: { city: "Milan" } });
  });

  it("?version=N, ?version=all and ?version=diffs: every version, as the caller may see it", async () => {
    const records = await seed(api, "records");
    const changed = await api.patch(`/records/${records.boss}`, { salary: SALARY.boss + 1000, profile: { city: "Oslo", ssn: `${SECRET}-ssn-2` } }, login("hana"));
    expect(changed.status).toBe(200);
    for (const query of ["version=1", "version=2", "version=all", "version=diffs"]) {
      const response = await getAs(api, "sam", `/records/${records.boss}?${query}`);
      expect(response.status, query).toBe(200);
      const text = await response.text();
      expectNoHiddenValue(text);
      expect(text).not.toContain(String(SALARY.boss + 1000));
    }
    // The second version changed only what sam may not see: its diff shows none of it.
    const diffs = (await json(await getAs(api, "sam", `/records/${records.boss}?version=diffs`)))._items;
    expect(diffs[1]).not.toHaveProperty("salary");
    expect(diffs[1]).not.toHaveProperty("profile");
    const asHr = (await json(await getAs(api, "hana", `/records/${records.boss}?version=diffs`)))._items;
    expect(asHr[1].salary).toBe(SALARY.boss + 1000);
  });

  it("the oplog endpoint: each entry's changes under the rules of the resource they were made in", async () => {
    const response = await getAs(api, "sam", "/oplog?max_results=100");
    expect(response.status).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    const entries = JSON.parse(text)._items;
    const posted = entries.find((entry: { o: string; c?: { name?: string } }) => entry.o === "POST" && entry.c?.name === "Boss");
    expect(posted.c.profile).toEqual({ city: "Oslo" });
    const asHr = await (await getAs(api, "hana", "/oplog?max_results=100")).text();
    expect(asHr).toContain(String(SALARY.boss));
  });

  it("aggregations: stored documents they hand out lose what the caller may not read, and their stored ETag", async () => {
    const path = '/roster?aggregate={"$status":"active"}';
    const response = await getAs(api, "sam", path);
    expect(response.status).toBe(200);
    const text = await response.text();
    expectNoHiddenValue(text);
    const items = JSON.parse(text)._items;
    expect(items.map((item: { name: string }) => item.name)).toContain("Boss");
    for (const item of items) expect(item).not.toHaveProperty("_etag");
    expect(await (await getAs(api, "hana", path)).text()).toContain(String(SALARY.boss));
  });

  it("aggregations that nest whole stored documents ($push of $$ROOT, $replaceRoot): withheld at any depth", async () => {
    for (const name of ["grouped", "wrapped"]) {
      const path = `/${name}?aggregate={"$status":"active"}`;
      const response = await getAs(api, "sam", path);
      expect(response.status).toBe(200);
      const text = await response.text();
      expectNoHiddenValue(text);
      expect(text).toContain("Boss");
      expect(text).not.toContain('"_etag"');
      expect(await (await getAs(api, "hana", path)).text()).toContain(String(SALARY.boss));
    }
  });

  it("the schema endpoint: the whole schema, which names fields and roles but holds no value", async () => {
    const schema = await json(await getAs(api, "sam", "/schema/employees"));
    expect(schema.salary).toEqual({ type: "integer", allowed_read_roles: ["hr"], allowed_write_roles: ["hr"] });
    expect(schema.review.field_access).toBe("<callable>");
  });

  it("media files of a field a caller may not read: neither its URL nor the file by its id", async () => {
    const form = new FormData();
    form.append("title", "contract");
    form.append("scan", new File([`${SECRET}-scan-bytes`], "scan.txt", { type: "text/plain" }));
    const posted = await api.fetch("/scans", { method: "POST", body: form, headers: login("hana") });
    expect(posted.status, await posted.clone().text()).toBe(201);
    const id = (await json(posted))._id;
    const asHr = await json(await getAs(api, "hana", `/scans/${id}`));
    const url = new URL(asHr.scan, "http://everest.test").pathname;
    expect((await getAs(api, "hana", url)).status).toBe(200);
    const asStaff = await json(await getAs(api, "sam", `/scans/${id}`));
    expect(asStaff).not.toHaveProperty("scan");
    const file = await getAs(api, "sam", url);
    expect(file.status).toBe(404);
    expect(await file.text()).not.toContain(SECRET);
  });
});
