// Projections by path, as MongoDB applies them: for a client's projection of a document read
// whole (src/read/document.ts) and for the embedded store's dotted projections
// (src/drivers/memory/mingo.ts), whose own engine put the fields in another order.
import { isPlainObject } from "./objects.ts";

type Doc = Record<string, unknown>;
type Projection = Record<string, 0 | 1>;

/**
 * A projection applied to a document, in the document's own field order as MongoDB keeps it:
 * dotted entries keep or drop what they name, through lists too (where an inclusion keeps only
 * the items that are documents or lists, as MongoDB's does). Values are shared, not copied.
 */
export function projectPaths(document: Doc, projection: Projection): Doc {
  const inclusive = Object.values(projection).some((flag) => flag === 1);
  const tree: PathTree = new Map();
  for (const [field, flag] of Object.entries(projection)) if ((flag === 1) === inclusive) addPath(tree, field.split("."));
  return (inclusive ? keepPaths : dropPaths)(document, tree) as Doc;
}

type PathTree = Map<string, PathTree | true>;

function addPath(tree: PathTree, parts: string[]): void {
  const [first, ...rest] = parts as [string, ...string[]];
  if (rest.length === 0) return void tree.set(first, true);
  let sub = tree.get(first);
  if (sub === true) return;
  if (!sub) tree.set(first, (sub = new Map()));
  addPath(sub, rest);
}

function keepPaths(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) return value.filter((item) => isPlainObject(item) || Array.isArray(item)).map((item) => keepPaths(item, tree));
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const key of Object.keys(value)) {
    const sub = tree.get(key);
    if (sub === true) out[key] = value[key];
    else if (sub && (isPlainObject(value[key]) || Array.isArray(value[key]))) out[key] = keepPaths(value[key], sub);
  }
  return out;
}

function dropPaths(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) return value.map((item) => dropPaths(item, tree));
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const key of Object.keys(value)) {
    const sub = tree.get(key);
    if (sub === undefined) out[key] = value[key];
    else if (sub !== true) out[key] = dropPaths(value[key], sub);
  }
  return out;
}
