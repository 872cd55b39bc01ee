// `unique` left to the store's unique index on POST (src/methods/post.ts, uniqueByIndex): the
// answers must read exactly as when every value is looked up first, whichever path reports it.
import { afterAll, describe, expect, it } from "vitest";
import { json, testApi, type TestApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

const notUnique = (value: string) => ({ lastname: `value '${value}' is not unique` });
const FAILURE = (count: number) => ({ code: 422, message: `Insertion failure: ${count} document(s) contain(s) error(s)` });

async function total(api: TestApi): Promise<number> {
  return Number((await api.get("/people")).headers.get("x-total-count"));
}

describe.each([
  ["without hooks (the index answers)", null],
  ["with an on_insert_people hook (every value looked up first)", "on_insert_people"],
  ["with a generic on_insert hook (every value looked up first)", "on_insert"],
] as const)("POST of a value another document holds, %s", (_name, hook) => {
  const inserted: unknown[] = [];
  // The generic event is called with the resource's name first, as Eve calls it.
  const record = (...args: unknown[]) => void inserted.push(...(args.at(-1) as unknown[]));
  const api = testApi(peopleSettings(), hook ? { hooks: { [hook]: record } } : {});
  afterAll(() => api.close());

  it("refuses one document with Eve's issue, storing nothing", async () => {
    expect((await api.post("/people", { lastname: "Held" })).status).toBe(201);
    const before = await total(api);
    const calls = inserted.length;
    const response = await api.post("/people", { lastname: "Held", firstname: "Other" });
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({ _status: "ERR", _issues: notUnique("Held"), _error: FAILURE(1) });
    expect(await total(api)).toBe(before);
    // A refused document never reaches on_insert.
    expect(inserted.length).toBe(calls);
  });

  it("lists the duplicate beside another rule's issue of the same document", async () => {
    const response = await api.post("/people", { lastname: "Held", firstname: 7 });
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ ...notUnique("Held"), firstname: "must be of string type" });
  });

  it("reports every duplicate of a bulk insert, and a clean document as OK", async () => {
    expect((await api.post("/people", { lastname: "Kept" })).status).toBe(201);
    const before = await total(api);
    const response = await api.post("/people", [{ lastname: "Fresh1" }, { lastname: "Held" }, { lastname: "Kept" }]);
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({
      _status: "ERR",
      _items: [{ _status: "OK" }, { _status: "ERR", _issues: notUnique("Held") }, { _status: "ERR", _issues: notUnique("Kept") }],
      _error: FAILURE(2),
    });
    expect(await total(api)).toBe(before);
    expect((await api.get("/people/Fresh1")).status).toBe(404);
  });

  it("reports a duplicate in a batch another document of which breaks another rule", async () => {
    const response = await api.post("/people", [{ lastname: "Held" }, { lastname: "Fresh2", firstname: 7 }]);
    expect(response.status).toBe(422);
    expect((await json(response))._items).toEqual([
      { _status: "ERR", _issues: notUnique("Held") },
      { _status: "ERR", _issues: { firstname: "must be of string type" } },
    ]);
  });

  it("still stores a batch of new values, and refuses them once stored", async () => {
    expect((await api.post("/people", [{ lastname: "New1" }, { lastname: "New2" }])).status).toBe(201);
    const again = await api.post("/people", [{ lastname: "New3" }, { lastname: "New2" }]);
    expect((await json(again))._items).toEqual([{ _status: "OK" }, { _status: "ERR", _issues: notUnique("New2") }]);
  });
});
