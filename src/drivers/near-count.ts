// MongoDB refuses $near and $nearSphere in a count (countDocuments runs a $match, where they are
// not allowed), yet a paginated GET counts what its `where` matches. Its documentation's
// remedy: count the same documents with $geoWithin circles — $centerSphere for GeoJSON points
// (meters) and $nearSphere pairs (radians), $center for legacy $near pairs.
import type { Filter } from "./types.ts";

/** MongoDB's radius of the Earth, which turns meters into the radians of $centerSphere. */
export const EARTH_RADIUS_METERS = 6378100;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** The $geoWithin conditions equivalent to one $near condition, ANDed. */
function withinConditions(field: string, op: "$near" | "$nearSphere", condition: Json): Filter[] {
  const operand = condition[op];
  let center: unknown;
  let scale: number;
  let circle: "$center" | "$centerSphere";
  let bounds: Json;
  if (isObject(operand) && isObject(operand.$geometry)) {
    center = operand.$geometry.coordinates;
    scale = 1 / EARTH_RADIUS_METERS;
    circle = "$centerSphere";
    bounds = { ...condition, ...operand };
  } else {
    center = operand;
    scale = 1;
    circle = op === "$nearSphere" ? "$centerSphere" : "$center";
    bounds = condition;
  }
  const within = (radius: number) => ({ $geoWithin: { [circle]: [center, radius * scale] } });
  const { [op]: _near, $maxDistance: _max, $minDistance: _min, ...others } = condition;
  const conditions: Filter[] = [];
  if (Object.keys(others).length > 0) conditions.push({ [field]: others });
  conditions.push({ [field]: typeof bounds.$maxDistance === "number" ? within(bounds.$maxDistance) : { $exists: true } });
  if (typeof bounds.$minDistance === "number" && bounds.$minDistance > 0) conditions.push({ [field]: { $not: within(bounds.$minDistance) } });
  return conditions;
}

/** The filter with every $near/$nearSphere made countable; the filter itself when it has none. */
export function nearAsWithin(filter: Filter): Filter {
  let changed = false;
  const parts: Filter[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if ((key === "$and" || key === "$or" || key === "$nor") && Array.isArray(condition)) {
      const branches = condition.map((branch) => (isObject(branch) ? nearAsWithin(branch) : branch));
      if (branches.some((branch, i) => branch !== condition[i])) changed = true;
      parts.push({ [key]: branches });
      continue;
    }
    const op = !key.startsWith("$") && isObject(condition) ? (["$near", "$nearSphere"] as const).find((o) => o in condition) : undefined;
    if (op) {
      changed = true;
      parts.push(...withinConditions(key, op, condition as Json));
    } else {
      parts.push({ [key]: condition });
    }
  }
  if (!changed) return filter;
  return parts.length === 1 ? parts[0]! : { $and: parts };
}
