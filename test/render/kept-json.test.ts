// The JSON kept per stored version (src/render/kept-json.ts): bounded by generations, and keyed by
// version, whether a read handed out the stored document or a copy of it.
import { describe, expect, it } from "vitest";
import { STORED_VERSION, versionOf, type Doc } from "../../src/drivers/types.ts";
import { RenderedDocuments, type PageMaking } from "../../src/render/kept-json.ts";

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

  it("decodes a kept item's text only when a Response is made of it, once", () => {
    const kept = new RenderedDocuments(writer);
    const entry = kept.of({}, "people");
    const bytes = kept.keepItem(entry, { _id: 1, name: "é" }, "e");
    // Where the adapter writes the bytes (Node's), nothing asks: no text is held beside them.
    expect(entry.itemText).toBeUndefined();
    const text = kept.itemText(entry);
    expect(text).toBe(new TextDecoder().decode(bytes));
    expect(entry.itemText).toBe(text);
  });

  it("bounds the pages it keeps by their bytes, not their number", () => {
    // The slot for a page's items is written as a NUL character, as the App's writer does.
    const slotWriter = { json: (body: unknown) => JSON.stringify(body).replace('"\\u0000"', "\u0000"), separator: ",", slot: "\u0000" };
    const kept = new RenderedDocuments(slotWriter, 1024, 10_000);
    const making: PageMaking = { build: (stored) => stored, updated: () => new Date(0), around: (list) => ({ _items: list }) };
    const pages = new Map<string, Doc[]>();
    const read = (key: string, size: number) => {
      if (!pages.has(key)) pages.set(key, Array.from({ length: size }, (_, i) => ({ key, i })));
      const documents = pages.get(key)!;
      return kept.page(key, "x", documents, documents, documents.length, making);
    };
    // 200 one-document pages of about 35 bytes: 7 KB, within a generation of 10 KB, so all are
    // kept (counted in pages, 64 a generation, at most 128 were).
    const small = Array.from({ length: 200 }, (_, i) => read(`small${i}`, 1));
    expect(new TextDecoder().decode(small[0]!.body)).toBe('{"_items":[{"key":"small0","i":0}]}');
    expect(small.filter((page, i) => read(`small${i}`, 1) !== page)).toEqual([]);
    // Eight pages of 100 documents (2.4 KB each) are more than two generations hold: the first
    // small pages and the first large ones are gone, the last large one kept.
    const large = Array.from({ length: 8 }, (_, i) => read(`large${i}`, 100));
    expect(large[0]!.body.byteLength).toBeGreaterThan(2_000);
    expect(read("large7", 100)).toBe(large[7]);
    expect(read("large0", 100)).not.toBe(large[0]);
    expect(read("small0", 1)).not.toBe(small[0]);
  });
});
