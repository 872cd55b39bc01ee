// Response documents written as JSON once per stored version, and served from those bytes for as
// long as the version is current. A read's body is built from the stored document by
// buildResponseDocument (meta fields, links, soft-delete flag) and written by json.dumps; for a
// document nothing else shapes, both depend on its stored version, the links' base path and
// the App's settings only, so the bytes of the first read stand for every later one: neither
// written nor encoded again (a page's body was a rope of hundreds of strings, which the runtime
// flattened and encoded as UTF-8 on every response). Used by
// GET where the request shapes no document (src/methods/get.ts, renderedOnce), and only for
// versions the driver can name (Driver.sharesVersions: the memory store, whose documents a write
// replaces rather than changes).
/** A stored version's texts, as one request path shows them. */
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

/**
 * Versions kept per generation. At most twice this many are held (the current generation and
 * the one before it), a document's texts taking a little over twice its JSON: about 2 MB for
 * the bench's `people` documents, whatever the size of the data.
 */
const GENERATION = 1024;

/**
 * The texts by stored version, in two generations: a version read again is moved into the
 * current one; when that is full it becomes the previous one and the previous one is dropped.
 * So what is read often stays, and memory is bounded without per-read bookkeeping.
 */
export class RenderedDocuments {
  private current = new Map<object, RenderedDocument>();
  private previous = new Map<object, RenderedDocument>();

  constructor(private readonly generation = GENERATION) {}

  /** The texts of a stored version (versionOf) with links under `base`, empty at first. */
  of(version: object, base: string): RenderedDocument {
    let entry = this.current.get(version);
    if (entry === undefined) {
      entry = this.previous.get(version);
      if (entry !== undefined) this.previous.delete(version);
      // A literal: an entry lives as long as its version is read (docs/performance.md).
      else entry = { base, listed: undefined, item: undefined, etag: undefined };
      if (this.current.size >= this.generation) {
        this.previous = this.current;
        this.current = new Map();
      }
      this.current.set(version, entry);
    }
    if (entry.base !== base) {
      // The same document through another resource over its collection, or under a path
      // written another way (percent-encoded): shown as that request shows it.
      entry.base = base;
      entry.listed = entry.item = undefined;
      entry.etag = undefined;
    }
    return entry;
  }
}
