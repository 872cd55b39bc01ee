// A keyset position (FindQuery.after) as a MongoDB filter, for the drivers whose store reads
// filters (mongodb, data-api): the documents that sort after the position in MongoDB's order
// (sort-order.ts). MongoDB's range operators only compare values of one type, so "after" on a
// key is the greater values of the position's type or any value of a type that sorts later;
// the filter is an `$or` of one branch per key (the earlier keys equal, this one after), which
// MongoDB answers with range scans of an index on the sort's keys.
import type { Doc, Filter, Sort } from "./types.ts";
import { RANK_TYPES, sortValue, typeRank, EMPTY_ARRAY } from "./sort-order.ts";

/** `$type` names of the types that sort before (`below`) or after a value's type. */
function typesBeside(value: unknown, below: boolean): string[] {
  const rank = typeRank(value);
  const names: string[] = [];
  for (const [other, types] of Object.entries(RANK_TYPES)) {
    const r = Number(other);
    // null and a missing field are matched by `{field: null}`, which `$type` cannot do.
    if (types.includes("null")) continue;
    if (below ? r < rank : r > rank) names.push(...types);
  }
  return names;
}

/** The conditions, any of which puts a field's value after `value` in a key's direction. */
function beyond(path: string, value: unknown, direction: 1 | -1): Filter[] {
  const conditions: Filter[] = [];
  const nullish = value === null || value === EMPTY_ARRAY;
  if (!nullish) conditions.push({ [path]: { [direction === 1 ? "$gt" : "$lt"]: value } });
  const types = typesBeside(nullish ? null : value, direction === -1);
  if (types.length > 0) conditions.push({ [path]: { $type: types } });
  // Descending, null and missing values come after any other.
  if (direction === -1 && !nullish) conditions.push({ [path]: null });
  return conditions;
}

/** The value a key must equal for the later keys to decide. */
function equal(path: string, value: unknown): Filter {
  return { [path]: value === EMPTY_ARRAY ? null : value };
}

/** The filter matching the documents after `after` in `sort` (`_id` last). */
export function keysetFilter(sort: Sort, after: Doc): Filter {
  const branches: Filter[] = [];
  const prefix: Filter[] = [];
  for (const [path, direction] of sort) {
    const value = sortValue(after, path, direction);
    for (const condition of beyond(path, value, direction)) branches.push(prefix.length === 0 ? condition : { $and: [...prefix, condition] });
    prefix.push(equal(path, value));
  }
  return branches.length === 1 ? branches[0]! : { $or: branches };
}

/** A read's filter with its keyset position ANDed in; the filter itself from the start. */
export function withKeyset(filter: Filter, sort: Sort | undefined, after: Doc | null | undefined): Filter {
  if (!after || !sort?.length) return filter;
  const keyset = keysetFilter(sort, after);
  return Object.keys(filter).length === 0 ? keyset : { $and: [filter, keyset] };
}
