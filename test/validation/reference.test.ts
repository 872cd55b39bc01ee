// The `_issues` of the recorded Eve 2.3.1 exchanges (test/fixtures/reference), from the validator
// alone: same settings, same stored person, same request bodies.
import { readFileSync } from "node:fs";
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { loadExchanges, REFERENCE_DIR } from "../support/exchanges.ts";
import { ENGINES, harness } from "./support.ts";

const settings = JSON.parse(readFileSync(`${REFERENCE_DIR}settings.json`, "utf8"));
const exchanges = new Map(loadExchanges().map((e) => [e.number, e]));
const DOE = { _id: new ObjectId("6b017f44150443131587b088"), firstname: "Johnny", lastname: "Doe", role: ["author"] };

function recorded(number: number) {
  const exchange = exchanges.get(number)!;
  return { body: JSON.parse(exchange.request.body!), response: JSON.parse(exchange.response.body) };
}

describe.each(ENGINES)("reference exchanges (%s engine)", (engine) => {
  const h = harness(settings, { engine, store: { people: [DOE] } });

  it("23. PATCH with a value not allowed in a list", async () => {
    const { body, response } = recorded(23);
    expect((await h.validate("people", body, "PATCH", { original: DOE })).issues).toEqual(response._issues);
  });

  it.each([24, 25])("%i. POST with validation errors", async (number) => {
    const { body, response } = recorded(number);
    const result = await h.validate("people", body, "POST");
    expect(result.issues).toEqual(response._issues);
    expect(JSON.stringify(result.issues)).toBe(JSON.stringify(response._issues));
  });

  it("26. bulk POST with one document failing", async () => {
    const { body, response } = recorded(26);
    const results = await h.validateMany("people", body);
    expect(results.map((r) => (r.valid ? { _status: "OK" } : { _status: "ERR", _issues: r.issues }))).toEqual(response._items);
  });

  it("33. POST with a dangling data_relation", async () => {
    const { body, response } = recorded(33);
    expect((await h.validate("works", body, "POST")).issues).toEqual(response._issues);
  });
});
