// mingo, set up to behave like MongoDB for the memory driver: script operators refused, one
// deviation corrected ($count, aggregation.ts), and mingo's own errors reported as the
// caller's InvalidQueryError.
// Filters and updates need the query operators, here from the start; projections are applied
// here (project), not by mingo. Pipelines and `$expr` need the stages, expression and
// accumulator operators (aggregation.ts), and geo operators need turf (geo.ts): both are imported
// when an operation first needs them (loadFor), so a bundle keeps them in modules of their own.
import { Context } from "mingo/core";
import * as query from "mingo/operators/query";
import { Query } from "mingo/query";
import type { Options } from "mingo/types";
import { update, updateMany, type Modifier } from "mingo/updater";
import { ensureArray, MingoError, resolve } from "mingo/util";
import { membership, type QueryOperator } from "./membership.ts";
import { ObjectId } from "bson";
import { InvalidQueryError, STORED_VERSION, type Doc, type Filter, type Projection, type SharedDoc } from "../types.ts";
import { assign, copyDocument, copyValue, namesOperator, shallowCopy, valueKey } from "./values.ts";
import { setTopLevel } from "./top-level.ts";
import { withoutKey } from "../../util/objects.ts";
import { addToSet } from "./add-to-set.ts";
import { isPlainObject } from "../../util/objects.ts";
import { SCRIPT_OPERATORS } from "../../util/operators.ts";
import { projectPaths } from "../../util/project-paths.ts";

/**
 * MongoDB's `$mod`: numbers only, truncated to integers (mingo's took the string "1" and null as
 * numbers, and did not truncate 5.5 before `% 4`). where.ts has checked the divisor and remainder.
 */
const $mod = (selector: string, operand: unknown): ((doc: Doc) => boolean) => {
  const [divisor, remainder] = operand as [number, number];
  const by = Math.trunc(divisor);
  const left = Math.trunc(remainder);
  return (doc) => ensureArray(resolve(doc, selector, { unwrapArray: true })).some((x) => typeof x === "number" && Math.trunc(x) % by === left);
};

/** aggregation.ts and geo.ts add their operators to this context when they are loaded. */
const context = Context.init({ query: { ...query, $mod: $mod as unknown as QueryOperator, $in: membership(false), $nin: membership(true) } });

const OPTIONS: Partial<Options> = { context, scriptEnabled: false };

/**
 * A function that imports a module (with what it needs) once and installs it; a failed import
 * is tried again by the next call, as by the next operation that needs it.
 */
function loader<M>(load: () => Promise<M>, install: (module: M) => void): () => Promise<void> {
  let loading: Promise<void> | null = null;
  return () =>
    (loading ??= load().then(install, (error: unknown) => {
      loading = null;
      throw error;
    }));
}

type Aggregation = typeof import("./aggregation.ts");
let aggregation: Aggregation | null = null;

type Geo = typeof import("./geo.ts");
let geo: Geo | null = null;

/** The operators and the stage that measure geometries (geo.ts, with turf). */
const GEO_OPERATORS = new Set(["$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$geoNear"]);

/** Whether a filter, update or pipeline uses a geo operator while geo.ts is not loaded yet. */
export function needsGeometry(...values: unknown[]): boolean {
  return geo === null && values.some((value) => namesOperator(value, GEO_OPERATORS));
}

/** Imports geo.ts and turf, and adds the geo operators. */
const loadGeo = loader(
  async () => {
    const module = await import("./geo.ts");
    await module.loadGeometry();
    return module;
  },
  (module) => {
    context.addQueryOps(module.geoQueryOperators).addPipelineOps({ $geoNear: module.$geoNear });
    geo = module;
  },
);

/**
 * For a filter with a $near, the document's distance by which results come nearest first (geo.ts);
 * null for any other. A filter with a $near had geo.ts loaded first (loadFor).
 */
export function nearDistance(filter: Filter): ((doc: Doc) => number) | null {
  return geo ? geo.nearDistance(filter) : null;
}

/** The query operator that evaluates aggregation expressions. */
const EXPRESSION_OPERATORS = new Set(["$expr"]);

/** Imports aggregation.ts and adds its operators. */
const loadAggregation = loader(
  () => import("./aggregation.ts"),
  (module) => {
    context.addExpressionOps(module.expressionOperators).addAccumulatorOps(module.accumulatorOperators).addPipelineOps(module.pipelineOperators);
    aggregation = module;
  },
);

/**
 * The parts of an update that are query conditions, the only ones that can name a query
 * operator: `$pull`'s, or a pipeline update's stages. Values `$set` writes are data, and a
 * PATCH's whole document was walked for operators on every write.
 */
function updateConditions(update: object | undefined): unknown {
  if (update === undefined || Array.isArray(update)) return update;
  return (update as { $pull?: unknown }).$pull;
}

/**
 * The imports an operation needs before it runs, started: turf for a geo operator, aggregation
 * for a pipeline or `$expr`. Null when nothing is missing, so that the operation awaits only
 * then, and otherwise runs as before without awaiting anything.
 */
export function loadFor(parts: { filter?: Filter; update?: object; pipeline?: Doc[] }): Promise<unknown> | null {
  const conditions = updateConditions(parts.update);
  // An id lookup, a $set: nothing that could name an operator, so nothing to look through.
  if (parts.filter === undefined && conditions === undefined && parts.pipeline === undefined) return null;
  const pending: Array<Promise<void>> = [];
  if (needsGeometry(parts.filter, conditions, parts.pipeline)) pending.push(loadGeo());
  const aggregates = () => parts.pipeline !== undefined || namesOperator(parts.filter, EXPRESSION_OPERATORS) || namesOperator(conditions, EXPRESSION_OPERATORS);
  if (aggregation === null && aggregates()) pending.push(loadAggregation());
  return pending.length === 0 ? null : Promise.all(pending);
}


export function refuseScripts(value: unknown): void {
  if (Array.isArray(value)) {
    for (const element of value) refuseScripts(element);
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      if (SCRIPT_OPERATORS.has(key)) throw new InvalidQueryError(`the ${key} operator is not allowed`);
      refuseScripts(value[key]);
    }
  }
}

/**
 * Runs mingo, reporting what it rejects (unknown operators, malformed arguments) as the caller's
 * error. So is a TypeError: an operand of the wrong shape that an operator does not check before
 * it uses it (`$unwind` of a number, `$bucket` boundaries that are no list, `$in` of a number in a
 * pipeline), which MongoDB refuses as a bad query and which was a 500 here.
 */
export function withMingo<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw queryError(error);
  }
}

function queryError(error: unknown): unknown {
  return error instanceof MingoError || error instanceof SyntaxError || error instanceof TypeError ? new InvalidQueryError(error.message, { cause: error }) : error;
}

/** Values whose equality mingo decides as valueKey does, with no special cases (null, NaN, regexes, documents, arrays). */
function isPlainScalar(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return !Number.isNaN(value);
    default:
      return value instanceof ObjectId || (value instanceof Date && !Number.isNaN(value.getTime()));
  }
}

/** A condition `{field: scalar}` of an equality filter, which needs neither mingo nor any operator loaded. */
function isScalarCondition(field: string, value: unknown): boolean {
  return !field.startsWith("$") && !field.includes(".") && isPlainScalar(value);
}

/** Whether the document holds the value whose valueKey is `key` at `field`: equal, or an array holding an equal element. */
function holds(doc: Doc, field: string, key: string): boolean {
  const value = Object.hasOwn(doc, field) ? doc[field] : undefined;
  return valueKey(value) === key || (Array.isArray(value) && value.some((element) => valueKey(element) === key));
}

/**
 * `{field: scalar, …}` on top-level fields, the filter of every read and write by `_id` (with
 * `_etag` for a conditional write), as a predicate built without mingo, whose Query costs a
 * copy of all its operator tables. Same matches as mingo's.
 */
function equalityTest(filter: Filter): ((doc: Doc) => boolean) | null {
  const conditions: Array<[string, string]> = [];
  for (const field of Object.keys(filter)) {
    const value = filter[field];
    if (!isScalarCondition(field, value)) return null;
    conditions.push([field, valueKey(value)]);
  }
  return (doc) => conditions.every(([field, key]) => holds(doc, field, key));
}

const ANY: (doc: Doc) => boolean = () => true;

/**
 * An item's read or write: `{_id: scalar}` and maybe more scalar equalities (`_etag` for a
 * conditional write). It names one document, found by its id (Collection.probe), so all it
 * needs is a test of the other conditions, which this returns; null for any other filter. Such
 * a filter names no operator: nothing to load (loadFor), no script to refuse, no `$near`.
 */
export function idLookup(filter: Filter): ((doc: Doc) => boolean) | null {
  if (!Object.hasOwn(filter, "_id")) return null;
  let others = 0;
  for (const field in filter) {
    if (!Object.hasOwn(filter, field) || !isScalarCondition(field, filter[field])) return null;
    if (field !== "_id") others++;
  }
  if (others === 0) return ANY;
  return (doc) => {
    for (const field in filter) if (field !== "_id" && !holds(doc, field, valueKey(filter[field]))) return false;
    return true;
  };
}

/** A filter as a predicate; throws InvalidQueryError for a filter MongoDB would refuse. */
export function compileFilter(given: Filter): (doc: Doc) => boolean {
  refuseScripts(given);
  // A query's `$comment` annotates it for MongoDB's logs and matches nothing; mingo refuses it.
  const filter = "$comment" in given ? withoutKey(given, "$comment") : given;
  if (Object.keys(filter).length === 0) return () => true;
  const equal = equalityTest(filter);
  if (equal) return equal;
  const compiled = withMingo(() => new Query(geo ? geo.foldNearBounds(filter) : filter, OPTIONS));
  // Evaluated too: an `$expr` fails only on a document (`{"$add": "x"}`).
  return (doc) => {
    try {
      return compiled.test(doc);
    } catch (error) {
      throw queryError(error);
    }
  };
}

/** Which fields a projection of top-level fields keeps; null for one mingo must apply. */
type FieldTest = ((key: string) => boolean) | null;

/**
 * The field test of each frozen projection (a resource's default, made once and frozen by
 * src/query/projection.ts): every read of the resource sends the same object, whose test was
 * worked out again per read, a tenth of a GET item on Deno. Unfrozen ones may change: not kept.
 */
const fieldTests = new WeakMap<Projection, FieldTest>();

function fieldTest(fields: Projection): FieldTest {
  if (!Object.isFrozen(fields)) return makeFieldTest(fields);
  let test = fieldTests.get(fields);
  if (test === undefined) fieldTests.set(fields, (test = makeFieldTest(fields)));
  return test;
}

function makeFieldTest(fields: Projection): FieldTest {
  const keys = Object.keys(fields);
  let including = false;
  let excluding = false;
  for (const key of keys) {
    if (key === "_id") continue;
    if (fields[key]) including = true;
    else excluding = true;
  }
  // mingo also refuses what MongoDB refuses: a projection mixing inclusion and exclusion.
  if ((including && excluding) || keys.some((key) => key.includes(".") || key.startsWith("$"))) return null;
  const listed = (key: string) => Object.hasOwn(fields, key);
  const inclusive = keys.some((key) => fields[key]);
  return inclusive ? (key) => (key === "_id" ? !listed(key) || !!fields._id : listed(key) && !!fields[key]) : (key) => !listed(key);
}

/**
 * Projects documents. One naming top-level fields only (all Eve sends) is applied here, in the
 * document's own field order as MongoDB keeps it: mingo costs a copy of all its operator tables
 * per call, more than the rest of a read by `_id`. Dotted paths go to mingo. With `copies`, the
 * results share nothing with `docs` (the memory store's reads), made in the same pass: a page
 * was projected into new objects and then copied whole again.
 */
export function project(docs: Doc[], fields: Projection, copies = false): Doc[] {
  const keep = fieldTest(fields);
  if (!keep) return docs.map((doc) => projectDotted(copies ? copyDocument(doc) : doc, fields));
  return docs.map((doc) => {
    const out: Doc = {};
    // assign keeps a stored "__proto__" field a field.
    for (const key of Object.keys(doc)) if (keep(key)) assign(out, key, copies ? copyValue(doc[key]) : doc[key]);
    return out;
  });
}

/**
 * A projection naming dotted paths, in the document's field order (mingo's put the projected
 * sub-documents after the other fields), with `_id` kept unless excluded, as MongoDB keeps it.
 * A projection mixing inclusion and exclusion (other than of `_id`) is refused, as MongoDB does.
 */
function projectDotted(doc: Doc, fields: Projection): Doc {
  const { _id: id, ...paths } = fields;
  const flags = new Set(Object.values(paths));
  const operator = Object.keys(paths).find((path) => path.startsWith("$"));
  if (operator !== undefined) throw new InvalidQueryError(`unknown projection operator ${operator}`);
  if (flags.size > 1) throw new InvalidQueryError("a projection cannot mix inclusion and exclusion");
  if (flags.has(1)) return id === 0 || !Object.hasOwn(doc, "_id") ? projectPaths(doc, paths) : projectPaths(doc, { _id: 1, ...paths });
  return projectPaths(doc, id === 0 ? fields : paths);
}

/**
 * Projects documents for a shared read (FindQuery.shared): a document the projection keeps
 * whole is handed out as it is, any other as a copy marked with the stored document it shows.
 */
export function projectShared(docs: Doc[], fields: Projection): SharedDoc[] {
  const keep = fieldTest(fields);
  if (!keep) return project(docs, fields).map((copy: SharedDoc, i) => ((copy[STORED_VERSION] = docs[i]!), copy));
  return docs.map((doc) => {
    for (const key in doc) {
      if (keep(key)) continue;
      const [copy] = project([doc], fields) as SharedDoc[];
      copy![STORED_VERSION] = doc;
      return copy!;
    }
    return doc;
  });
}

/** The update mingo applies; `$addToSet` is everest's own (src/drivers/memory/add-to-set.ts). */
function mingoUpdate(doc: Doc, modifier: Record<string, unknown>): string[] {
  // Without one, no copy of the modifier on every update.
  if (modifier.$addToSet === undefined) return update(doc, modifier as Modifier<Doc>, undefined, undefined, { cloneMode: "none", queryOptions: OPTIONS });
  const { $addToSet, ...rest } = modifier;
  const changed = addToSet(doc, $addToSet as Doc);
  return Object.keys(rest).length === 0 ? changed : [...changed, ...update(doc, rest as Modifier<Doc>, undefined, undefined, { cloneMode: "none", queryOptions: OPTIONS })];
}

/** Applies an update to `doc` in place; the changed paths. */
export function applyUpdate(doc: Doc, modifier: Record<string, unknown>): string[] {
  return setTopLevel(doc, modifier) ?? mingoUpdate(doc, modifier);
}

/**
 * What an update makes of a stored document, which is left as it was. Top-level $set/$unset
 * (every write everest itself makes) go to a shallow copy that shares the untouched values, as
 * the store never changes a stored value in place: a PATCH then copies one object, not the
 * document's every sub-document, array and date. Anything else is mingo's, on a deep copy.
 */
export function updatedCopy(doc: Doc, modifier: Record<string, unknown>): { next: Doc; changed: string[] } {
  const shallow = shallowCopy(doc);
  const changed = setTopLevel(shallow, modifier);
  if (changed) return { next: shallow, changed };
  const next = copyDocument(doc);
  return { next, changed: mingoUpdate(next, modifier) };
}

/**
 * What an update makes of each of several stored documents, which are left as they were: as
 * updatedCopy, with mingo's updater, where it is needed, set up once for all the documents that
 * need it (its context is the dearer part of a small document's update).
 */
export function updatedCopies(docs: Doc[], modifier: Record<string, unknown>): Doc[] {
  const next: Doc[] = [];
  const rest: number[] = [];
  docs.forEach((doc, i) => {
    const shallow = shallowCopy(doc);
    if (setTopLevel(shallow, modifier)) next[i] = shallow;
    else rest.push(i);
  });
  if (rest.length > 0) {
    const copies = rest.map((i) => copyDocument(docs[i]!));
    if ("$addToSet" in modifier) for (const copy of copies) mingoUpdate(copy, modifier);
    else updateMany(copies, {}, modifier as Modifier<Doc>, { cloneMode: "none" }, OPTIONS);
    rest.forEach((i, at) => (next[i] = copies[at]!));
  }
  return next;
}

/** Runs a pipeline; loadFor({pipeline}) must have been awaited. */
export function runPipeline(stages: Doc[], input: Doc[], collectionResolver: (name: string) => Doc[]): Doc[] {
  refuseScripts(stages);
  if (aggregation === null) throw new Error("runPipeline before loadFor({ pipeline }) had loaded aggregation.ts");
  return withMingo(() => aggregation!.aggregate(stages, input, { ...OPTIONS, collectionResolver }));
}
