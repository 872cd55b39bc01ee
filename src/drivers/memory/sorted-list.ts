// A sorted list kept as a list of bounded chunks (the layout of Python's sortedcontainers), so
// that an insert or removal moves at most a chunk's worth of elements instead of the whole
// list, while lookups stay binary searches.

/** A monotone predicate over the order: false for a prefix of the list, true after it. */
export type Boundary<T> = (item: T) => boolean;

interface Position {
  chunk: number;
  offset: number;
}

export class SortedList<T> {
  private readonly chunks: T[][] = [];
  private count = 0;

  constructor(
    private readonly compare: (a: T, b: T) => number,
    private readonly load = 512,
  ) {}

  get size(): number {
    return this.count;
  }

  insert(item: T): void {
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.count = 1;
      return;
    }
    const position = this.locate((x) => this.compare(x, item) >= 0);
    // Past the end: the item goes at the end of the last chunk.
    const index = Math.min(position.chunk, this.chunks.length - 1);
    const chunk = this.chunks[index]!;
    const offset = position.chunk === this.chunks.length ? chunk.length : position.offset;
    chunk.splice(offset, 0, item);
    this.count++;
    if (chunk.length > 2 * this.load) this.chunks.splice(index + 1, 0, chunk.splice(this.load));
  }

  /** Removes one element comparing equal to item; false when there is none. */
  remove(item: T): boolean {
    const { chunk: index, offset } = this.locate((x) => this.compare(x, item) >= 0);
    const chunk = this.chunks[index];
    if (!chunk || offset >= chunk.length || this.compare(chunk[offset]!, item) !== 0) return false;
    chunk.splice(offset, 1);
    this.count--;
    this.rebalance(index);
    return true;
  }

  /** Elements from the first one satisfying `from` up to, not including, the first satisfying `to`. */
  *between(from: Boundary<T>, to: Boundary<T>): Generator<T> {
    let { chunk, offset } = this.locate(from);
    const end = this.locate(to);
    while (chunk < end.chunk || (chunk === end.chunk && offset < end.offset)) {
      const items = this.chunks[chunk]!;
      if (offset >= items.length) {
        chunk++;
        offset = 0;
        continue;
      }
      yield items[offset++]!;
    }
  }

  /** Elements before the first one satisfying `to`, the last of them first. */
  *descendingBefore(to: Boundary<T>): Generator<T> {
    let { chunk, offset } = this.locate(to);
    for (;;) {
      if (offset === 0) {
        if (chunk === 0) return;
        offset = this.chunks[--chunk]!.length;
        continue;
      }
      yield this.chunks[chunk]![--offset]!;
    }
  }

  /** Sums only the chunks the range spans, so counting a narrow range stays flat as the list grows. */
  countBetween(from: Boundary<T>, to: Boundary<T>): number {
    const start = this.locate(from);
    const end = this.locate(to);
    if (end.chunk < start.chunk) return 0;
    let count = end.offset - start.offset;
    for (let i = start.chunk; i < end.chunk; i++) count += this.chunks[i]!.length;
    return Math.max(0, count);
  }

  private locate(boundary: Boundary<T>): Position {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (boundary(chunk[chunk.length - 1]!)) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.chunks.length) return { chunk: lo, offset: 0 };
    const chunk = this.chunks[lo]!;
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (boundary(chunk[mid]!)) b = mid;
      else a = mid + 1;
    }
    return { chunk: lo, offset: a };
  }

  /** Drops empty chunks and folds small ones into a neighbour, so the chunk count tracks the size. */
  private rebalance(index: number): void {
    const chunk = this.chunks[index]!;
    if (chunk.length === 0) {
      this.chunks.splice(index, 1);
      return;
    }
    if (chunk.length >= this.load / 4 || this.chunks.length === 1) return;
    const neighbour = index > 0 ? index - 1 : index + 1;
    const [first, second] = neighbour < index ? [neighbour, index] : [index, neighbour];
    const merged = this.chunks[first]!.concat(this.chunks[second]!);
    if (merged.length > 2 * this.load) return;
    this.chunks.splice(first, 2, merged);
  }
}
