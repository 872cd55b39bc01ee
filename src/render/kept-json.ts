// Response documents written as JSON once per stored version, and served from those bytes for as
// long as the version is current. A read's body is built from the stored document by
// buildResponseDocument (meta fields, links, soft-delete flag) and written by json.dumps; for a
// document nothing else shapes, both depend on its stored version, the links' base path and
// the App's settings only, so the bytes of the first read stand for every later one: neither
// written nor encoded again (a page's body was a rope of hundreds of strings, which the runtime
// flattened and encoded as UTF-8 on every response). A page's whole body is kept the same way,
// for as long as it lists the same versions. Used by GET where the request shapes no document
// (src/methods/get.ts, renderedOnce), and only for versions the driver can name
// (Driver.sharesVersions: the memory store, whose documents a write replaces rather than
// changes). Loaded on first use (kept-json-loader.ts), so a deployment on another store never
// loads it; it imports nothing but types, and is handed the writer, so that the bundle of a Worker
// puts nothing it shares with the entry into chunks of their own.
import type { Doc } from "../drivers/types.ts";

/** A stored version's JSON, as one request path shows it. */
export interface RenderedDocument {
  /**
   * The request path, relative to the API, without an item segment: where the links point. It
   * names the resource too (two resources over one collection show its documents each their
   * own way), as no two resources share a URL.
   */
  base: string;
  /** The document's JSON as a page lists it (`_links.self` only). */
  listed: Uint8Array<ArrayBuffer> | undefined;
  /** The document's JSON as its item URL answers it (with the parent and collection links). */
  item: Uint8Array<ArrayBuffer> | undefined;
  /**
   * `item` as text, for a Response made of it (src/http/known-body.ts: Deno copies bytes, not a
   * string), decoded on first use (itemText): never where the adapter takes plain parts (Node).
   */
  itemText: string | undefined;
  /** The ETag shown with `item`. */
  etag: string | undefined;
}

/** A page's body as last answered, with what it was made from. */
export interface RenderedPage {
  /** The stored versions it lists, in order. */
  versions: object[];
  total: number | null;
  body: Uint8Array<ArrayBuffer>;
  /** `body` as text, decoded on first use (pageText), as a kept item's is: never on Node. */
  text: string | undefined;
  lastModified: Date | undefined;
}

/**
 * How a page is made the first time: its documents' response documents, their LAST_UPDATED,
 * and the envelope (links, `_meta`) around a list standing for its items.
 */
export interface PageMaking {
  build(stored: Doc): Doc;
  updated(stored: Doc): Date;
  around(list: unknown): Doc;
}

/** The App's JSON writer (compactJson), what it writes between a list's items, and a value it writes as a NUL character, which json.dumps escapes everywhere else. */
export interface Writer {
  json(body: unknown): string;
  separator: string;
  slot: unknown;
}

/**
 * Versions kept per generation. At most twice this many are held (the current generation and
 * the one before it), a document's JSON taking a little over twice its size, and its item JSON
 * once more as text: about 3 MB for the bench's `people` documents, whatever the size of the data.
 */
const GENERATION = 1024;

/**
 * Bytes of pages kept per generation (1.5 MB at most in the two, and as much again as text on a
 * runtime whose Responses are made of it): a client's few pages of 25
 * (about 12 KB each), or a thousand and more one-document answers of `where` on a unique field.
 * Counted in pages (64), 64 clients each reading their own documents by `where` made every
 * answer anew: p99 2.6 times the lean server's (bench/README.md, issue 36).
 */
const PAGE_GENERATION_BYTES = 768 * 1024;

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/**
 * Values in two generations: one read again is moved into the current one; when that is full
 * (its values' weights reach `size`) it becomes the previous one and the previous one is dropped.
 * So what is read often stays, and memory is bounded without per-read bookkeeping.
 */
class Generations<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private filled = 0;

  constructor(
    private readonly size: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

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
    const replaced = this.current.get(key);
    if (replaced !== undefined) this.filled -= this.weigh(replaced);
    else if (this.filled >= this.size) {
      this.previous = this.current;
      this.current = new Map();
      this.filled = 0;
    }
    this.current.set(key, value);
    this.filled += this.weigh(value);
  }
}

export class RenderedDocuments {
  private readonly documents: Generations<object, RenderedDocument>;
  private readonly pages: Generations<string, RenderedPage>;
  private readonly separator: Uint8Array;

  /** `generation`, `pageBytes`: what a generation holds (tests make them small). */
  constructor(
    private readonly writer: Writer,
    generation = GENERATION,
    pageBytes = PAGE_GENERATION_BYTES,
  ) {
    this.documents = new Generations(generation);
    this.pages = new Generations(pageBytes, (page) => page.body.byteLength);
    this.separator = ENCODER.encode(writer.separator);
  }

  /** The JSON of a stored version (versionOf) with links under `base`, empty at first. */
  of(version: object, base: string): RenderedDocument {
    let entry = this.documents.get(version);
    if (entry === undefined) {
      // A literal: an entry lives as long as its version is read (docs/performance.md).
      entry = { base, listed: undefined, item: undefined, itemText: undefined, etag: undefined };
      this.documents.set(version, entry);
    } else if (entry.base !== base) {
      // The same document through another resource over its collection, or under a path
      // written another way (`007` for `7`): shown as that request shows it.
      entry.base = base;
      entry.listed = entry.item = undefined;
      entry.etag = entry.itemText = undefined;
    }
    return entry;
  }

  /** Keeps a version's JSON as its item URL answers it (`document`, built), and the ETag shown with it. */
  keepItem(entry: RenderedDocument, document: Doc, etag: string | undefined): Uint8Array<ArrayBuffer> {
    entry.etag = etag;
    return (entry.item = this.bytes(document));
  }

  /**
   * A kept item's JSON as text, decoded once from its bytes rather than kept as written: the
   * writer's text is a rope of the pieces it joined, which the runtime would flatten again for
   * every Response made of it.
   */
  itemText(entry: RenderedDocument): string {
    return (entry.itemText ??= DECODER.decode(entry.item));
  }

  /**
   * A kept page's body as text, decoded once: a Response made of bytes copies them on Deno
   * (src/http/known-body.ts), for a page of 25 about 10 KB on every answer.
   */
  pageText(page: RenderedPage): string {
    return (page.text ??= DECODER.decode(page.body));
  }

  /**
   * A page's body (`key`: its links' base and query string): the one kept, if it was made from
   * the same stored versions in the same order and the same total (everything else in it, its
   * links and `_meta`, follows from the key and the total), or one made from the JSON kept for
   * each version, made for those read first.
   */
  page(key: string, base: string, documents: Doc[], versions: object[], total: number | null, making: PageMaking): RenderedPage {
    const kept = this.pages.get(key);
    if (kept !== undefined && kept.total === total && sameVersions(kept.versions, versions)) return kept;
    let lastModified: Date | undefined;
    const items: Uint8Array[] = [];
    for (let i = 0; i < documents.length; i++) {
      const stored = documents[i]!;
      const entry = this.of(versions[i]!, base);
      items.push((entry.listed ??= this.bytes(making.build(stored))));
      const updated = making.updated(stored);
      if (updated.getTime() > 0 && (!lastModified || updated > lastModified)) lastModified = updated;
    }
    const page: RenderedPage = { versions, total, body: this.around(making.around(this.writer.slot), items), text: undefined, lastModified };
    this.pages.set(key, page);
    return page;
  }

  /** The JSON of a body as the bytes a response carries (json.dumps writes ASCII only). */
  private bytes(body: unknown): Uint8Array<ArrayBuffer> {
    return ENCODER.encode(this.writer.json(body));
  }

  /** The JSON of `body` as bytes, with `items` (each written before) as the list in its slot. */
  private around(body: Doc, items: Uint8Array[]): Uint8Array<ArrayBuffer> {
    const text = this.writer.json(body);
    const at = text.indexOf("\u0000");
    const head = ENCODER.encode(`${text.slice(0, at)}[`);
    const tail = ENCODER.encode(`]${text.slice(at + 1)}`);
    const separator = this.separator;
    let length = head.length + tail.length + Math.max(0, items.length - 1) * separator.length;
    for (const item of items) length += item.length;
    const out = new Uint8Array(length);
    out.set(head);
    let p = head.length;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) {
        out.set(separator, p);
        p += separator.length;
      }
      out.set(items[i]!, p);
      p += items[i]!.length;
    }
    out.set(tail, p);
    return out;
  }
}

function sameVersions(a: object[], b: object[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
