import { isPlainObject } from "../util/objects.ts";
// GeoJSON type checks (Eve's eve/io/mongo/geo.py, made as strict as MongoDB's 2dsphere index
// is, so that a document the validator accepts is one the database can index).

type Json = Record<string, unknown>;

export const GEO_TYPES = {
  point: "Point",
  multipoint: "MultiPoint",
  linestring: "LineString",
  multilinestring: "MultiLineString",
  polygon: "Polygon",
  multipolygon: "MultiPolygon",
  geometrycollection: "GeometryCollection",
  feature: "Feature",
  featurecollection: "FeatureCollection",
} as const;

export type GeoTypeName = keyof typeof GEO_TYPES;


const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/**
 * Longitude and latitude within their bounds (the 2dsphere index refuses others), and an optional
 * altitude (which it ignores).
 */
export function isPosition(value: unknown): boolean {
  return Array.isArray(value) && (value.length === 2 || value.length === 3) && value.every(isNumber) && Math.abs(value[0]) <= 180 && Math.abs(value[1]) <= 90;
}

function isLine(value: unknown): boolean {
  return Array.isArray(value) && value.length >= 2 && value.every(isPosition);
}

/** A closed ring: at least four positions, the last equal to the first. */
function isRing(value: unknown): boolean {
  if (!Array.isArray(value) || value.length < 4 || !value.every(isPosition)) return false;
  const first = value[0] as number[];
  const last = value[value.length - 1] as number[];
  return first[0] === last[0] && first[1] === last[1];
}

const isPolygonCoordinates = (value: unknown) => Array.isArray(value) && value.length >= 1 && value.every(isRing);

const listOf = (test: (v: unknown) => boolean) => (value: unknown) => Array.isArray(value) && value.every(test);

const COORDINATES: Record<string, (value: unknown) => boolean> = {
  Point: isPosition,
  MultiPoint: listOf(isPosition),
  LineString: isLine,
  MultiLineString: listOf(isLine),
  Polygon: isPolygonCoordinates,
  MultiPolygon: listOf(isPolygonCoordinates),
};

/** Eve allows exactly two members (`type` and the payload) unless custom fields are allowed. */
function members(value: Json, name: string, allowCustom: boolean): boolean {
  return value.type === name && (allowCustom || Object.keys(value).length === 2);
}

function isGeometry(value: unknown, allowCustom: boolean): boolean {
  if (!isPlainObject(value) || typeof value.type !== "string") return false;
  if (value.type === "GeometryCollection") {
    return members(value, "GeometryCollection", allowCustom) && Array.isArray(value.geometries) && value.geometries.every((g) => isGeometry(g, allowCustom));
  }
  const coordinates = COORDINATES[value.type];
  return !!coordinates && members(value, value.type, allowCustom) && coordinates(value.coordinates);
}

function isFeature(value: unknown, allowCustom: boolean): boolean {
  return isPlainObject(value) && members(value, "Feature", allowCustom) && isGeometry(value.geometry, allowCustom);
}

/** The type test of one GeoJSON schema type. */
export function geoTest(type: GeoTypeName, allowCustom: boolean): (value: unknown) => boolean {
  const name = GEO_TYPES[type];
  switch (type) {
    case "feature":
      return (value) => isFeature(value, allowCustom);
    case "featurecollection":
      return (value) =>
        isPlainObject(value) && members(value, name, allowCustom) && Array.isArray(value.features) && value.features.every((f) => isFeature(f, allowCustom));
    default:
      return (value) => isPlainObject(value) && value.type === name && isGeometry(value, allowCustom);
  }
}
