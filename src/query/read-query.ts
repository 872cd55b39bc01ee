// The parsed query of a collection read: `where`, `sort` (or the resource's default_sort) and
// Eve's paging, in the order Eve reports their errors.
import type { CallScope } from "../scope.ts";
import type { Filter, Sort } from "../drivers/types.ts";
import type { Config } from "../settings/normalize.ts";
import { parseWhere } from "./where.ts";
import { parseSort } from "./sort.ts";
import { parsePaging, type Paging } from "./paging.ts";
import type { Mask } from "../auth/field-masks.ts";

/** The parsed query of a collection read. */
export interface ReadQuery {
  filter: Filter;
  paging: Paging;
  skip: number;
  limit: number;
}

export type ParsedQuery = ReadQuery & { sort: Sort | null };

/**
 * A promise only for a `where` or a `sort` that may be in Python's syntax, whose parsers are
 * imported on first use (where.ts, sort.ts). The where's 400 still comes before the sort's,
 * and the sort's before the paging's. `hidden`: the fields the caller may not read, which
 * neither may name (docs/contracts.md §4).
 */
export function parseReadQuery(config: Config, ctx: CallScope, hidden: Mask | null): ParsedQuery | Promise<ParsedQuery> {
  const rawWhere = ctx.arg(config.QUERY_WHERE);
  const filter = rawWhere ? parseWhere(rawWhere, ctx.resource!, config, hidden) : {};
  return filter instanceof Promise ? filter.then((parsed) => withSort(config, ctx, parsed, hidden)) : withSort(config, ctx, filter, hidden);
}

function withSort(config: Config, ctx: CallScope, filter: Filter, hidden: Mask | null): ParsedQuery | Promise<ParsedQuery> {
  const rawSort = ctx.arg(config.QUERY_SORT);
  const sort = rawSort !== null ? parseSort(rawSort, ctx.resource!, config.MAX_JSON_DEPTH, hidden) : null;
  return sort instanceof Promise ? sort.then((parsed) => readQuery(config, ctx, filter, parsed)) : readQuery(config, ctx, filter, sort);
}

function readQuery(config: Config, ctx: CallScope, filter: Filter, clientSort: Sort | null): ParsedQuery {
  const resource = ctx.resource!;
  // No client sort (absent, empty, `[]`, sorting off) falls back to the resource's default.
  const sort = clientSort ?? (resource.sorting ? resource.datasource.default_sort : null);
  const paging = parsePaging(ctx.args, resource, config);
  return {
    filter,
    sort,
    paging,
    skip: resource.pagination ? (paging.page - 1) * paging.maxResults : 0,
    limit: paging.maxResults,
  };
}
