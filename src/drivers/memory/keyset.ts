// The two ways the memory store answers a keyset read (FindQuery.after): along a sort index,
// from the position on, until the page is full; or, where no index keeps the order (or a
// narrow filter makes its candidates fewer than the walk would pass), by sorting the filter's
// candidates in MongoDB's order (sort-order.ts) and cutting the page from them. The driver
// imports this module with the first keyset read, so that stores that never page by cursor
// (a Worker's bundle) do not carry it.
import type { Doc, Filter, Sort } from "../types.ts";
import { sortedPage } from "../sort-order.ts";
import type { Collection } from "./collection.ts";
import type { Stored } from "./document-table.ts";
import { SortIndex } from "./sort-index.ts";

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

/** The sort index of an order an orderOnly spec declares: built on first use, then kept by the collection's writes. */
function orderIndex(collection: Collection, sort: Sort): SortIndex | undefined {
  const key = JSON.stringify(sort);
  const built = collection.sorts.get(key);
  if (built) return built as SortIndex;
  if (!collection.indexSpecs().some((spec) => spec.orderOnly && JSON.stringify(spec.keys) === key)) return undefined;
  const index = new SortIndex(sort, () => collection.documents(), (compare) => collection.sortedList(compare));
  collection.sorts.set(key, index);
  return index;
}

/** The sort index of an order, or of its reverse where reading it backwards gives the same order. */
function sortIndexFor(collection: Collection, sort: Sort): { index: SortIndex; backward: boolean } | null {
  const index = orderIndex(collection, sort);
  if (index) return { index, backward: false };
  const reverse = orderIndex(collection, sort.map(([path, direction]) => [path, direction === 1 ? -1 : 1]));
  return reverse?.reversible ? { index: reverse, backward: true } : null;
}

/**
 * A keyset read's page: along the sort index of its order (or of the reverse order, read
 * backwards), unless the filter's index candidates are fewer than the walk would pass; else
 * the candidates sorted (those given, where the caller has them: an id lookup's one document).
 */
export function keysetPage(collection: Collection, filter: Filter, read: KeysetRead, candidates?: Iterable<Stored>): Stored[] {
  const stats = collection.stats;
  if (candidates) return pageOfCandidates(candidates, read, stats);
  const found = sortIndexFor(collection, read.sort);
  if (found) {
    const plan = collection.plan(filter);
    // The walk passes about size/matches documents per one it keeps.
    const walked = (read.skip + read.limit) * (collection.size / Math.max(1, plan?.size ?? collection.size));
    if (!plan || plan.size * 4 >= walked) {
      stats.indexScans++;
      const { index, backward } = found;
      return pageOfWalk(index.walk(read.after, backward), read, stats);
    }
  }
  return pageOfCandidates(collection.candidates(filter, false), read, stats);
}
