// `?page=` and `?max_results=` as Eve's `parse_request` reads them: lenient, never an error for
// values it cannot use.
// - max_results: Python's int(float(value)); unparseable, zero or negative → the default; over
//   the limit → the limit (exchange 9: 1000 → 50). Without pagination it is not clamped, and
//   0 (no value) means no limit.
// - page: abs(int(value)) or 1, so page=0 → 1, page=-3 → 3, page=abc or 2.5 → 1.
// Where Eve crashes (max_results=inf, a page whose skip overflows int64) everest clamps the
// former and answers 400 for the latter.
import { badRequest } from "../errors.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** Python's float() syntax (underscores between digits included). */
const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*\.|inf(?:inity)?|nan)$/i;
/** Python's int() syntax. */
const PY_INT = /^[+-]?\d(?:_?\d)*$/;

/** int(float(text)), or null where Python raises ValueError. */
function intOfFloat(text: string): number | null {
  const trimmed = text.trim();
  if (!PY_FLOAT.test(trimmed)) return null;
  const value = Number(trimmed.replace(/_/g, "").replace(/^([+-]?)inf(?:inity)?$/i, "$1Infinity"));
  if (Number.isNaN(value)) return null;
  return Math.min(Math.trunc(value), Number.MAX_SAFE_INTEGER);
}

export interface Paging {
  page: number;
  /** 0 when pagination is off and the client set no limit. */
  maxResults: number;
}

export function parsePaging(args: URLSearchParams, resource: Resource, config: Config): Paging {
  const rawMax = args.get(config.QUERY_MAX_RESULTS);
  const asked = rawMax === null ? null : intOfFloat(rawMax);
  let maxResults = asked !== null && asked > 0 ? asked : resource.pagination ? resource.pagination_default : 0;
  if (!resource.pagination) return { page: 1, maxResults };
  maxResults = Math.min(maxResults, resource.pagination_limit);

  let page = 1;
  const rawPage = args.get(config.QUERY_PAGE)?.trim();
  if (rawPage && PY_INT.test(rawPage)) {
    page = Math.abs(Number(rawPage.replace(/_/g, ""))) || 1;
    if ((page - 1) * maxResults > Number.MAX_SAFE_INTEGER) throw badRequest("page out of range");
  }
  return { page, maxResults };
}

/** `_meta` of a page, keyed as Eve keys it: by the QUERY_PAGE and QUERY_MAX_RESULTS names, then `total`. */
export function pageMeta(config: Config, paging: Paging, total: number | null): Record<string, number> {
  const meta: Record<string, number> = { [config.QUERY_PAGE]: paging.page, [config.QUERY_MAX_RESULTS]: paging.maxResults };
  if (total !== null) meta.total = total;
  return meta;
}
