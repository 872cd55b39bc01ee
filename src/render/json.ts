// Eve's JSON rendering in one call: canonical values made plain (dates in DATE_FORMAT, ids and
// decimals as strings, bytes as base64), then written as Python's json.dumps writes them.
import { RFC1123_FORMAT } from "./dates.ts";
import { plainLeaf } from "./plain.ts";
import { dumps } from "./pyjson.ts";

/** `pretty` is Eve's `?pretty`: `json.dumps(indent=4)`; `sortKeys` is JSON_SORT_KEYS. */
// toPlain fused into the walk: the same output without building a plain copy of the body first.
export function toJson(value: unknown, pretty = false, dateFormat: string = RFC1123_FORMAT, sortKeys = false): string {
  return dumps(value, { indent: pretty ? 4 : undefined, sortKeys, replace: (node) => plainLeaf(node, dateFormat) });
}
