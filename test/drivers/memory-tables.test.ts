// The memory store's own tables, held to what a Map would answer: the sharded map on both sides
// of its split (made small here so a test reaches it), and the document table's natural order
// through removals and the renumbering they lead to.
import { describe, expect, it } from "vitest";
import { DocumentTable } from "../../src/drivers/memory/document-table.ts";
import { ShardedMap } from "../../src/drivers/memory/sharded-map.ts";

/** Distinct keys of the forms the store makes: an ObjectId's 13 characters, strings, numbers, dates. */
function keyOf(i: number): string {
  switch (i % 4) {
    case 0:
      return String.fromCharCode(0, 0x6b, 1, 2, 3, 4, 5, 6, 7, (i >> 16) & 255, (i >> 8) & 255, i & 255, 0);
    case 1:
      return `s:person ${i}`;
    case 2:
      return `n:${i}`;
    default:
      return `d:${1_700_000_000_000 + i * 1000}`;
  }
}

describe("ShardedMap", () => {
  it("answers as a Map does through sets, overwrites and deletes, before and after it splits", () => {
    const sharded = new ShardedMap<number>(64);
    const reference = new Map<string, number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 20_000; step++) {
      const key = keyOf(Math.floor(random() * 3_000));
      const roll = random();
      if (roll < 0.6) {
        sharded.set(key, step);
        reference.set(key, step);
      } else if (roll < 0.8) {
        expect(sharded.delete(key)).toBe(reference.delete(key));
      } else {
        expect(sharded.get(key)).toBe(reference.get(key));
      }
      expect(sharded.size).toBe(reference.size);
    }
    expect(reference.size).toBeGreaterThan(64);
    for (let i = 0; i < 3_000; i++) expect(sharded.get(keyOf(i))).toBe(reference.get(keyOf(i)));
  });
});

describe("DocumentTable", () => {
  const ids = (table: DocumentTable) => Array.from(table.values(), (stored) => stored.doc.n);

  it("keeps insertion order through removals, renumbering once holes outnumber documents", () => {
    const table = new DocumentTable(64);
    const expected: number[] = [];
    for (let n = 0; n < 5_000; n++) {
      table.add(keyOf(n), { n });
      expected.push(n);
    }
    // Removing two of every three leaves more holes than documents: the order is renumbered.
    for (let n = 0; n < 5_000; n++) {
      if (n % 3 !== 0) {
        expect(table.delete(keyOf(n))).toBe(true);
        expected.splice(expected.indexOf(n), 1);
      }
    }
    expect(table.delete(keyOf(1))).toBe(false);
    for (let n = 5_000; n < 6_000; n++) {
      table.add(keyOf(n), { n });
      expected.push(n);
    }
    expect(table.size).toBe(expected.length);
    expect(ids(table)).toEqual(expected);
    const seqs = Array.from(table.values(), (stored) => stored.seq);
    expect(seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!)).toBe(true);
    // Renumbered on the way: without it the last place would be 5,999, most of the rest holes.
    expect(seqs.at(-1)).toBeLessThan(expected.length * 2);
    for (const n of [0, 3, 4_998, 5_500]) expect(table.get(keyOf(n))?.doc.n).toBe(n);
    expect(table.has(keyOf(4))).toBe(false);
  });
});
