import { describe, expect, it } from "vitest";
import { isValidJsonpCallback, wrapJsonp } from "../../src/render/jsonp.ts";

describe("JSONP", () => {
  it("accepts plain identifier paths", () => {
    for (const name of ["cb", "_cb", "$", "jQuery123_456", "ns.fn", "a$b.c_d"]) expect(isValidJsonpCallback(name), name).toBe(true);
  });

  it("refuses anything that could inject script", () => {
    for (const name of ["", "1cb", "alert(1)", "cb;x", "a b", "cb//", "<script>", ".cb", "cb\n", "é"]) {
      expect(isValidJsonpCallback(name), JSON.stringify(name)).toBe(false);
    }
  });

  it("wraps as Eve does", () => {
    expect(wrapJsonp("cb", '{"a": 1}')).toBe('cb({"a": 1})');
  });
});
