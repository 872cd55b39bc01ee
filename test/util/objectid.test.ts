import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { objectIdHex, objectIdWords } from "../../src/util/objectid.ts";

describe("objectIdHex", () => {
  it("writes what toHexString writes, for new ids and for the extreme bytes", () => {
    const ids = Array.from({ length: 5_000 }, () => new ObjectId());
    ids.push(new ObjectId("000000000000000000000000"), new ObjectId("ffffffffffffffffffffffff"), new ObjectId("0123456789abcdefFEDCBA98"));
    for (const id of ids) expect(objectIdHex(id)).toBe(id.toHexString());
  });

  it("reads bson 7's four numbers, and any other id through its toHexString", () => {
    expect(objectIdWords(new ObjectId())).not.toBeNull();
    const other = { toHexString: () => "6b017f44150443131587b088" };
    expect(objectIdWords(other)).toBeNull();
    expect(objectIdHex(other)).toBe("6b017f44150443131587b088");
  });
});
