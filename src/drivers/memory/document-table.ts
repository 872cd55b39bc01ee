// A collection's documents by id key, in natural (insertion) order. One Map would give both, but
// every insert would write that one large Map (sharded-map.ts says what that costs on Bun), so
// the keys live in a ShardedMap and the order in chunks of fixed size, where an insert writes
// only the last chunk.
import type { Doc } from "../types.ts";
import { ShardedMap } from "./sharded-map.ts";

/** A stored document, its id key, and its place in the natural order. */
export interface Stored {
  doc: Doc;
  seq: number;
  readonly key: string;
}

/** Documents per chunk of the natural order: a power of two, so a place splits with shifts. */
const CHUNK_BITS = 10;
const CHUNK = 1 << CHUNK_BITS;

export class DocumentTable {
  private readonly byKey: ShardedMap<Stored>;
  /** Chunk i holds the documents whose seq is in [i·CHUNK, (i+1)·CHUNK); a removed one leaves a hole. */
  private chunks: Array<Array<Stored | undefined>> = [];
  private nextSeq = 0;

  /** @param splitAt when its key map splits (sharded-map.ts); tests make it small. */
  constructor(splitAt?: number) {
    this.byKey = new ShardedMap(splitAt);
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Stored | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.get(key) !== undefined;
  }

  /** Appends a document whose key the table does not hold. */
  add(key: string, doc: Doc): void {
    // A literal: entries live as long as their documents, and V8 pretenures a literal's
    // allocation site once most of what it makes survives (docs/performance.md).
    const stored: Stored = { doc, seq: 0, key };
    this.place(stored);
    this.byKey.set(key, stored);
  }

  /** Removes the document with this key, if held; whether it was. */
  delete(key: string): boolean {
    const stored = this.byKey.get(key);
    if (!stored) return false;
    this.byKey.delete(key);
    this.chunks[stored.seq >> CHUNK_BITS]![stored.seq & (CHUNK - 1)] = undefined;
    // Once holes outnumber documents, the order is renumbered without them: a collection emptied
    // by deletes is not walked hole by hole, and the renumbering is paid for by those deletes.
    if (this.nextSeq > CHUNK && this.byKey.size * 2 < this.nextSeq) this.compact();
    return true;
  }

  /** The documents in natural order. */
  *values(): Generator<Stored> {
    for (const chunk of this.chunks) {
      for (const stored of chunk) if (stored) yield stored;
    }
  }

  /**
   * Up to `limit` documents from the `skip`th in natural order, and how many stored documents
   * were looked at. With no document removed the `skip`th is at place `skip`, so a page at any
   * depth costs what the first does; otherwise the walk counts past the removed from the start.
   * A loop, not values(): an unfiltered page read this way took a tenth of Deno's server time in
   * generator steps.
   */
  slice(skip: number, limit: number): { found: Stored[]; examined: number } {
    const found: Stored[] = [];
    const end = this.nextSeq;
    let seq = end === this.byKey.size ? skip : 0;
    let toSkip = skip - seq;
    let examined = 0;
    for (; seq < end && found.length < limit; seq++) {
      const stored = this.chunks[seq >> CHUNK_BITS]![seq & (CHUNK - 1)];
      if (!stored) continue;
      examined++;
      if (toSkip > 0) toSkip--;
      else found.push(stored);
    }
    return { found, examined };
  }

  private compact(): void {
    const live = [...this.values()];
    this.chunks = [];
    this.nextSeq = 0;
    for (const stored of live) this.place(stored);
  }

  /** Gives the document the next place in the natural order. */
  private place(stored: Stored): void {
    stored.seq = this.nextSeq++;
    const chunk = this.chunks[stored.seq >> CHUNK_BITS];
    if (chunk) chunk.push(stored);
    else this.chunks.push([stored]);
  }
}
