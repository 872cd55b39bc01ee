// The seeded random documents the differential driver tests draw from (the memory driver's
// indexed vs unindexed answers, the sqlite driver vs the memory driver): a failing case can be
// replayed from its seed.
import type { Doc } from "../../../src/drivers/types.ts";

/** A deterministic pseudo-random source in [0, 1). */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values drawn from `scalars` (alone, in pairs, empty lists, sub-documents) and documents holding them in `v` and `o`. */
export function randomDocuments(rand: () => number, scalars: readonly unknown[]) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const value = (): unknown => {
    const r = rand();
    if (r < 0.6) return pick(scalars);
    if (r < 0.8) return [pick(scalars), pick(scalars)];
    if (r < 0.9) return [];
    return { x: pick(scalars) };
  };
  const document = (): Doc => {
    const doc: Doc = {};
    if (rand() < 0.85) doc.v = value();
    if (rand() < 0.7) doc.o = rand() < 0.5 ? { x: value() } : [{ x: value() }, { y: 1 }];
    return doc;
  };
  return { pick, value, document };
}
