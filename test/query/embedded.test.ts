import { describe, expect, it } from "vitest";
import { parseEmbedded } from "../../src/query/embedded.ts";
import { expect400 } from "./fixture.ts";

describe("parseEmbedded", () => {
  it("reads a JSON object of 1s and 0s (exchange 34)", () => {
    expect(parseEmbedded('{"owner":1}')).toEqual({ owner: 1 });
    expect(parseEmbedded('{"a": 0, "b": true, "c": false, "d.e": 1}')).toEqual({ a: 0, b: 1, c: 0, "d.e": 1 });
  });

  it("ignores other values and gives {} when absent", () => {
    expect(parseEmbedded('{"a": 2, "b": "yes"}')).toEqual({});
    expect(parseEmbedded(null)).toEqual({});
    expect(parseEmbedded("")).toEqual({});
  });

  it.each(["owner", "[1]", "null", "{'owner': 1}", '"owner"', '{"__proto__": 1}', '{"a.constructor": 1}'])(
    "refuses %s with Eve's message",
    (raw) => {
      expect(expect400(() => parseEmbedded(raw)).message).toBe("Unable to parse `embedded` clause");
    },
  );
});
