// A URL path that URL would keep exactly as written: none of the characters it percent-encodes
// or reads as separators, no dot segment (`%2e` included), no `//` start. Such a path can be
// joined to an origin, or taken from a request target, without a URL parse.
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&'()*+,;=:@%/]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;
/** A whole `.` or `..` segment, as URL reads one (`%2e` for a dot, `\` for a slash). */
const WHOLE_DOT_SEGMENT = /[/\\](?:\.|%2e){1,2}(?=[/\\?#]|$)/i;
const NOT_PLAIN = /[^\w\-.~!$&'()*+,;=:@%/]/gu;

export function isPlainPath(path: string): boolean {
  return PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path);
}

/**
 * A value as one path segment of a URL: `%`, `?` and `#` escaped, which URL would otherwise read
 * as an escape, the query or the fragment (an id `r2?z` would name `r2`). Other characters are
 * left to absoluteUrl, which encodes what URL encodes.
 */
export function pathSegment(value: string): string {
  return value.replace(/[%?#]/g, encodeURIComponent);
}

/** `new URL(path, origin).href`, without the parse where the path is plain. */
export function absoluteUrl(origin: string, path: string): string {
  return isPlainPath(path) ? origin + path : new URL(path, origin).href;
}

/**
 * The URL of a request target whose path has a `.` or `..` segment, with the segment kept as a
 * name, as Werkzeug routes it (Eve answers `/people/../companies` 404), where URL would resolve
 * it: a proxy that allows `/people/…` alone would otherwise let the request reach another
 * resource. Null when the target has no such segment, or its path cannot be percent-encoded.
 */
export function unresolvedUrl(origin: string, target: string): string | null {
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  if (!WHOLE_DOT_SEGMENT.test(path)) return null;
  const query = q < 0 ? "" : (URL.parse(`${origin}/${target.slice(q)}`)?.search ?? "");
  try {
    return origin + path.replace(NOT_PLAIN, encodeURIComponent) + query;
  } catch {
    return null; // a lone surrogate: URL makes no URL of it either
  }
}
