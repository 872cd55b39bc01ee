// The order a cursor read pages in, and the projection it reads with: the sort's fields are
// read even where the client's projection leaves them out, and taken out again afterwards, so
// the client gets what its projection asked for.
import { describe, expect, it } from "vitest";
import { keysetSort, withSortFields } from "../../src/query/keyset.ts";
import type { Doc, Projection, Sort } from "../../src/drivers/types.ts";

/** What a read with `projection` would return of `doc` (a small inclusive/exclusive projector for plain data). */
function project(doc: Doc, projection: Projection | null): Doc {
  if (!projection) return structuredClone(doc);
  const inclusive = Object.entries(projection).some(([field, flag]) => flag === 1 && field !== "_id");
  const copy = structuredClone(doc);
  const has = (path: string) => Object.keys(projection).some((field) => field === path || field.startsWith(path + ".") || path.startsWith(field + "."));
  const walk = (value: unknown, prefix: string): unknown => {
    if (Array.isArray(value)) return value.map((element) => walk(element, prefix));
    if (!value || typeof value !== "object") return value;
    const out: Doc = {};
    for (const [key, inner] of Object.entries(value as Doc)) {
      const path = prefix ? `${prefix}.${key}` : key;
      const flag = projection[path];
      if (inclusive) {
        if (path === "_id" && projection._id !== 0) out[key] = inner;
        else if (flag === 1) out[key] = inner;
        else if (has(path) && typeof inner === "object") out[key] = walk(inner, path);
      } else if (flag !== 0) out[key] = typeof inner === "object" ? walk(inner, path) : inner;
    }
    return out;
  };
  return walk(copy, "") as Doc;
}

const doc: Doc = { _id: 1, name: "n", age: 3, a: { b: 1, c: 2, d: { e: 5 } }, list: [{ x: 1, y: 2 }, { x: 3, y: 4 }] };

describe("keysetSort", () => {
  it("ends at _id in the last key's direction, and stops there", () => {
    expect(keysetSort(null)).toEqual([["_id", 1]]);
    expect(keysetSort([["age", -1]])).toEqual([["age", -1], ["_id", -1]]);
    expect(keysetSort([["age", 1], ["_id", -1], ["name", 1]])).toEqual([["age", 1], ["_id", -1]]);
  });
});

describe("withSortFields", () => {
  const cases: Array<[string, Projection | null, string[]]> = [
    ["no projection", null, ["age"]],
    ["a projection that has the sort's fields", { name: 1, age: 1 }, ["age"]],
    ["an inclusive one without them", { name: 1 }, ["age", "a.d.e"]],
    ["one without _id", { name: 1, _id: 0 }, ["age"]],
    ["one asking below the sort field", { "a.b": 1, name: 1 }, ["a"]],
    ["one asking beside it under the same parent", { "a.c": 1 }, ["a.b"]],
    ["through an array", { name: 1 }, ["list.x"]],
    ["an exclusive one hiding a sort field", { age: 0, "a.d": 0 }, ["age", "a.d.e"]],
    ["an exclusive one hiding its parent", { a: 0 }, ["a.b"]],
  ];
  for (const [label, projection, paths] of cases) {
    it(`reads the sort's fields and gives back the client's projection: ${label}`, () => {
      const sort: Sort = keysetSort(paths.map((path) => [path, 1]));
      const { projection: read, restore } = withSortFields(projection, sort);
      const fetched = project(doc, read);
      for (const path of paths) expect(path.split(".").reduce<unknown>((value, key) => (Array.isArray(value) ? value.map((v) => (v as Doc)[key]) : (value as Doc | undefined)?.[key]), fetched), path).not.toBeUndefined();
      expect(fetched._id).toBe(1);
      restore?.(fetched);
      expect(fetched).toEqual(project(doc, projection));
    });
  }
});
