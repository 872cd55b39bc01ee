// Eve's JSON rendering in one call: canonical values made plain (dates in DATE_FORMAT, ids and
// decimals as strings, bytes as base64), then written as Python's json.dumps writes them.
import { ObjectId } from "bson";
import { cachedByTime, formatDate, RFC1123_FORMAT } from "./dates.ts";
import { plainLeaf } from "./plain.ts";
import { dumps, JsonText } from "./pyjson.ts";
import { objectIdHex } from "../util/objectid.ts";

/**
 * A date in the default format as json.dumps writes it, quoted, one JsonText per instant: a
 * page shows the same few instants again and again (every document's _created, _updated), and
 * each was a formatted string run through the string escaper and quoted anew. The format's
 * text is printable ASCII, which json.dumps and JSON.stringify write alike.
 */
const quotedRfc1123 = cachedByTime((date) => new JsonText(JSON.stringify(formatDate(date, RFC1123_FORMAT))));

function jsonLeaf(node: object, dateFormat: string): unknown {
  // A part written before (a kept document, src/render/kept-json.ts) goes in as it is.
  if (node instanceof JsonText) return node;
  if (node instanceof Date && dateFormat === RFC1123_FORMAT) return quotedRfc1123(node);
  // Hex digits need no escaping: written as they are, quoted, without the string escaper's test.
  if (node instanceof ObjectId) return new JsonText(`"${objectIdHex(node)}"`);
  return plainLeaf(node, dateFormat);
}

/** `pretty` is Eve's `?pretty`: `json.dumps(indent=4)`; `sortKeys` is JSON_SORT_KEYS. */
// toPlain fused into the walk: the same output without building a plain copy of the body first.
export function toJson(value: unknown, pretty = false, dateFormat: string = RFC1123_FORMAT, sortKeys = false): string {
  return dumps(value, { indent: pretty ? 4 : undefined, sortKeys, replace: (node) => jsonLeaf(node, dateFormat) });
}
