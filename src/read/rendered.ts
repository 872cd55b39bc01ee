// Response documents written as JSON once per stored version, and served from those bytes for as
// long as the version is current. A read's body is built from the stored document by
// buildResponseDocument (meta fields, links, soft-delete flag) and written by json.dumps; for a
// document nothing else shapes, both depend on its stored version, the links' base path and
// the App's settings only, so the bytes of the first read stand for every later one: neither
// written nor encoded again (a page's body was a rope of hundreds of strings, which the runtime
// flattened and encoded as UTF-8 on every response). A page's whole body is kept the same way,
// for as long as it lists the same versions. Used by GET where the request shapes no document
// (src/methods/get.ts, renderedOnce), and only for versions the driver can name
// (Driver.sharesVersions: the memory store, whose documents a write replaces rather than changes).

/** A stored version's JSON, as one request path shows it. */
export interface RenderedDocument {
  /**
   * The request path, relative to the API, without an item segment: where the links point. It
   * names the resource too (two resources over one collection show its documents each their
   * own way), as no two resources share a URL.
   */
  base: string;
  /** The document's JSON as a page lists it (`_links.self` only). */
  listed: Uint8Array | undefined;
  /** The document's JSON as its item URL answers it (with the parent and collection links). */
  item: Uint8Array | undefined;
  /** The ETag shown with `item`. */
  etag: string | undefined;
}

/** A page's body as last answered, with what it was made from. */
export interface RenderedPage {
  /** The stored versions it lists, in order. */
  versions: object[];
  total: number | null;
  body: Uint8Array;
  lastModified: Date | undefined;
}

/**
 * Versions kept per generation. At most twice this many are held (the current generation and
 * the one before it), a document's JSON taking a little over twice its size: about 2 MB for the
 * bench's `people` documents, whatever the size of the data.
 */
const GENERATION = 1024;

/**
 * Pages kept per generation: a client's few pages, or many one-document answers of `where` on
 * a unique field (a page of 25 is about 12 KB: 1.5 MB at most).
 */
const PAGE_GENERATION = 64;

/**
 * Values in two generations: one read again is moved into the current one; when that is full
 * it becomes the previous one and the previous one is dropped. So what is read often stays, and
 * memory is bounded without per-read bookkeeping.
 */
class Generations<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const old = this.previous.get(key);
    if (old !== undefined) {
      this.previous.delete(key);
      this.set(key, old);
    }
    return old;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.size) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }
}

export class RenderedDocuments {
  private readonly documents: Generations<object, RenderedDocument>;
  private readonly pages = new Generations<string, RenderedPage>(PAGE_GENERATION);

  constructor(generation = GENERATION) {
    this.documents = new Generations(generation);
  }

  /** The JSON of a stored version (versionOf) with links under `base`, empty at first. */
  of(version: object, base: string): RenderedDocument {
    let entry = this.documents.get(version);
    if (entry === undefined) {
      // A literal: an entry lives as long as its version is read (docs/performance.md).
      entry = { base, listed: undefined, item: undefined, etag: undefined };
      this.documents.set(version, entry);
    } else if (entry.base !== base) {
      // The same document through another resource over its collection, or under a path
      // written another way (`007` for `7`): shown as that request shows it.
      entry.base = base;
      entry.listed = entry.item = undefined;
      entry.etag = undefined;
    }
    return entry;
  }

  /**
   * The body kept for a page (`key`: its links' base and query string), if it was made from the
   * same stored versions, in the same order, and the same total; everything else in it (links,
   * `_meta`) follows from the key and the total.
   */
  page(key: string, versions: object[], total: number | null): RenderedPage | undefined {
    const page = this.pages.get(key);
    if (page === undefined || page.total !== total || page.versions.length !== versions.length) return undefined;
    for (let i = 0; i < versions.length; i++) if (page.versions[i] !== versions[i]) return undefined;
    return page;
  }

  keepPage(key: string, page: RenderedPage): void {
    this.pages.set(key, page);
  }
}
