// ETags as Eve computes them: SHA-1 over `bson.json_util.dumps(document, sort_keys=True)`, i.e.
// Python's json.dumps of relaxed Extended JSON (dates as {"$date": ISO}, ids as {"$oid": hex}).
// Matching it byte for byte gives a document the same tag in everest as in Eve (verified
// against the reference exchanges).
import type { Stamp } from "../drivers/types.ts";
import { relaxedJsonBytes } from "./relaxed-bytes.ts";
import type { Config, Resource } from "../settings/normalize.ts";

const decoder = new TextDecoder();

/** What Eve hashes, as text: `bson.json_util.dumps(value, sort_keys=True)`. */
export function etagSource(value: unknown): string {
  return decoder.decode(relaxedJsonBytes(value));
}

const schedule = new Int32Array(80);

const hex = (word: number) => (word >>> 0).toString(16).padStart(8, "0");

/**
 * SHA-1 of bytes, in hex, in plain JavaScript: for a runtime without a
 * synchronous native hash (a Worker without nodejs_compat). crypto.subtle's digest is
 * asynchronous, which costs more than the hash itself for documents of a few hundred bytes.
 */
export function portableSha1Hex(bytes: Uint8Array): string {
  const length = bytes.length;
  // Message, the 0x80 terminator and the 64-bit bit length, padded to whole 64-byte blocks.
  const words = new Int32Array((((length + 8) >>> 6) + 1) * 16);
  for (let i = 0; i < length; i++) words[i >> 2]! |= bytes[i]! << (24 - (i & 3) * 8);
  words[length >> 2]! |= 0x80 << (24 - (length & 3) * 8);
  words[words.length - 2] = Math.floor(length / 0x20000000);
  words[words.length - 1] = length << 3;
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  const w = schedule;
  for (let block = 0; block < words.length; block += 16) {
    for (let t = 0; t < 16; t++) w[t] = words[block + t]!;
    for (let t = 16; t < 80; t++) {
      const x = w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!;
      w[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let t = 0; t < 80; t++) {
      // The round constants 0x8f1bbcdc and 0xca62c1d6 written as signed 32-bit values.
      const f =
        t < 20 ? ((b & c) | (~b & d)) + 0x5a827999 : t < 40 ? (b ^ c ^ d) + 0x6ed9eba1 : t < 60 ? ((b & c) | (b & d) | (c & d)) - 0x70e44324 : (b ^ c ^ d) - 0x359d3e2a;
      const next = (((a << 5) | (a >>> 27)) + f + e + w[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = next;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  return hex(h0) + hex(h1) + hex(h2) + hex(h3) + hex(h4);
}

type Sha1 = (bytes: Uint8Array) => string;

interface NodeCrypto {
  /** One call, no Hash object (Node 20.12, Bun, Deno). */
  hash?(algorithm: "sha1", bytes: Uint8Array, encoding: "hex"): string;
  createHash(algorithm: "sha1"): { update(bytes: Uint8Array): { digest(encoding: "hex"): string } };
}

/**
 * node:crypto's SHA-1 where the runtime has one to hand without an import (Node, Bun, Deno, and
 * Workers with nodejs_compat all answer process.getBuiltinModule): 0.7 µs for an ETag source of
 * 300 bytes against 2.9 µs in JavaScript on Node, 1.4 µs on Bun (bench/README.md, issue 14);
 * its one-shot hash() where there is one, 0.4-0.5 µs on Node and Bun.
 */
function nativeSha1(): Sha1 | null {
  const process = (globalThis as { process?: { getBuiltinModule?(name: string): unknown } }).process;
  let crypto: NodeCrypto | undefined;
  try {
    crypto = process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
  } catch {
    return null;
  }
  const hash = crypto?.hash;
  if (typeof hash === "function") return (bytes) => hash("sha1", bytes, "hex");
  const createHash = crypto?.createHash;
  if (typeof createHash !== "function") return null;
  return (bytes) => createHash("sha1").update(bytes).digest("hex");
}

/** SHA-1 of bytes, in hex. ETags are validators, not secrets. */
export const sha1Hex: Sha1 = nativeSha1() ?? portableSha1Hex;

function withoutFields(doc: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...doc };
  for (const path of fields) {
    const parts = path.split(".");
    let node: Record<string, unknown> | undefined = copy;
    for (let i = 0; i < parts.length - 1 && node; i++) {
      const next = node[parts[i]!];
      if (next && typeof next === "object" && !Array.isArray(next)) {
        node[parts[i]!] = { ...(next as Record<string, unknown>) };
        node = node[parts[i]!] as Record<string, unknown>;
      } else node = undefined;
    }
    if (node) delete node[parts[parts.length - 1]!];
  }
  return copy;
}

export function documentEtag(doc: Record<string, unknown>, ignoreFields?: string[] | null): string {
  const source = ignoreFields?.length ? withoutFields(doc, ignoreFields) : doc;
  return sha1Hex(relaxedJsonBytes(source));
}

/**
 * The ETag of a write a driver applies in its own atomic step (an update-operator PATCH, a
 * write by filter): the hash of the document it leaves, the previous ETag in it, as a plain
 * PATCH hashes Eve's way. Without it, setting a value back within the second gave the document
 * an ETag it had had before. The gateway makes the same one from `field` and `ignore`
 * (src/gateway), so a document gets the same ETag whether its store is local or behind the Data API.
 */
export function etagStamp(field: string, ignore: string[] | null): Stamp {
  return { field, ignore, value: (document) => documentEtag(document, ignore) };
}

const EPOCH = new Date(0);

/**
 * The ETag of a document as Eve computes one for a document stored without it (written by
 * another program): the hash of the document, the dates it lacks at the epoch.
 */
export function contentEtag(config: Config, resource: Resource, document: Record<string, unknown>): string {
  return documentEtag({ [config.DATE_CREATED]: EPOCH, [config.LAST_UPDATED]: EPOCH, ...document }, resource.etag_ignore_fields);
}

const QUOTE = 0x22;

/** Strips quotes and the weak prefix from an ETag header value (Eve accepts both forms). */
export function bareEtag(value: string): string {
  // Not two regular expressions: every conditional write reads its If-Match through this.
  let tag = value.trim();
  if (tag.startsWith("W/")) tag = tag.slice(2);
  return tag.length > 1 && tag.charCodeAt(0) === QUOTE && tag.charCodeAt(tag.length - 1) === QUOTE ? tag.slice(1, -1) : tag;
}

/** True when an If-None-Match header value matches the given tag (`*` and lists allowed). */
export function etagMatches(header: string, etag: string): boolean {
  return header.split(",").some((part) => {
    const tag = bareEtag(part);
    return tag === "*" || tag === etag;
  });
}
