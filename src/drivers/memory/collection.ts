// One collection: documents by `_id` in insertion order, their indexes, and the synchronous
// primitives the driver builds its operations from. Stored documents are never mutated in
// place (a write stores a new object), so an index can always recompute what an old version
// contributed. Writes are split into a checking `prepare…` step that throws and an `apply` step
// that cannot fail, so the driver can journal between the two.
import { DuplicateKeyError, type Doc, type Filter, type IndexSpec, type NormalizedIndexSpec } from "../types.ts";
import { DocumentTable, type Stored } from "./document-table.ts";

/** What writes keep up to date in a sort index (sort-index.ts). */
export interface OrderIndex {
  add(stored: Stored): void;
  remove(stored: Stored, doc?: Doc): void;
}
import { FieldIndex, normalizeSpec, UniqueIndex } from "./indexes.ts";
import type { Candidates } from "./indexes.ts";
import { isEquality, planFilter } from "./planner.ts";
import { SortedList } from "./sorted-list.ts";
import { copyValue, DatePool, valueKey } from "./values.ts";

/** How reads found their documents; cumulative, for tests and diagnostics. */
export interface ScanStats {
  /** Documents a filter was tested against. */
  documentsExamined: number;
  /** Filtered reads answered from an index. */
  indexScans: number;
  /** Filtered reads that had to look at every document. */
  fullScans: number;
}

/** Index key directions that order or hash values; geo and text keys are declared but not used for lookups. */
const LOOKUP_DIRECTIONS = new Set<unknown>([1, -1, "hashed"]);

export class Collection {
  private docs = new DocumentTable();
  private specs = new Map<string, NormalizedIndexSpec>();
  private fields = new Map<string, FieldIndex>();
  private uniques: UniqueIndex[] = [];
  /**
   * The sort indexes keyset reads have built (keyset.ts), by their order's JSON, which writes
   * keep up to date; dropped when the documents or the index specs are replaced, and built
   * again by the next read that needs one.
   */
  readonly sorts = new Map<string, OrderIndex>();
  private readonly dates = new DatePool();

  constructor(readonly stats: ScanStats) {
    this.fields.set("_id", new FieldIndex("_id", this.docs, true));
  }

  get size(): number {
    return this.docs.size;
  }

  /** Documents in natural order. */
  documents(): IterableIterator<Stored> {
    return this.docs.values();
  }

  indexSpecs(): Array<NormalizedIndexSpec> {
    return [...this.specs.values()];
  }

  /**
   * Documents passing `test`, which must be the compiled `filter`; the filter only chooses
   * candidates from the indexes. `ordered` yields them in natural order.
   */
  *matching(filter: Filter, test: (doc: Doc) => boolean, ordered: boolean): Generator<Stored> {
    for (const stored of this.candidates(filter, ordered)) {
      this.stats.documentsExamined++;
      if (test(stored.doc)) yield stored;
    }
  }

  /** A page of the whole collection in natural order (DocumentTable.slice), what it looked at counted. */
  slice(skip: number, limit: number): Stored[] {
    const { found, examined } = this.docs.slice(skip, limit);
    this.stats.documentsExamined += examined;
    return found;
  }

  /**
   * An empty sorted list, for the sort indexes of keyset reads (sort-index.ts): their module,
   * imported only by the first keyset read, takes the class from here so that importing it
   * does not split sorted-list.ts out of the store's own bundle chunk.
   */
  sortedList<T>(compare: (a: T, b: T) => number): SortedList<T> {
    return new SortedList(compare);
  }

  /** The index candidates of a filter's narrowest indexed condition, or null (planner.ts). */
  plan(filter: Filter): Candidates | null {
    return Object.keys(filter).length === 0 ? null : planFilter(filter, (path) => this.fields.get(path));
  }

  /** The document with this `_id`, if it passes `test`. */
  probe(id: unknown, test: (doc: Doc) => boolean): Stored | undefined {
    const stored = this.idScan(id);
    if (!stored) return undefined;
    this.stats.documentsExamined++;
    return test(stored.doc) ? stored : undefined;
  }

  /** The document whose id's valueKey is `key`, if it passes `test`; none or one. */
  probeKey(key: string, test: (doc: Doc) => boolean): Stored[] {
    this.stats.indexScans++;
    const stored = this.docs.get(key);
    if (!stored) return [];
    this.stats.documentsExamined++;
    return test(stored.doc) ? [stored] : [];
  }

  /** One probe of the id map, counted as the index scan it is. */
  private idScan(id: unknown): Stored | undefined {
    this.stats.indexScans++;
    return this.docs.get(valueKey(id));
  }

  /** The documents a filter may match: its index candidates, or all; in natural order when `ordered`. */
  candidates(filter: Filter, ordered: boolean): Iterable<Stored> {
    if (Object.keys(filter).length === 0) return this.docs.values();
    // An item's read and writes name one document by its id: the plan the planner would pick
    // (an equality on _id is the narrowest there is) in one probe of the id map.
    const id = filter._id;
    if (id !== undefined && isEquality(id)) {
      const stored = this.idScan(id);
      return stored ? [stored] : [];
    }
    const plan = planFilter(filter, (path) => this.fields.get(path));
    if (!plan) {
      this.stats.fullScans++;
      return this.docs.values();
    }
    this.stats.indexScans++;
    if (plan.size <= 1) {
      // A unique field's equality: at most one id, so nothing to deduplicate or order.
      for (const id of plan.ids()) {
        const stored = this.docs.get(id);
        return stored ? [stored] : [];
      }
      return [];
    }
    const seen = new Set<string>();
    const found: Stored[] = [];
    for (const id of plan.ids()) {
      if (seen.has(id)) continue;
      seen.add(id);
      const stored = this.docs.get(id);
      if (stored) found.push(stored);
    }
    if (ordered) found.sort((a, b) => a.seq - b.seq);
    return found;
  }

  /** A copy of a document to insert, which the store then owns: copyDocument, with pooled Dates. */
  copyIn(doc: Doc): Doc {
    return this.dates.copy(doc);
  }

  /** A document to insert that nothing else holds (one read from the journal), its Dates pooled in place. */
  adopt(doc: Doc): Doc {
    this.dates.share(doc);
    return doc;
  }

  /** Checks a batch (`_id` present, `_id` first, from copyIn or adopt) against the store and itself. */
  prepareInsert(docs: Doc[]): () => void {
    // A lone document cannot collide with the rest of its batch: no ids or claims to keep.
    const ids = docs.length > 1 ? new Set<string>() : null;
    const pending = ids ? this.uniques.map(() => new Map<string, string>()) : null;
    // The ids beside the documents, not [id, doc] pairs: a literal a batch holds one of per
    // document would have V8 allocate every later insert's pair in old space (docs/performance.md).
    const keys: string[] = [];
    for (const doc of docs) {
      const id = valueKey(doc._id);
      if (this.docs.has(id) || ids?.has(id)) throw new DuplicateKeyError({ _id: copyValue(doc._id) });
      ids?.add(id);
      this.uniques.forEach((unique, i) => unique.claim(doc, id, pending?.[i]));
      keys.push(id);
    }
    return () => {
      for (let i = 0; i < docs.length; i++) {
        const id = keys[i]!;
        const doc = docs[i]!;
        this.docs.add(id, doc);
        for (const index of this.fields.values()) index.add(id, doc);
        for (const unique of this.uniques) unique.add(id, doc);
        if (this.sorts.size > 0) for (const sorted of this.sorts.values()) sorted.add(this.docs.get(id)!);
      }
    };
  }

  /** Checks that `next` (same `_id`) may take the place of `stored`. */
  prepareReplace(stored: Stored, next: Doc): () => void {
    const id = stored.key;
    for (const unique of this.uniques) unique.checkReplacement(stored.doc, next, id);
    return () => {
      this.dates.share(next);
      const previous = stored.doc;
      for (const index of this.fields.values()) index.replace(id, previous, next);
      for (const unique of this.uniques) unique.replace(id, previous, next);
      const sorted = this.sorts.size > 0;
      if (sorted) for (const index of this.sorts.values()) index.remove(stored, previous);
      stored.doc = next;
      if (sorted) for (const index of this.sorts.values()) index.add(stored);
    };
  }

  /**
   * Puts each `next` in its `stored`'s place, in order, all or none: a replacement a unique
   * index refuses undoes the ones before it (in reverse, each getting back keys it held) and
   * throws. The journal replays the same replacements in the same order, so they fit there too.
   */
  replaceInOrder(stored: Stored[], next: Doc[]): void {
    const previous: Doc[] = [];
    try {
      for (let i = 0; i < stored.length; i++) {
        const apply = this.prepareReplace(stored[i]!, next[i]!);
        previous.push(stored[i]!.doc);
        apply();
      }
    } catch (error) {
      for (let i = previous.length - 1; i >= 0; i--) this.prepareReplace(stored[i]!, previous[i]!)();
      throw error;
    }
  }

  /** The stored document with this `_id` value. */
  get(id: unknown): Stored | undefined {
    return this.docs.get(valueKey(id));
  }

  remove(stored: Stored): void {
    const id = stored.key;
    if (!this.docs.delete(id)) return;
    for (const index of this.fields.values()) index.remove(id, stored.doc);
    for (const unique of this.uniques) unique.remove(id, stored.doc);
    if (this.sorts.size > 0) for (const sorted of this.sorts.values()) sorted.remove(stored);
  }

  clear(): void {
    this.docs = new DocumentTable();
    this.fields = new Map();
    this.install(this.specs, this.uniques.map((unique) => new UniqueIndex(unique.spec, this.docs)));
  }

  /**
   * Specs new or changed (by name) and a step that installs them. A changed spec replaces the
   * old one, as Eve does when an index definition changes. Building a unique index over
   * documents that break it throws, leaving every index as it was.
   */
  prepareIndexes(specs: IndexSpec[]): { changed: Array<NormalizedIndexSpec>; apply: () => void } {
    const next = new Map(this.specs);
    const changed: Array<NormalizedIndexSpec> = [];
    for (const spec of specs.map(normalizeSpec)) {
      const existing = next.get(spec.name);
      if (existing && JSON.stringify(existing) === JSON.stringify(spec)) continue;
      next.set(spec.name, spec);
      changed.push(spec);
    }
    if (changed.length === 0) return { changed, apply: () => {} };
    const uniques = [...next.values()]
      .filter((spec) => spec.unique)
      .map((spec) => this.uniques.find((unique) => unique.spec === spec) ?? new UniqueIndex(spec, this.docs));
    return { changed, apply: () => this.install(next, uniques) };
  }

  /** Which of its indexes `keep` does not keep (`_id`'s is none of them), and how to drop them. */
  prepareDrop(keep: (name: string) => boolean): { dropped: string[]; apply: () => void } {
    const next = new Map([...this.specs].filter(([name]) => keep(name)));
    const dropped = [...this.specs.keys()].filter((name) => !next.has(name));
    if (dropped.length === 0) return { dropped, apply: () => {} };
    const uniques = this.uniques.filter((unique) => next.get(unique.spec.name) === unique.spec);
    return { dropped, apply: () => this.install(next, uniques) };
  }

  private install(specs: Map<string, NormalizedIndexSpec>, uniques: UniqueIndex[]): void {
    const paths = new Set(["_id"]);
    for (const spec of specs.values()) {
      if (spec.orderOnly) continue;
      const [path, direction] = spec.keys[0] ?? [];
      if (path !== undefined && LOOKUP_DIRECTIONS.has(direction)) paths.add(path);
    }
    const fields = new Map<string, FieldIndex>();
    for (const path of paths) fields.set(path, this.fields.get(path) ?? new FieldIndex(path, this.docs, path === "_id"));
    for (const unique of uniques) unique.share(fields.get(unique.spec.keys[0]![0]));
    this.sorts.clear();
    this.specs = specs;
    this.fields = fields;
    this.uniques = uniques;
  }
}
