// The two ways the memory store answers a keyset read (FindQuery.after): along a sort index,
// from the position on, until the page is full; or, where no index keeps the order (or a
// narrow filter makes its candidates fewer than the walk would pass), by sorting the filter's
// candidates in MongoDB's order (sort-order.ts) and cutting the page from them.
import type { Doc, Sort } from "../types.ts";
import { sortedPage } from "../sort-order.ts";
import type { Stored } from "./document-table.ts";

/** The read statistics a keyset read adds to (collection.ts ScanStats). */
interface Examined {
  documentsExamined: number;
}

export interface KeysetRead {
  /** The order, `_id` last. */
  sort: Sort;
  after: Doc | null;
  skip: number;
  /** Infinity for no limit. */
  limit: number;
  /** The compiled filter. */
  test: (doc: Doc) => boolean;
}

/** The page from a walk in the read's order that starts at its position. */
export function pageOfWalk(walk: Iterable<Stored>, read: KeysetRead, stats: Examined): Stored[] {
  const page: Stored[] = [];
  if (read.limit <= 0) return page;
  let skipped = 0;
  for (const stored of walk) {
    stats.documentsExamined++;
    if (!read.test(stored.doc)) continue;
    if (skipped < read.skip) skipped++;
    else if (page.push(stored) >= read.limit) break;
  }
  return page;
}

/** The page from documents in any order: those past the position, sorted, then cut. */
export function pageOfCandidates(candidates: Iterable<Stored>, read: KeysetRead, stats: Examined): Stored[] {
  function* matching(): Generator<Stored> {
    for (const stored of candidates) {
      stats.documentsExamined++;
      if (read.test(stored.doc)) yield stored;
    }
  }
  return sortedPage(matching(), (stored) => stored.doc, read.sort, read.after, read.skip, read.limit);
}
