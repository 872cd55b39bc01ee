// Which count a page gets (docs/paging.md): the `count` query parameter (PAGINATION_COUNT_PARAM),
// else `Prefer: count=…` (RFC 7240, as PostgREST reads it), else the resource's default —
// pagination_count, or Eve's: none under OPTIMIZE_PAGINATION_FOR_SPEED, exact otherwise. An
// unknown strategy is a 400 in either place, rather than a count the client did not ask for.
import { HttpError } from "../errors.ts";
import type { CountStrategy } from "../settings/opt-in.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/**
 * The strategies, checked against CountStrategy by the compiler. Not settings/opt-in.ts's list:
 * that module is in every bundle, and an import of it from here, which only paged resources
 * load, would split it out of a Worker's start-up chunk.
 */
const STRATEGIES: Record<CountStrategy, true> = { exact: true, estimated: true, none: true };
export const COUNT_CHOICES = Object.keys(STRATEGIES) as CountStrategy[];

export interface CountChoice {
  strategy: CountStrategy;
  /** Asked for with `Prefer`, which the response then acknowledges (Preference-Applied). */
  preferred: boolean;
}

function strategyOf(value: string, where: string): CountStrategy {
  const strategy = value.trim().toLowerCase();
  if (Object.hasOwn(STRATEGIES, strategy)) return strategy as CountStrategy;
  throw new HttpError(400, `unknown count strategy '${value}' in ${where} (one of ${COUNT_CHOICES.join(", ")})`);
}

/** The value of the `count` preference in a Prefer header, or null: `Prefer: return=minimal, count="exact"`. */
export function preferredCount(header: string | null): string | null {
  if (!header) return null;
  for (const preference of header.split(",")) {
    const [pair] = preference.split(";");
    const equals = pair!.indexOf("=");
    const name = (equals < 0 ? pair! : pair!.slice(0, equals)).trim().toLowerCase();
    if (name === "count") return equals < 0 ? "" : pair!.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1");
  }
  return null;
}

export function defaultCount(resource: Resource): CountStrategy {
  return resource.pagination_count ?? (resource.optimize_pagination_for_speed ? "none" : "exact");
}

export function countChoice(config: Config, resource: Resource, args: URLSearchParams, prefer: string | null): CountChoice {
  const asked = args.get(config.PAGINATION_COUNT_PARAM);
  if (asked !== null) return { strategy: strategyOf(asked, `the ${config.PAGINATION_COUNT_PARAM} parameter`), preferred: false };
  const preferred = preferredCount(prefer);
  if (preferred !== null) return { strategy: strategyOf(preferred, "Prefer"), preferred: true };
  return { strategy: defaultCount(resource), preferred: false };
}
