// MongoDB's geospatial operators for the memory driver, as mingo operators over the turf
// modules: $near and $nearSphere (GeoJSON points in meters, legacy pairs in coordinate units or
// radians, $minDistance/$maxDistance, ordered by distance), $geoWithin ($geometry, $box,
// $polygon, $center, $centerSphere), $geoIntersects, and the $geoNear stage. One approximation:
// the distance to a stored geometry other than a point is 0 when it contains or touches the
// point, otherwise the distance to its nearest vertex (MongoDB measures to the nearest edge).
// This module and turf are imported on first use: an operation that names a geo operator awaits
// them first (mingo.ts, loadFor, which then adds the operators to mingo's context), and the
// operators, synchronous as mingo's are, find turf loaded.
import type { Geometry, MultiPolygon, Polygon, Position } from "geojson";
import type { Options } from "mingo/types";
import { Lazy, type Iterator } from "mingo/lazy";
import { Query } from "mingo/query";
import { MingoError, resolve, setValue } from "mingo/util";
import { EARTH_RADIUS_METERS } from "../near-count.ts";
import type { Doc, Filter } from "../types.ts";

type Json = Record<string, unknown>;

type Turf = typeof import("./turf.ts");
let turf: Turf | null = null;

/** Imports turf: mingo.ts's loadFor does, once, as it loads this module. */
export async function loadGeometry(): Promise<void> {
  turf = await import("./turf.ts");
}

function geometry(): Turf {
  if (turf === null) throw new Error("a geo operator ran before loadGeometry() had loaded turf");
  return turf;
}

const distance: Turf["distance"] = (...args) => geometry().distance(...args);
const booleanIntersects: Turf["booleanIntersects"] = (...args) => geometry().booleanIntersects(...args);
const booleanWithin: Turf["booleanWithin"] = (...args) => geometry().booleanWithin(...args);

/** The shape of mingo's own query operators (`$gt` …), which its context accepts. */
type QueryOperator = (selector: string, value: unknown, options: Options) => (doc: Doc) => boolean;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isPosition = (value: unknown): value is Position =>
  Array.isArray(value) && value.length >= 2 && value.every((n) => typeof n === "number" && Number.isFinite(n));

function fail(message: string): never {
  throw new MingoError(message);
}

const GEOMETRY_TYPES = new Set(["Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"]);

function isGeometry(value: unknown): value is Geometry {
  if (!isObject(value) || typeof value.type !== "string" || !GEOMETRY_TYPES.has(value.type)) return false;
  return value.type === "GeometryCollection" ? Array.isArray(value.geometries) && value.geometries.every(isGeometry) : Array.isArray(value.coordinates);
}

/** What a document holds at a path, as geometries: GeoJSON objects, or legacy [x, y] pairs. */
function storedGeometries(doc: Doc, path: string): Geometry[] {
  const value = resolve(doc, path);
  if (isPosition(value)) return [{ type: "Point", coordinates: value }];
  const values = Array.isArray(value) ? value : [value];
  return values.flatMap((v) => (isGeometry(v) ? [v] : isPosition(v) ? [{ type: "Point", coordinates: v } as Geometry] : []));
}

function vertices(geometry: Geometry): Position[] {
  if (geometry.type === "GeometryCollection") return geometry.geometries.flatMap(vertices);
  const walk = (c: unknown): Position[] => (isPosition(c) ? [c] : Array.isArray(c) ? c.flatMap(walk) : []);
  return walk(geometry.coordinates);
}

/** Turf refuses some shapes (and malformed stored data); such a document simply does not match. */
function safely(test: () => boolean): boolean {
  try {
    return test();
  } catch {
    return false;
  }
}

// ---- $near / $nearSphere ----------------------------------------------------------------

interface NearSpec {
  /** Distance from the query point to one position, in the units the bounds are given in. */
  measure(position: Position): number;
  point: Position;
  min: number;
  max: number;
}

function bound(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !(value >= 0)) fail(`${name} must be a non-negative number`);
  return value;
}

/**
 * `{$geometry: Point, $maxDistance?, $minDistance?}` measures in meters on the sphere; a legacy
 * pair `[x, y]` (bounds beside it) in coordinate units for $near, in radians for $nearSphere.
 */
function parseNear(value: unknown, spherical: boolean, siblings: Json = {}): NearSpec {
  if (isObject(value) && "$geometry" in value) {
    const geometry = value.$geometry;
    if (!isObject(geometry) || geometry.type !== "Point" || !isPosition(geometry.coordinates)) fail("$near requires a GeoJSON Point as $geometry");
    const point = geometry.coordinates;
    return {
      point,
      measure: (position) => distance(point, position, { units: "radians" }) * EARTH_RADIUS_METERS,
      min: bound(value.$minDistance ?? siblings.$minDistance, "$minDistance") ?? 0,
      max: bound(value.$maxDistance ?? siblings.$maxDistance, "$maxDistance") ?? Infinity,
    };
  }
  if (!isPosition(value)) fail("$near requires a GeoJSON point ({$geometry: …}) or a coordinate pair");
  const point = value;
  return {
    point,
    measure: spherical ? (position) => distance(point, position, { units: "radians" }) : (position) => Math.hypot(position[0]! - point[0]!, position[1]! - point[1]!),
    min: bound(siblings.$minDistance, "$minDistance") ?? 0,
    max: bound(siblings.$maxDistance, "$maxDistance") ?? Infinity,
  };
}

function distanceTo(spec: NearSpec, geometry: Geometry): number {
  if (geometry.type === "Point") return spec.measure(geometry.coordinates);
  if (safely(() => booleanIntersects({ type: "Point", coordinates: spec.point }, geometry))) return 0;
  return Math.min(...vertices(geometry).map(spec.measure));
}

/** The document's nearest geometry at `path` and its distance, Infinity when it holds none. */
function nearest(spec: NearSpec, doc: Doc, path: string): { distance: number; geometry?: Geometry } {
  let best: { distance: number; geometry?: Geometry } = { distance: Infinity };
  for (const geometry of storedGeometries(doc, path)) {
    const distance = distanceTo(spec, geometry);
    if (distance < best.distance) best = { distance, geometry };
  }
  return best;
}

function nearestDistance(spec: NearSpec, doc: Doc, path: string): number {
  return nearest(spec, doc, path).distance;
}

/** Infinity: no geometry there, which no bound admits. */
function inBounds(spec: NearSpec, distance: number): boolean {
  return Number.isFinite(distance) && distance >= spec.min && distance <= spec.max;
}

/** Key of a $near operand whose sibling bounds were folded in (`{loc: {$near: [x, y], $maxDistance: 5}}`). */
const SIBLINGS = "$$siblings";

/** A $near operand as given, or as foldNearBounds left it. */
function nearSpec(operand: unknown, spherical: boolean, siblings: Json = {}): NearSpec {
  if (isObject(operand) && SIBLINGS in operand) return parseNear(operand.operand, spherical, operand[SIBLINGS] as Json);
  return parseNear(operand, spherical, siblings);
}

function nearOperator(spherical: boolean): QueryOperator {
  return (selector: string, value: unknown) => {
    const spec = nearSpec(value, spherical);
    return (doc: Doc) => {
      return inBounds(spec, nearestDistance(spec, doc, selector));
    };
  };
}

// ---- $geoWithin / $geoIntersects --------------------------------------------------------

function ring(positions: Position[]): Position[] {
  const first = positions[0]!;
  const last = positions[positions.length - 1]!;
  return first[0] === last[0] && first[1] === last[1] ? positions : [...positions, first];
}

function withinTest(shape: Json): (geometry: Geometry) => boolean {
  if ("$geometry" in shape) {
    const area = shape.$geometry;
    if (!isGeometry(area) || (area.type !== "Polygon" && area.type !== "MultiPolygon")) fail("$geoWithin requires a Polygon or MultiPolygon as $geometry");
    return (geometry) => safely(() => booleanWithin(geometry, area as Polygon | MultiPolygon));
  }
  if ("$box" in shape) {
    const box = shape.$box;
    if (!Array.isArray(box) || box.length !== 2 || !box.every(isPosition)) fail("$box requires two corner points");
    const [[x1, y1], [x2, y2]] = box as [Position, Position];
    const [minX, maxX, minY, maxY] = [Math.min(x1!, x2!), Math.max(x1!, x2!), Math.min(y1!, y2!), Math.max(y1!, y2!)];
    return (geometry) => vertices(geometry).every(([x, y]) => x! >= minX && x! <= maxX && y! >= minY && y! <= maxY);
  }
  if ("$polygon" in shape) {
    const points = shape.$polygon;
    if (!Array.isArray(points) || points.length < 3 || !points.every(isPosition)) fail("$polygon requires at least three points");
    const area: Polygon = { type: "Polygon", coordinates: [ring(points as Position[])] };
    return (geometry) => safely(() => booleanWithin(geometry, area));
  }
  for (const [name, spherical] of [["$center", false], ["$centerSphere", true]] as const) {
    if (!(name in shape)) continue;
    const circle = shape[name];
    if (!Array.isArray(circle) || circle.length !== 2 || !isPosition(circle[0]) || typeof circle[1] !== "number") fail(`${name} requires [[x, y], radius]`);
    const [center, radius] = circle as [Position, number];
    const measure = spherical ? (p: Position) => distance(center, p, { units: "radians" }) : (p: Position) => Math.hypot(p[0]! - center[0]!, p[1]! - center[1]!);
    return (geometry) => vertices(geometry).every((p) => measure(p) <= radius);
  }
  fail("$geoWithin requires $geometry, $box, $polygon, $center or $centerSphere");
}

const $geoWithin: QueryOperator = (selector: string, value: unknown) => {
  if (!isObject(value)) fail("$geoWithin requires an object");
  const within = withinTest(value);
  return (doc: Doc) => {
    const geometries = storedGeometries(doc, selector);
    return geometries.length > 0 && geometries.every(within);
  };
};

const $geoIntersects: QueryOperator = (selector: string, value: unknown) => {
  const shape = isObject(value) ? value.$geometry : undefined;
  if (!isGeometry(shape)) fail("$geoIntersects requires a GeoJSON geometry as $geometry");
  return (doc: Doc) => storedGeometries(doc, selector).some((g) => safely(() => booleanIntersects(g, shape)));
};

export const geoQueryOperators: Record<string, QueryOperator> = {
  $near: nearOperator(false),
  $nearSphere: nearOperator(true),
  $geoWithin,
  $geoIntersects,
};

// ---- $geoNear ---------------------------------------------------------------------------

/** Without `key`, the one top-level field that holds geometries (MongoDB: the one geo index). */
function inferKey(docs: Doc[]): string {
  const keys = new Set<string>();
  for (const doc of docs) for (const [key, value] of Object.entries(doc)) if (isGeometry(value)) keys.add(key);
  if (keys.size !== 1) fail(`$geoNear requires 'key' here: ${keys.size === 0 ? "no field holds GeoJSON" : `several fields hold GeoJSON (${[...keys].join(", ")})`}`);
  return [...keys][0]!;
}

/**
 * The `$geoNear` stage: the documents `query` matches, within the bounds, nearest first, with
 * their distance (times `distanceMultiplier`) in `distanceField` and, with `includeLocs`, the
 * geometry measured to.
 */
export const $geoNear = (coll: Iterator, expr: unknown, options: Options): Iterator => {
  if (!isObject(expr)) fail("$geoNear requires an object");
  const { near, distanceField, spherical, maxDistance, minDistance, query, key, includeLocs, distanceMultiplier = 1 } = expr;
  if (typeof distanceField !== "string" || distanceField === "") fail("$geoNear requires distanceField");
  if (key !== undefined && typeof key !== "string") fail("$geoNear key must be a field path");
  if (includeLocs !== undefined && typeof includeLocs !== "string") fail("$geoNear includeLocs must be a field path");
  if (typeof distanceMultiplier !== "number") fail("$geoNear distanceMultiplier must be a number");
  if (query !== undefined && !isObject(query)) fail("$geoNear query must be an object");
  const bounds = { $maxDistance: maxDistance, $minDistance: minDistance };
  const spec = isObject(near) ? parseNear({ $geometry: near }, true, bounds) : parseNear(near, spherical === true, bounds);
  const matches = query ? new Query(query, options) : null;
  return coll.transform((docs: Doc[]) => {
    const path = key ?? (docs.length > 0 ? inferKey(docs) : "");
    const found: Array<{ doc: Doc; distance: number }> = [];
    for (const doc of docs) {
      if (matches && !matches.test(doc)) continue;
      const { distance, geometry } = nearest(spec, doc, path);
      if (!inBounds(spec, distance)) continue;
      const out = { ...doc };
      setValue(out, distanceField, distance * distanceMultiplier);
      if (includeLocs) setValue(out, includeLocs, geometry);
      found.push({ doc: out, distance });
    }
    found.sort((a, b) => a.distance - b.distance);
    return Lazy(found.map(({ doc }) => doc));
  });
};

// ---- filter rewriting and ordering ------------------------------------------------------

const NEAR = ["$near", "$nearSphere"] as const;

/**
 * MongoDB accepts $minDistance/$maxDistance beside a $near, where mingo would look for operators
 * of their own: fold them into the $near operand. Anything else is returned as it was.
 */
export function foldNearBounds(filter: Filter): Filter {
  let changed = false;
  const out: Filter = {};
  for (const [key, condition] of Object.entries(filter)) {
    if ((key === "$and" || key === "$or" || key === "$nor") && Array.isArray(condition)) {
      const branches = condition.map((branch) => (isObject(branch) ? foldNearBounds(branch) : branch));
      changed ||= branches.some((b, i) => b !== condition[i]);
      out[key] = branches;
    } else if (!key.startsWith("$") && isObject(condition) && NEAR.some((op) => op in condition) && ("$maxDistance" in condition || "$minDistance" in condition)) {
      const { $maxDistance, $minDistance, ...rest } = condition;
      const op = NEAR.find((o) => o in rest)!;
      const siblings: Json = {};
      if ($maxDistance !== undefined) siblings.$maxDistance = $maxDistance;
      if ($minDistance !== undefined) siblings.$minDistance = $minDistance;
      out[key] = { ...rest, [op]: { [SIBLINGS]: siblings, operand: rest[op] } };
      changed = true;
    } else {
      out[key] = condition;
    }
  }
  return changed ? out : filter;
}

/**
 * For a filter with a $near (top level or in a top-level $and, where MongoDB allows it): the
 * document's distance, by which results come nearest first. Null when there is none.
 */
export function nearDistance(filter: Filter): ((doc: Doc) => number) | null {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(condition)) {
      for (const branch of condition) {
        const found = isObject(branch) ? nearDistance(branch) : null;
        if (found) return found;
      }
    } else if (!key.startsWith("$") && isObject(condition)) {
      const op = NEAR.find((o) => o in condition);
      if (!op) continue;
      const spec = nearSpec(condition[op], op === "$nearSphere", { $maxDistance: condition.$maxDistance, $minDistance: condition.$minDistance });
      return (doc) => nearestDistance(spec, doc, key);
    }
  }
  return null;
}
