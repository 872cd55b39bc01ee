// A URL path that URL would keep exactly as written: none of the characters it percent-encodes
// or reads as separators, no dot segment (`%2e` included), no `//` start. Such a path can be
// joined to an origin, or taken from a request target, without a URL parse.
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&'()*+,;=:@%/]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

export function isPlainPath(path: string): boolean {
  return PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path);
}

/** `new URL(path, origin).href`, without the parse where the path is plain. */
export function absoluteUrl(origin: string, path: string): string {
  return isPlainPath(path) ? origin + path : new URL(path, origin).href;
}
