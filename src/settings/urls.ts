// Resource urls in Werkzeug's converter syntax (`lists/<regex("[a-f0-9]{24}"):list_id>/items`):
// the one reader of that syntax, for routing, links, the oplog and the internal API.

export interface PathParam {
  /** Field the segment is a condition on. */
  name: string;
  /** Regex source the segment must match. */
  pattern: string;
}

/** Literal text, or a converter segment. */
export type UrlPart = string | PathParam;

const URL_PARAM = /<regex\((["'])(.*?)\1\):(\w+)>/g;

/**
 * Werkzeug's named converters as Eve settings use them (`item_url: "int"`), by the pattern
 * Werkzeug matches them with. The value found is typed by the lookup field's schema type
 * (src/routing/lookup.ts), so `int` wants the field declared `integer`.
 */
const NAMED_CONVERTERS: Record<string, string> = {
  int: "\\d+",
  string: "[^/]+",
  default: "[^/]+",
  uuid: "[A-Fa-f0-9]{8}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{12}",
};

/** Werkzeug converter syntax `regex("…")`, or a named converter (`int`), → the regex source. */
export function converterRegex(spec: string): string {
  const trimmed = spec.trim();
  if (Object.hasOwn(NAMED_CONVERTERS, trimmed)) return NAMED_CONVERTERS[trimmed]!;
  const match = /^regex\((["'])(.*)\1\)$/s.exec(trimmed);
  return match ? match[2]! : spec;
}

/** A resource's url as routed: its own `url`, else its name, without surrounding slashes. */
export function resourceUrl(name: string, url: string | undefined): string {
  return (url ?? name).replace(/^\/+|\/+$/g, "");
}

/**
 * Why a resource url cannot be routed as written, or null: urlParts reads only the named regex
 * form, so any other angle-bracket segment (Werkzeug's `<int:id>`, `<id>`, an unnamed regex)
 * would be matched as literal text.
 */
export function urlProblem(url: string): string | null {
  for (const part of urlParts(url)) {
    if (typeof part === "string") {
      const segment = /<[^>]*>?|>/.exec(part);
      if (segment) return `has segment '${segment[0]}': the one form supported is <regex("…"):name> (docs/endpoints.md)`;
      continue;
    }
    try {
      new RegExp(part.pattern);
    } catch (error) {
      return `has segment '${part.name}' whose regex is invalid: ${(error as Error).message}`;
    }
  }
  return null;
}

export function urlParts(url: string): UrlPart[] {
  const parts: UrlPart[] = [];
  let last = 0;
  for (const match of url.matchAll(URL_PARAM)) {
    if (match.index > last) parts.push(url.slice(last, match.index));
    parts.push({ name: match[3]!, pattern: match[2]! });
    last = match.index + match[0].length;
  }
  if (last < url.length) parts.push(url.slice(last));
  return parts;
}

export function parseUrlParams(url: string): PathParam[] {
  return urlParts(url).filter((part): part is PathParam => typeof part !== "string");
}

/** The url with each converter segment replaced by `fill(segment)`. */
export function fillUrl(url: string, fill: (param: PathParam) => string): string {
  return urlParts(url)
    .map((part) => (typeof part === "string" ? part : fill(part)))
    .join("");
}

/**
 * The url as the home page and the oplog show it, each converter segment shown by its name
 * (`users/<person>/invoices`), as Eve's `config.URLS` does (eve/flaskapp.py). Eve keeps only
 * the last name of a url with several; every one is kept here (docs/decisions.md §5).
 */
export function displayUrl(url: string): string {
  return fillUrl(url, ({ name }) => `<${name}>`);
}
