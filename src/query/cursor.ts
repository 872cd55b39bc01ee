// Cursors (docs/paging.md): where a page starts, sealed so that a client can neither read nor
// change it. A cursor holds a direction and a position — the sort fields of the document the
// page follows or precedes (drivers/sort-order.ts sortFields) — and a digest of the resource,
// sort and filter it was made for, never a filter: every page is read afresh with the data
// layer's scope (docs/contracts.md §5).
//
// Sealing is AES-256-GCM, which encrypts (a position may hold values of a field some callers
// may not read) and authenticates (an altered or truncated cursor fails to open). The key is
// derived from PAGINATION_CURSOR_SECRET, so instances with the same secret open each other's
// cursors; a list of secrets rotates them, the first sealing and every one opening. Without a
// secret the key is derived from a fixed label: damage and reuse elsewhere are still caught,
// but anyone who has everest can forge a position (start-up then refuses resources whose
// default_sort has read rules, settings/opt-in.ts pagingProblems).
//
// Token: base64url of [version 1][12-byte nonce][ciphertext and tag] over the canonical
// Extended JSON of {d, p, f}.
import { EJSON } from "bson";
import type { Doc, Filter, Sort } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { isPlainObject } from "../util/objects.ts";

/** Which page a cursor names, relative to its position. */
export type CursorDirection = "after" | "before" | "end";

export interface Cursor {
  /** after: the page that follows the position; before: the one that precedes it; end: the last page. */
  direction: CursorDirection;
  /** Null for `end`. */
  position: Doc | null;
}

const VERSION = 1;
const NONCE = 12;
/** Longer cursors are refused unread: a position of a few sort values is far shorter. */
export const MAX_CURSOR_LENGTH = 4096;
const DERIVED = "everest cursor key: no PAGINATION_CURSOR_SECRET";
const DIRECTIONS: Record<string, CursorDirection> = { a: "after", b: "before", e: "end" };

/** A 400 whose message says what is wrong with the cursor (Werkzeug's generic one would not). */
const refused = (message: string) => new HttpError(400, message);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Keys by secret, derived once per process (HKDF-SHA-256, then AES-256-GCM). */
const keys = new Map<string, Promise<CryptoKey>>();

function keyOf(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: encoder.encode("everest cursor"), info: encoder.encode(`v${VERSION}`) }, material, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]),
      );
    keys.set(secret, key);
  }
  return key;
}

function secretsOf(setting: string | string[] | null): string[] {
  if (setting === null) return [DERIVED];
  return Array.isArray(setting) ? setting : [setting];
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unbase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * What a cursor is bound to: the resource, the sort and the filter (the lookup of the URL and
 * the client's where), as a digest, so that a cursor used with another sort or where is refused.
 */
export async function cursorFingerprint(resource: string, sort: Sort, filter: Filter): Promise<string> {
  const text = JSON.stringify([resource, sort, EJSON.stringify(filter, { relaxed: false })]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return base64url(digest.subarray(0, 16));
}

/** A cursor sealed for `fingerprint`. */
export async function sealCursor(secret: string | string[] | null, cursor: Cursor, fingerprint: string): Promise<string> {
  const payload = EJSON.stringify({ d: cursor.direction[0], p: cursor.position, f: fingerprint }, { relaxed: false });
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE));
  const key = await keyOf(secretsOf(secret)[0]!);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: Uint8Array.of(VERSION) }, key, encoder.encode(payload)));
  const token = new Uint8Array(1 + NONCE + sealed.length);
  token[0] = VERSION;
  token.set(nonce, 1);
  token.set(sealed, 1 + NONCE);
  return base64url(token);
}

/** The cursor a client sent, or a 400 saying why it is not one for this read. */
export async function openCursor(secret: string | string[] | null, token: string, fingerprint: string): Promise<Cursor> {
  if (token.length > MAX_CURSOR_LENGTH) throw refused(`the cursor is longer than ${MAX_CURSOR_LENGTH} characters`);
  const bytes = unbase64url(token);
  // A version byte, a nonce and GCM's 16-byte tag at the least.
  if (!bytes || bytes.length < 1 + NONCE + 16 || bytes[0] !== VERSION) throw refused("the cursor is malformed");
  let payload: string | null = null;
  for (const each of secretsOf(secret)) {
    try {
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.subarray(1, 1 + NONCE), additionalData: Uint8Array.of(VERSION) }, await keyOf(each), bytes.subarray(1 + NONCE));
      payload = decoder.decode(plain);
      break;
    } catch {
      // Not sealed with this key: the next one, if any.
    }
  }
  if (payload === null) throw refused("the cursor is not valid: it was altered, or sealed by another deployment");
  let parsed: unknown;
  try {
    // Relaxed: numbers come back as the JavaScript numbers documents hold, not bson's wrappers.
    parsed = EJSON.parse(payload, { relaxed: true });
  } catch {
    throw refused("the cursor is malformed");
  }
  const fields = isPlainObject(parsed) ? parsed : {};
  const direction = typeof fields.d === "string" ? DIRECTIONS[fields.d] : undefined;
  const position = fields.p;
  if (!direction || !(position === null || isPlainObject(position)) || (position === null) !== (direction === "end")) throw refused("the cursor is malformed");
  if (fields.f !== fingerprint) throw refused("the cursor was made for another resource, sort or where");
  return { direction, position };
}
