// The JSON kept per stored version (src/read/rendered.ts): bounded by generations, and keyed by
// version, not by the document a read handed out.
import { describe, expect, it } from "vitest";
import { STORED_VERSION, type SharedDoc } from "../../src/drivers/types.ts";
import { JsonText } from "../../src/render/pyjson.ts";
import { RenderedDocuments } from "../../src/read/rendered.ts";

const read = (version: object): SharedDoc => ({ [STORED_VERSION]: version });

describe("RenderedDocuments", () => {
  it("keeps texts by stored version, whichever copy of it a read handed out", () => {
    const kept = new RenderedDocuments();
    const version = {};
    kept.of(read(version), "people")!.listed = new JsonText("{}");
    expect(kept.of(read(version), "people")!.listed?.text).toBe("{}");
    expect(kept.of(read({}), "people")!.listed).toBeUndefined();
    expect(kept.of({}, "people")).toBeUndefined();
  });

  it("holds at most two generations, keeping what is read again", () => {
    const kept = new RenderedDocuments(2);
    const [a, b, c, d] = [{}, {}, {}, {}];
    for (const version of [a, b]) kept.of(read(version), "x")!.listed = new JsonText("v");
    // c opens a generation; a, read again, moves into it; d then opens the next, and b is dropped.
    kept.of(read(c), "x")!.listed = new JsonText("v");
    expect(kept.of(read(a), "x")!.listed).toBeDefined();
    kept.of(read(d), "x")!.listed = new JsonText("v");
    expect(kept.of(read(b), "x")!.listed).toBeUndefined();
    expect(kept.of(read(a), "x")!.listed).toBeDefined();
  });

  it("drops the texts of a version asked for under another base", () => {
    const kept = new RenderedDocuments();
    const version = {};
    const entry = kept.of(read(version), "accounts/7/invoices")!;
    entry.listed = entry.item = new JsonText("{}");
    entry.etag = "e";
    expect(kept.of(read(version), "accounts/007/invoices")).toMatchObject({ base: "accounts/007/invoices", listed: undefined, item: undefined, etag: undefined });
  });
});
