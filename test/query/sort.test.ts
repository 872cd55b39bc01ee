import { describe, expect, it } from "vitest";
import { parseSort } from "../../src/query/sort.ts";
import { config, expect400, resource } from "./fixture.ts";

const people = resource(config(), "people");
const sort = (raw: string) => parseSort(raw, people);

describe("parseSort", () => {
  it("reads the comma list, a leading minus descending, spaces trimmed", () => {
    expect(sort("-lastname,firstname")).toEqual([["lastname", -1], ["firstname", 1]]);
    expect(sort(" lastname , -born ")).toEqual([["lastname", 1], ["born", -1]]);
  });

  it("reads Python and JSON lists of pairs (exchange 8)", () => {
    expect(sort('[("lastname",1)]')).toEqual([["lastname", 1]]);
    expect(sort('[("lastname", -1), ("born", 1),]')).toEqual([["lastname", -1], ["born", 1]]);
    expect(sort('[["lastname", -1]]')).toEqual([["lastname", -1]]);
    expect(sort("[('lastname', -1), (\"born\", 1)]")).toEqual([["lastname", -1], ["born", 1]]);
  });

  it("gives null when there is no client sort: empty, [], None, or sorting disabled", () => {
    expect(sort("")).toBeNull();
    expect(sort("[]")).toBeNull();
    expect(sort("None")).toBeNull();
    const unsorted = resource(config((s) => (s.DOMAIN!.people!.sorting = false)), "people");
    expect(parseSort("lastname", unsorted)).toBeNull();
  });

  it.each([
    ['"lastname"', "a quoted string (exchange 11)"],
    ["[['lastname', 1]]", "single quotes in the JSON-style list"],
    ['{"lastname": 1}', "a JSON object"],
    ["'lastname'", "a single-quoted string"],
    ['[("lastname", 2)]', "a direction other than 1 and -1"],
    ['[("lastname")]', "a bare string in the list"],
    ['("lastname", 1)', "one tuple instead of a list"],
    ['[("lastname", 1, 2)]', "a triple"],
    ['[(1, 1)]', "a non-string field"],
    ['[("lastname", 1)', "an unclosed list"],
    ['[[["lastname", 1]]]', "nesting beyond pairs"],
    ["1", "a number"],
    ["-5", "a negative number"],
    ["True", "a constant"],
    ["lastname,", "an empty field"],
    ["-", "a lone minus"],
    ["$natural", "an operator"],
    ["__proto__", "a prototype key"],
    ['[("constructor", 1)]', "a prototype key in a pair"],
    ["a.prototype", "a prototype segment"],
  ])("refuses %s (%s)", (raw) => {
    expect400(() => sort(raw));
  });
});
