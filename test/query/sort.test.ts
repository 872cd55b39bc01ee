import { describe, expect, it } from "vitest";
import { parseSort } from "../../src/query/sort.ts";
import { config, rejects400, resource } from "./fixture.ts";

const people = resource(config(), "people");
/** A promise, as parseSort is one for anything but a comma list (the literal parser is imported on first use). */
const sort = async (raw: string) => parseSort(raw, people, 64);

describe("parseSort", () => {
  it("reads the comma list, a leading minus descending, spaces trimmed", async () => {
    expect(await sort("-lastname,firstname")).toEqual([["lastname", -1], ["firstname", 1]]);
    expect(await sort(" lastname , -born ")).toEqual([["lastname", 1], ["born", -1]]);
    expect(await sort("location.city,_x1")).toEqual([["location.city", 1], ["_x1", 1]]);
    // A constant among names is a name, as literal_eval refuses the whole and Eve falls back to the list.
    expect(await sort("None, -True")).toEqual([["None", 1], ["True", -1]]);
  });

  it("reads Python and JSON lists of pairs (exchange 8)", async () => {
    expect(await sort('[("lastname",1)]')).toEqual([["lastname", 1]]);
    expect(await sort('[("lastname", -1), ("born", 1),]')).toEqual([["lastname", -1], ["born", 1]]);
    expect(await sort('[["lastname", -1]]')).toEqual([["lastname", -1]]);
    expect(await sort("[('lastname', -1), (\"born\", 1)]")).toEqual([["lastname", -1], ["born", 1]]);
  });

  it("gives null when there is no client sort: empty, [], None, or sorting disabled", async () => {
    expect(await sort("")).toBeNull();
    expect(await sort("[]")).toBeNull();
    expect(await sort("None")).toBeNull();
    const unsorted = resource(config((s) => (s.DOMAIN!.people!.sorting = false)), "people");
    expect(parseSort("lastname", unsorted, 64)).toBeNull();
    expect(await parseSort("[(\"lastname\", 1)]", unsorted, 64)).toBeNull();
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
  ])("refuses %s (%s)", async (raw) => {
    await rejects400(() => sort(raw));
  });
});
