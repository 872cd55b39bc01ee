// The JSON kept per stored version (src/render/kept-json.ts): bounded by generations, and keyed by
// version, whether a read handed out the stored document or a copy of it.
import { describe, expect, it } from "vitest";
import { STORED_VERSION, versionOf, type Doc } from "../../src/drivers/types.ts";
import { RenderedDocuments } from "../../src/render/kept-json.ts";

const writer = { json: (body: unknown) => JSON.stringify(body), separator: ", ", slot: {} };

describe("RenderedDocuments", () => {
  it("keeps texts by stored version, whichever copy of it a read handed out", () => {
    const kept = new RenderedDocuments(writer);
    const stored: Doc = { _id: 1 };
    kept.of(versionOf(stored), "people").listed = new TextEncoder().encode("{}");
    expect(kept.of(versionOf({ [STORED_VERSION]: stored }), "people").listed).toEqual(new TextEncoder().encode("{}"));
    expect(kept.of(versionOf({ _id: 1 }), "people").listed).toBeUndefined();
  });

  it("holds at most two generations, keeping what is read again", () => {
    const kept = new RenderedDocuments(writer, 2);
    const [a, b, c, d] = [{}, {}, {}, {}];
    for (const version of [a, b]) kept.of(version, "x").listed = new Uint8Array([1]);
    // c opens a generation; a, read again, moves into it; d then opens the next, and b is dropped.
    kept.of(c, "x").listed = new Uint8Array([1]);
    expect(kept.of(a, "x").listed).toBeDefined();
    kept.of(d, "x").listed = new Uint8Array([1]);
    expect(kept.of(b, "x").listed).toBeUndefined();
    expect(kept.of(a, "x").listed).toBeDefined();
  });

  it("drops the texts of a version asked for under another base", () => {
    const kept = new RenderedDocuments(writer);
    const version = {};
    const entry = kept.of(version, "accounts/7/invoices");
    entry.listed = entry.item = new TextEncoder().encode("{}");
    entry.etag = "e";
    expect(kept.of(version, "accounts/007/invoices")).toMatchObject({ base: "accounts/007/invoices", listed: undefined, item: undefined, etag: undefined });
  });
});
