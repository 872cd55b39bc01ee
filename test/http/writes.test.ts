import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

describe("POST", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("creates one document: 201, Location, meta fields only, defaults applied", async () => {
    const response = await api.post("/people", { firstname: "Ada", lastname: "Lovelace" });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(Object.keys(body).sort()).toEqual(["_created", "_etag", "_id", "_links", "_status", "_updated"]);
    expect(body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(body._etag).toMatch(/^[0-9a-f]{40}$/);
    expect(body._status).toBe("OK");
    expect(body._links).toEqual({ self: { title: "person", href: `people/${body._id}` } });
    expect(response.headers.get("location")).toBe(`http://everest.test/people/${body._id}`);
    const stored = await json(await api.get(`/people/${body._id}`));
    expect(stored).toMatchObject({ firstname: "Ada", lastname: "Lovelace", age: 0, _etag: body._etag });
    expect(stored._created).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  });

  it("creates a list: one result per document, Location of the first", async () => {
    const response = await api.post("/people", [{ lastname: "Bulk1" }, { lastname: "Bulk2" }]);
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body._status).toBe("OK");
    expect(body._items).toHaveLength(2);
    expect(response.headers.get("location")).toBe(`http://everest.test/people/${body._items[0]._id}`);
  });

  it("stores nothing when one document of a list fails, and reports every document", async () => {
    const before = Number((await api.get("/people")).headers.get("x-total-count"));
    const response = await api.post("/people", [{ lastname: "Fine" }, { lastname: 42 }]);
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body._status).toBe("ERR");
    expect(body._items).toEqual([{ _status: "OK" }, { _status: "ERR", _issues: { lastname: "must be of string type" } }]);
    expect(body._error).toEqual({ code: 422, message: "Insertion failure: 1 document(s) contain(s) error(s)" });
    expect(Number((await api.get("/people")).headers.get("x-total-count"))).toBe(before);
  });

  it("refuses two documents of one request sharing a unique value", async () => {
    const response = await api.post("/people", [{ lastname: "Twin" }, { lastname: "Twin" }]);
    expect(response.status).toBe(422);
    expect((await api.get("/people?where={\"lastname\":\"Twin\"}")).headers.get("x-total-count")).toBe("0");
  });

  it("answers 409 for an id that already exists, storing nothing", async () => {
    const created = await json(await api.post("/people", { lastname: "Original" }));
    const response = await api.post("/people", [{ lastname: "Other" }, { _id: created._id, lastname: "Clash" }]);
    expect(response.status).toBe(409);
    expect((await json(response))._error.code).toBe(409);
    expect((await api.get("/people/Other")).status).toBe(404);
  });

  it("accepts a form-encoded document", async () => {
    const response = await api.fetch("/people", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "firstname=Form&lastname=Encoded",
    });
    expect(response.status).toBe(201);
    expect((await json(await api.get("/people/Encoded"))).firstname).toBe("Form");
  });

  it("uses VALIDATION_ERROR_STATUS", async () => {
    const strict = testApi(peopleSettings({ VALIDATION_ERROR_STATUS: 400 }));
    const response = await strict.post("/people", {});
    expect(response.status).toBe(400);
    expect((await json(response))._issues).toEqual({ lastname: "required field" });
    await strict.close();
  });

  it("keeps every field in the response when BANDWIDTH_SAVER is off", async () => {
    const full = testApi(peopleSettings({ BANDWIDTH_SAVER: false }));
    const body = await json(await full.post("/people", { lastname: "Full", firstname: "All" }));
    expect(body).toMatchObject({ lastname: "Full", firstname: "All", age: 0, _status: "OK" });
    await full.close();
  });
});

describe("PATCH", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("merges nested documents and dotted keys, and changes the ETag", async () => {
    const created = await json(await api.post("/people", { lastname: "Patchy", location: { address: "1 Road", city: "Auburn" } }));
    const first = await api.patch(`/people/${created._id}`, { location: { city: "Boston" } }, { "If-Match": created._etag });
    expect(first.status).toBe(200);
    const patched = await json(first);
    expect(patched._etag).not.toBe(created._etag);
    expect(first.headers.get("etag")).toBe(`"${patched._etag}"`);
    const second = await api.patch(`/people/${created._id}`, { "location.address": "2 Street" }, { "If-Match": patched._etag });
    expect(second.status).toBe(200);
    const stored = await json(await api.get(`/people/${created._id}`));
    expect(stored.location).toEqual({ address: "2 Street", city: "Boston" });
    expect(stored._etag).toBe((await json(second))._etag);
  });

  it("replaces sub-documents when MERGE_NESTED_DOCUMENTS is off", async () => {
    const plain = testApi(peopleSettings({ MERGE_NESTED_DOCUMENTS: false }));
    const created = await json(await plain.post("/people", { lastname: "NoMerge", location: { address: "1 Road", city: "Auburn" } }));
    await plain.patch(`/people/${created._id}`, { location: { city: "Boston" } }, { "If-Match": created._etag });
    expect((await json(await plain.get(`/people/${created._id}`))).location).toEqual({ city: "Boston" });
    await plain.close();
  });

  it("requires If-Match (428), refuses a stale one (412), and 404s a missing item", async () => {
    const created = await json(await api.post("/people", { lastname: "Guarded" }));
    const missing = await api.patch(`/people/${created._id}`, { firstname: "x" });
    expect(missing.status).toBe(428);
    expect((await json(missing))._error.message).toBe("To edit a document its etag must be provided using the If-Match header");
    // An empty If-Match is none, as Eve reads it.
    expect((await api.patch(`/people/${created._id}`, { firstname: "x" }, { "If-Match": "" })).status).toBe(428);
    expect((await api.delete(`/people/${created._id}`, { "If-Match": " " })).status).toBe(428);
    const stale = await api.patch(`/people/${created._id}`, { firstname: "x" }, { "If-Match": "0000" });
    expect(stale.status).toBe(412);
    expect((await json(stale))._error.message).toBe("Client and server etags don't match");
    expect((await api.patch("/people/5f0000000000000000000000", { firstname: "x" }, { "If-Match": created._etag })).status).toBe(404);
  });

  it("takes If-Match bare, quoted or weak, and refuses one that only looks alike", async () => {
    let { _id, _etag } = await json(await api.post("/people", { lastname: "Forms" }));
    for (const sent of [(tag: string) => tag, (tag: string) => `"${tag}"`, (tag: string) => ` W/"${tag}" `, (tag: string) => `W/${tag}`]) {
      const response = await api.patch(`/people/${_id}`, { firstname: "x" }, { "If-Match": sent(_etag) });
      expect(response.status).toBe(200);
      ({ _etag } = await json(response));
    }
    for (const unlike of [`"${_etag}`, `${_etag}"`, `w/"${_etag}"`, `""${_etag}""`, `"`]) {
      expect((await api.patch(`/people/${_id}`, { firstname: "y" }, { "If-Match": unlike })).status).toBe(412);
    }
  });

  it("lets exactly one of two writers holding the same ETag win", async () => {
    const created = await json(await api.post("/people", { lastname: "Race" }));
    const results = await Promise.all(
      ["One", "Two"].map((name) => api.patch(`/people/${created._id}`, { firstname: name }, { "If-Match": created._etag })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
  });

  it("answers a validation failure with _issues and _status", async () => {
    const created = await json(await api.post("/people", { lastname: "Invalid" }));
    const response = await api.patch(`/people/${created._id}`, { role: ["boss"] }, { "If-Match": created._etag });
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({ _issues: { role: "unallowed values ['boss']" }, _status: "ERR" });
  });

  it("leaves _created as stored, whatever the body says", async () => {
    const created = await json(await api.post("/people", { lastname: "Created" }));
    const before = await json(await api.get(`/people/${created._id}`));
    for (const value of [{ hacked: true }, "x", "Mon, 01 Jan 1990 00:00:00 GMT"]) {
      const current = await json(await api.get(`/people/${created._id}`));
      const response = await api.patch(`/people/${created._id}`, { _created: value, firstname: "C" }, { "If-Match": current._etag });
      expect(response.status, await response.clone().text()).toBe(200);
    }
    const after = await json(await api.get(`/people/${created._id}`));
    expect(after._created).toBe(before._created);
    expect(after.firstname).toBe("C");
  });

  it("refuses to change _id", async () => {
    const created = await json(await api.post("/people", { lastname: "Immutable" }));
    const response = await api.patch(`/people/${created._id}`, { _id: "5f0000000000000000000000" }, { "If-Match": created._etag });
    expect(response.status).toBe(400);
  });

  it("makes If-Match optional with ENFORCE_IF_MATCH off, and skips ETags with IF_MATCH off", async () => {
    const relaxed = testApi(peopleSettings({ ENFORCE_IF_MATCH: false }));
    const a = await json(await relaxed.post("/people", { lastname: "Relaxed" }));
    expect((await relaxed.patch(`/people/${a._id}`, { firstname: "r" })).status).toBe(200);
    expect((await relaxed.patch(`/people/${a._id}`, { firstname: "r" }, { "If-Match": "stale" })).status).toBe(412);
    await relaxed.close();

    const off = testApi(peopleSettings({ IF_MATCH: false }));
    const b = await json(await off.post("/people", { lastname: "NoEtag" }));
    expect(b._etag).toBeUndefined();
    const item = await off.get(`/people/${b._id}`);
    expect(item.headers.get("etag")).toBeNull();
    expect((await off.patch(`/people/${b._id}`, { firstname: "n" })).status).toBe(200);
    await off.close();
  });
});

describe("PUT", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("replaces the whole document, keeping _created", async () => {
    const created = await json(await api.post("/people", { lastname: "Putty", firstname: "Old", location: { city: "X" } }));
    const response = await api.put(`/people/${created._id}`, { lastname: "Putty", firstname: "New" }, { "If-Match": created._etag });
    expect(response.status).toBe(200);
    expect(response.headers.get("last-modified")).not.toBeNull();
    const stored = await json(await api.get(`/people/${created._id}`));
    expect(stored.firstname).toBe("New");
    expect(stored.location).toBeUndefined();
    expect(stored._created).toBe(created._created);
  });

  it("creates the document at the given id when it does not exist (UPSERT_ON_PUT)", async () => {
    const id = "5f00000000000000000000aa";
    const response = await api.put(`/people/${id}`, { lastname: "Upserted" });
    expect(response.status).toBe(201);
    expect((await json(response))._id).toBe(id);
    expect((await json(await api.get(`/people/${id}`))).lastname).toBe("Upserted");
  });

  it("is 404 on a missing item without upsert", async () => {
    const strict = testApi(peopleSettings({ UPSERT_ON_PUT: false }));
    expect((await strict.put("/people/5f00000000000000000000bb", { lastname: "Nope" })).status).toBe(404);
    await strict.close();
  });

  it("validates the whole document (required fields too)", async () => {
    const created = await json(await api.post("/people", { lastname: "Whole" }));
    const response = await api.put(`/people/${created._id}`, { firstname: "NoLast" }, { "If-Match": created._etag });
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ lastname: "required field" });
  });
});

describe("DELETE", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("deletes an item with If-Match (204) and it is gone", async () => {
    const created = await json(await api.post("/people", { lastname: "Doomed" }));
    expect((await api.delete(`/people/${created._id}`)).status).toBe(428);
    const response = await api.delete(`/people/${created._id}`, { "If-Match": created._etag });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect((await api.get(`/people/${created._id}`)).status).toBe(404);
    expect((await api.delete(`/people/${created._id}`, { "If-Match": created._etag })).status).toBe(404);
  });

  it("deletes a whole collection; an empty one is 204 too (Eve), an item in it 404", async () => {
    await api.post("/people", [{ lastname: "C1" }, { lastname: "C2" }]);
    expect((await api.delete("/people")).status).toBe(204);
    expect((await api.get("/people")).headers.get("x-total-count")).toBe("0");
    const again = await api.delete("/people");
    expect(again.status).toBe(204);
    expect(await again.text()).toBe("");
    expect((await api.delete("/people/5f0c1a2b3c4d5e6f70819203", { "If-Match": "x" })).status).toBe(404);
    expect((await api.patch("/people/5f0c1a2b3c4d5e6f70819203", { lastname: "x" }, { "If-Match": "x" })).status).toBe(404);
  });
});
