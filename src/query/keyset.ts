// What a cursor read asks of the driver besides the page: a total order (the sort with `_id`
// last, so every document has one place), and the sort's fields in what it reads, which the
// next and previous cursors are made of even when the client's projection leaves them out;
// those are taken out again before the documents are built for the response. And the indexes
// that keep the orders a cursor resource is read in most (data/layer.ts creates them).
import type { Doc, IndexSpec, Projection, Sort } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";
import { indexDefinition } from "../settings/indexes.ts";
import { isPlainObject } from "../util/objects.ts";

/** The order a cursor read pages in: the read's sort (none: `_id`) ending at `_id`, in the last key's direction. */
export function keysetSort(sort: Sort | null): Sort {
  if (!sort || sort.length === 0) return [["_id", 1]];
  const id = sort.findIndex(([path]) => path === "_id");
  // Keys after `_id` never decide anything: it is unique.
  if (id >= 0) return sort.slice(0, id + 1);
  return [...sort, ["_id", sort[sort.length - 1]![1]]];
}

export function reverseSort(sort: Sort): Sort {
  return sort.map(([path, direction]) => [path, direction === 1 ? -1 : 1]);
}

/** Whether `path` is `prefix` or lies below it. */
const within = (path: string, prefix: string): boolean => path === prefix || path.startsWith(prefix + ".");

/** A projection that reads the sort's fields too, and how to give each document read the client's projection back. */
export interface SortFieldsRead {
  projection: Projection | null;
  /** Null when the projection needed no change. */
  restore: ((doc: Doc) => void) | null;
}

export function withSortFields(projection: Projection | null, sort: Sort): SortFieldsRead {
  if (!projection) return { projection, restore: null };
  const paths = sort.map(([path]) => path);
  const fields = Object.keys(projection);
  const inclusive = fields.some((field) => projection[field] === 1 && field !== "_id") || (fields.length > 0 && fields.every((field) => projection[field] === 1));
  const steps: Array<(doc: Doc) => void> = [];
  const read: Projection = { ...projection };
  if (inclusive) {
    for (const path of paths) {
      if (path === "_id" ? projection._id !== 0 : fields.some((field) => projection[field] === 1 && within(path, field))) continue;
      // Fields asked for below the sort field: the whole of it is read, and cut back to them after.
      const below = fields.filter((field) => projection[field] === 1 && field !== path && within(field, path));
      for (const field of below) delete read[field];
      read[path] = 1;
      if (path === "_id") delete read._id;
      if (below.length > 0) steps.push((doc) => keepBelow(doc, path.split("."), below.map((field) => field.slice(path.length + 1))));
      else steps.push((doc) => removeAt(doc, topmostUnasked(path, fields.filter((field) => projection[field] === 1))));
    }
  } else {
    for (const field of fields) {
      if (!paths.some((path) => within(path, field) || within(field, path))) continue;
      delete read[field];
      steps.push((doc) => removeAt(doc, field.split(".")));
    }
  }
  if (steps.length === 0) return { projection, restore: null };
  return { projection: Object.keys(read).length > 0 ? read : null, restore: (doc) => steps.forEach((step) => step(doc)) };
}

/** The shortest prefix of `path` under which the projection asks for nothing: what was read for the sort alone. */
function topmostUnasked(path: string, asked: string[]): string[] {
  const segments = path.split(".");
  for (let depth = 1; depth <= segments.length; depth++) {
    const prefix = segments.slice(0, depth).join(".");
    if (!asked.some((field) => within(field, prefix))) return segments.slice(0, depth);
  }
  return segments;
}

/** Removes a dotted path from a document, from every element of an array on the way. */
function removeAt(value: unknown, segments: string[]): void {
  if (Array.isArray(value)) {
    for (const element of value) removeAt(element, segments);
    return;
  }
  if (!isPlainObject(value)) return;
  const [head, ...rest] = segments;
  if (rest.length === 0) delete value[head!];
  else removeAt(value[head!], rest);
}

/** Cuts the value at `segments` back to the sub-paths asked for (arrays element by element). */
function keepBelow(value: unknown, segments: string[], asked: string[]): void {
  if (Array.isArray(value)) {
    for (const element of value) keepBelow(element, segments, asked);
    return;
  }
  if (!isPlainObject(value)) return;
  const [head, ...rest] = segments;
  if (rest.length > 0) return keepBelow(value[head!], rest, asked);
  const kept = pick(value[head!], asked.map((field) => field.split(".")));
  if (kept === undefined) delete value[head!];
  else value[head!] = kept;
}

/** Only the given paths of a value, as a MongoDB projection keeps them; undefined when none is there. */
function pick(value: unknown, paths: string[][]): unknown {
  if (Array.isArray(value)) return value.map((element) => pick(element, paths) ?? {}).filter((element) => !isPlainObject(element) || Object.keys(element).length > 0);
  if (!isPlainObject(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const under = paths.filter((path) => path[0] === key);
    if (under.length === 0) continue;
    if (under.some((path) => path.length === 1)) out[key] = value[key];
    else {
      const inner = pick(value[key], under.map((path) => path.slice(1)));
      if (inner !== undefined) out[key] = inner;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The orders cursor pages are read in most (docs/paging.md): the default_sort's, and that of
 * each mongo_indexes entry whose keys all sort, each with `_id` last as a cursor read orders.
 */
export function orderSpecs(resource: Resource): IndexSpec[] {
  if (!resource.pagination_cursor || !resource.pagination || resource.datasource.aggregation) return [];
  const orders: Array<[string, Sort]> = [["default_sort", keysetSort(resource.datasource.default_sort)]];
  for (const [name, definition] of Object.entries(resource.mongo_indexes)) {
    const key = indexDefinition(definition)!.key;
    if (key.every(([, direction]) => direction === 1 || direction === -1)) orders.push([name, keysetSort(key as Sort)]);
  }
  const seen = new Set<string>();
  return orders.flatMap(([name, keys]) => {
    const text = JSON.stringify(keys);
    if (keys.length === 1 || seen.has(text)) return [];
    seen.add(text);
    return [{ keys, name: `${name}_order`, orderOnly: true }];
  });
}
