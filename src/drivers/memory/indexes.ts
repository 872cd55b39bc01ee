// The two index structures of a collection: a FieldIndex answers equality, $in and range
// conditions on one path (hash part always kept, sorted part built on first range query), and
// a UniqueIndex enforces one declared unique index.
import { typeOf } from "mingo/util";
import { DuplicateKeyError, type Doc, type IndexSpec, type NormalizedIndexSpec } from "../types.ts";
import type { DocumentTable } from "./document-table.ts";
import { ShardedMap } from "./sharded-map.ts";
import { SortedList } from "./sorted-list.ts";
import { compareRangeValues, copyValue, indexEntries, valueKey, valuesAtPath } from "./values.ts";

/** Documents an index offers for a condition; `size` is known before they are read. */
export interface Candidates {
  size: number;
  ids(): Iterable<string>;
}

const NO_CANDIDATES: Candidates = { size: 0, ids: () => [] };

export interface RangeBound {
  value: unknown;
  inclusive: boolean;
}

interface Entry {
  value: unknown;
  id: string;
}

const compareEntries = (a: Entry, b: Entry): number =>
  compareRangeValues(a.value, b.value) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function splitPath(path: string): string[] {
  return path.split(".");
}

/**
 * Whether a top-level field holds the same primitive in both documents, so its index entries
 * cannot differ: a PATCH that leaves an indexed field be then costs the index nothing, not two
 * computations of its entries.
 */
function samePrimitive(segments: readonly string[], previous: Doc, next: Doc): boolean {
  if (segments.length !== 1) return false;
  const field = segments[0]!;
  const value = previous[field];
  return Object.is(value, next[field]) && (value === null || typeof value !== "object") && Object.hasOwn(previous, field) === Object.hasOwn(next, field);
}

export class FieldIndex {
  private readonly segments: string[];
  /** valueKey → the id, or the ids, of documents with that value. Null for `_id`, whose keys are the store's own. */
  private readonly hash: ShardedMap<string | Set<string>> | null;
  private sorted: SortedList<Entry> | null = null;
  /** Ids of documents holding NaN-like values, which mingo's range operators may match. */
  private readonly unordered = new Set<string>();
  private isMultikey = false;

  /**
   * @param docs the collection's documents by id key, read to build the index.
   * @param primary whether this is the `_id` index, answered by `docs` itself.
   */
  constructor(
    readonly path: string,
    private readonly docs: DocumentTable,
    primary = false,
  ) {
    this.segments = splitPath(path);
    this.hash = primary ? null : new ShardedMap();
    if (this.hash) for (const stored of docs.values()) this.add(stored.key, stored.doc);
  }

  /** Whether some document had an array on the path, so one value may satisfy one bound and another value the other. */
  get multikey(): boolean {
    return this.isMultikey;
  }

  add(id: string, doc: Doc): void {
    if (!this.hash && !this.sorted) return;
    const entries = indexEntries(doc, this.segments);
    if (entries.multikey) this.isMultikey = true;
    if (entries.unordered) this.unordered.add(id);
    if (this.hash) {
      for (const key of entries.keys) {
        const held = this.hash.get(key);
        if (held === undefined) this.hash.set(key, id);
        else if (typeof held === "string") this.hash.set(key, new Set([held, id]));
        else held.add(id);
      }
    }
    if (this.sorted) for (const value of entries.ordered) this.sorted.insert({ value, id });
  }

  /**
   * remove(previous) then add(next), skipped when it would change nothing: a hash-only index
   * whose keys for the document are the same and each held by this document alone. (Deleting
   * and re-setting a key of a large Map is far from free; most updates leave indexed fields be.)
   */
  replace(id: string, previous: Doc, next: Doc): void {
    if (samePrimitive(this.segments, previous, next)) return;
    if (this.hash && !this.sorted) {
      const before = indexEntries(previous, this.segments);
      const after = indexEntries(next, this.segments);
      if (before.unordered === after.unordered && (!after.multikey || this.isMultikey) && sameKeys(before.keys, after.keys) && after.keys.every((key) => this.hash!.get(key) === id)) return;
    }
    this.remove(id, previous);
    this.add(id, next);
  }

  remove(id: string, doc: Doc): void {
    if (!this.hash && !this.sorted) return;
    const entries = indexEntries(doc, this.segments);
    this.unordered.delete(id);
    if (this.hash) {
      for (const key of entries.keys) {
        const held = this.hash.get(key);
        if (held === id) this.hash.delete(key);
        else if (typeof held === "object") {
          held.delete(id);
          if (held.size === 1) this.hash.set(key, held.values().next().value!);
        }
      }
    }
    if (this.sorted) for (const value of entries.ordered) this.sorted.remove({ value, id });
  }

  /** The id, or ids, of documents holding a value key: a single hash probe. */
  held(key: string): string | ReadonlySet<string> | undefined {
    if (!this.hash) return this.docs.has(key) ? key : undefined;
    return this.hash.get(key);
  }

  equal(keys: string[]): Candidates {
    // One key is the common case (an equality): no Set to build for it.
    const unique = keys.length === 1 ? keys : [...new Set(keys)];
    if (!this.hash) {
      const ids = unique.filter((key) => this.docs.has(key));
      return { size: ids.length, ids: () => ids };
    }
    const hash = this.hash;
    if (unique.length === 1) {
      // An equality (a unique field's, most often): its ids as they are held, no generator.
      const held = hash.get(unique[0]!);
      if (held === undefined) return NO_CANDIDATES;
      return typeof held === "string" ? { size: 1, ids: () => [held] } : { size: held.size, ids: () => held };
    }
    let size = 0;
    for (const key of unique) {
      const held = hash.get(key);
      size += held === undefined ? 0 : typeof held === "string" ? 1 : held.size;
    }
    return {
      size,
      *ids() {
        for (const key of unique) {
          const held = hash.get(key);
          if (typeof held === "string") yield held;
          else if (held) yield* held;
        }
      },
    };
  }

  /** Documents with a value of the bounds' type within them; at least one bound is given. */
  range(lower: RangeBound | undefined, upper: RangeBound | undefined): Candidates {
    const sorted = this.ensureSorted();
    const type = typeOf((lower ?? upper)!.value);
    const from = lower
      ? (e: Entry) => {
          const order = compareRangeValues(e.value, lower.value);
          return order > 0 || (order === 0 && lower.inclusive);
        }
      : (e: Entry) => typeOf(e.value) >= type;
    const to = upper
      ? (e: Entry) => {
          const order = compareRangeValues(e.value, upper.value);
          return order > 0 || (order === 0 && !upper.inclusive);
        }
      : (e: Entry) => typeOf(e.value) > type;
    const unordered = this.unordered;
    return {
      size: sorted.countBetween(from, to) + unordered.size,
      *ids() {
        yield* unordered;
        for (const entry of sorted.between(from, to)) yield entry.id;
      },
    };
  }

  private ensureSorted(): SortedList<Entry> {
    if (!this.sorted) {
      const entries: Entry[] = [];
      for (const { key: id, doc } of this.docs.values()) {
        for (const value of indexEntries(doc, this.segments).ordered) entries.push({ value, id });
      }
      entries.sort(compareEntries);
      const sorted = new SortedList<Entry>(compareEntries);
      // Built in order, so every insert lands at the end of the last chunk.
      for (const entry of entries) sorted.insert(entry);
      this.sorted = sorted;
    }
    return this.sorted;
  }
}

/** An index spec with its defaults filled in, comparable by JSON. */
export function normalizeSpec(spec: IndexSpec): NormalizedIndexSpec {
  const normalized: NormalizedIndexSpec = {
    keys: spec.keys.map(([field, direction]) => [field, direction]),
    name: spec.name ?? spec.keys.map(([field, direction]) => `${field}_${direction}`).join("_"),
    unique: spec.unique === true,
    sparse: spec.sparse === true,
  };
  // Only where set, so the specs stored before it existed compare equal to today's.
  if (spec.orderOnly) normalized.orderOnly = true;
  return normalized;
}

/** An index key and the value of each field that produced it. */
type UniqueEntry = [key: string, values: unknown[]];

export class UniqueIndex {
  private readonly fields: Array<{ path: string; segments: string[] }>;
  /** Key → owner id; null once a FieldIndex on the same single path answers instead (share). */
  private owners: ShardedMap<string> | null = new ShardedMap();
  private lookup: FieldIndex | null = null;

  /** Throws DuplicateKeyError when the documents already break the constraint. */
  constructor(
    readonly spec: NormalizedIndexSpec,
    private readonly docs: DocumentTable,
  ) {
    this.fields = spec.keys.map(([path]) => ({ path, segments: splitPath(path) }));
    for (const { key, doc } of docs.values()) {
      this.check(doc, key);
      this.add(key, doc);
    }
  }

  /**
   * Answers from `index`, the collection's FieldIndex on this index's single path, instead of a
   * map of its own: the two would hold the same keys for every document (a unique field is
   * usually the one most queried too), about 64 bytes per document each. The FieldIndex keys
   * more (a whole array as well as its elements, missing values for a sparse index), so a
   * holder it names is confirmed against this index's own keys for that document.
   */
  share(index: FieldIndex | undefined): void {
    if (!index || this.fields.length !== 1 || index.path !== this.fields[0]!.path) return;
    this.lookup = index;
    this.owners = null;
  }

  /** Another document holding `key`, if any. */
  private holder(key: string, selfId: string): string | undefined {
    if (this.owners) {
      const owner = this.owners.get(key);
      return owner === selfId ? undefined : owner;
    }
    const held = this.lookup!.held(key);
    if (held === undefined || held === selfId) return undefined;
    for (const id of typeof held === "string" ? [held] : held) {
      if (id === selfId) continue;
      const stored = this.docs.get(id);
      if (stored && this.entries(stored.doc).some(([own]) => own === key)) return id;
    }
    return undefined;
  }

  /**
   * One entry per combination of the document's values on the fields (arrays give one per
   * element). A sparse index skips documents missing every field; otherwise a missing field
   * counts as null, as in MongoDB.
   */
  private entries(doc: Doc): UniqueEntry[] {
    if (this.fields.length === 1) {
      const values = valuesAtPath(doc, this.fields[0]!.segments);
      const only = values[0];
      if (values.length === 1 && !Array.isArray(only)) return only === undefined && this.spec.sparse ? [] : [[valueKey(only), [only]]];
    }
    const perField = this.fields.map(({ segments }) => {
      const distinct = new Map<string, unknown>();
      for (const value of valuesAtPath(doc, segments)) {
        if (Array.isArray(value) && value.length > 0) for (const element of value) distinct.set(valueKey(element), element);
        else distinct.set(valueKey(value), value);
      }
      return distinct;
    });
    if (this.spec.sparse && perField.every((values) => [...values.values()].every((value) => value === undefined))) return [];
    let combos: UniqueEntry[] = [["", []]];
    for (const values of perField) {
      const next: UniqueEntry[] = [];
      for (const [key, prefix] of combos) {
        for (const [part, value] of values) next.push([perField.length === 1 ? part : key + JSON.stringify(part), [...prefix, value]]);
      }
      combos = next;
    }
    return combos;
  }

  /**
   * The check of a replacement (`next` taking `previous`'s place): none is needed when every
   * field of the index holds the same primitive in both, as the document's keys are then the
   * ones it already owns (a PATCH of other fields).
   */
  checkReplacement(previous: Doc, next: Doc, selfId: string): void {
    if (this.fields.every(({ segments }) => samePrimitive(segments, previous, next))) return;
    this.check(next, selfId);
  }

  /**
   * Throws DuplicateKeyError when a document other than `selfId` holds one of the document's
   * keys, in the index or in `pending` (keys claimed by earlier documents of a batch).
   */
  check(doc: Doc, selfId: string, pending?: Map<string, string>): void {
    this.checkEntries(this.entries(doc), selfId, pending);
  }

  private checkEntries(entries: UniqueEntry[], selfId: string, pending: Map<string, string> | undefined): void {
    for (const [key, values] of entries) {
      const pendingOwner = pending?.get(key);
      const owner = this.holder(key, selfId) ?? (pendingOwner === selfId ? undefined : pendingOwner);
      if (owner !== undefined) {
        throw new DuplicateKeyError(Object.fromEntries(this.fields.map(({ path }, i) => [path, copyValue(values[i])])));
      }
    }
  }

  /** Checks the document's keys, then records them in `pending` (the keys a batch has claimed so far), if given. */
  claim(doc: Doc, id: string, pending: Map<string, string> | undefined): void {
    const entries = this.entries(doc);
    this.checkEntries(entries, id, pending);
    if (pending) for (const [key] of entries) pending.set(key, id);
  }

  add(id: string, doc: Doc): void {
    const owners = this.owners;
    if (owners) for (const [key] of this.entries(doc)) owners.set(key, id);
  }

  /** remove(previous) then add(next), skipped when the document's keys are the same and already its own. */
  replace(id: string, previous: Doc, next: Doc): void {
    const owners = this.owners;
    if (!owners) return;
    const before = this.entries(previous);
    const after = this.entries(next);
    if (before.length === after.length && after.every(([key], i) => key === before[i]![0] && owners.get(key) === id)) return;
    this.remove(id, previous);
    this.add(id, next);
  }

  remove(id: string, doc: Doc): void {
    const owners = this.owners;
    if (owners) for (const [key] of this.entries(doc)) if (owners.get(key) === id) owners.delete(key);
  }
}
