// A collection's documents kept in one sort's order (an `orderOnly` index spec: a cursor
// resource's default_sort or an ordered mongo_indexes entry, `_id` last), so that a keyset read
// (FindQuery.after) starts at its position with a binary search and reads only the documents of
// its page instead of sorting the collection. Built on the first read that needs it, then kept
// up to date by every write, as FieldIndex's sorted part is.
import type { Doc, Sort } from "../types.ts";
import { compareValues, fromArray, sortValue } from "../sort-order.ts";
import type { Stored } from "./document-table.ts";
import type { Boundary, SortedList } from "./sorted-list.ts";

/** A document's place: its sort values on the keys before `_id` (one value, or a list of them), and the document. */
interface Entry {
  key: unknown;
  stored: Stored;
}

export class SortIndex {
  private list: SortedList<Entry> | null = null;
  /** Entries whose sort values came from arrays: then the reverse order is not this one read backwards. */
  private arrays = 0;
  /** The keys before `_id`, which must be last. */
  private readonly keys: Sort;
  private readonly idDirection: 1 | -1;
  readonly compare: (a: Entry, b: Entry) => number;

  constructor(
    readonly sort: Sort,
    /** The collection's documents, read to build the index. */
    private readonly documents: () => Iterable<Stored>,
    /** An empty list in the given order (collection.ts sortedList). */
    private readonly makeList: (compare: (a: Entry, b: Entry) => number) => SortedList<Entry>,
  ) {
    this.keys = sort.slice(0, -1);
    this.idDirection = sort[sort.length - 1]![1];
    const [first] = this.keys;
    const idOrder = (a: Entry, b: Entry) => compareValues(a.stored.doc._id, b.stored.doc._id) * this.idDirection;
    if (!first) this.compare = idOrder;
    else if (this.keys.length === 1) this.compare = (a, b) => compareValues(a.key, b.key) * first[1] || idOrder(a, b);
    else {
      this.compare = (a, b) => {
        const x = a.key as unknown[];
        const y = b.key as unknown[];
        for (let i = 0; i < x.length; i++) {
          const order = compareValues(x[i], y[i]);
          if (order !== 0) return order * this.keys[i]![1];
        }
        return idOrder(a, b);
      };
    }
  }

  /** Whether the reverse of this sort may be read as this order backwards (no document sorts by an array). */
  get reversible(): boolean {
    return this.arrays === 0;
  }

  get size(): number {
    return this.ensure().size;
  }

  /** The entry a document would have: its sort values on the keys before `_id`. */
  entry(doc: Doc, stored: Stored): Entry {
    const keys = this.keys;
    if (keys.length === 0) return { key: undefined, stored };
    if (keys.length === 1) return { key: sortValue(doc, keys[0]![0], keys[0]![1]), stored };
    return { key: keys.map(([path, direction]) => sortValue(doc, path, direction)), stored };
  }

  /** The entry to seek for a position: the sort fields of a document (FindQuery.after). */
  position(after: Doc): Entry {
    return this.entry(after, { doc: { _id: after._id }, seq: -1, key: "" });
  }

  add(stored: Stored): void {
    if (!this.list) return;
    this.list.insert(this.entry(stored.doc, stored));
    if (this.hasArray(stored.doc)) this.arrays++;
  }

  remove(stored: Stored, doc: Doc = stored.doc): void {
    if (!this.list) return;
    if (this.list.remove(this.entry(doc, stored)) && this.hasArray(doc)) this.arrays--;
  }

  /** Documents after `from` (all, when null) in this order, or before it in the reverse order when `backward`. */
  walk(from: Doc | null, backward: boolean): Iterable<Stored> {
    const list = this.ensure();
    const at = from ? this.position(from) : null;
    let entries: Iterable<Entry>;
    if (!backward) entries = list.between(at ? (e) => this.compare(e, at) > 0 : ALWAYS, NEVER);
    else entries = list.descendingBefore(at ? (e) => this.compare(e, at) >= 0 : NEVER);
    return storedOf(entries);
  }

  private hasArray(doc: Doc): boolean {
    return this.keys.some(([path]) => fromArray(doc, path));
  }

  private ensure(): SortedList<Entry> {
    if (!this.list) {
      const entries: Entry[] = [];
      let arrays = 0;
      for (const stored of this.documents()) {
        entries.push(this.entry(stored.doc, stored));
        if (this.hasArray(stored.doc)) arrays++;
      }
      entries.sort(this.compare);
      const list = this.makeList(this.compare);
      // Built in order, so every insert lands at the end of the last chunk.
      for (const entry of entries) list.insert(entry);
      this.list = list;
      this.arrays = arrays;
    }
    return this.list;
  }
}

const NEVER: Boundary<Entry> = () => false;
const ALWAYS: Boundary<Entry> = () => true;

function* storedOf(entries: Iterable<Entry>): Generator<Stored> {
  for (const entry of entries) yield entry.stored;
}
