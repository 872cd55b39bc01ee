// `?where=`: Mongo JSON or the Python-style syntax, checked and converted the way Eve's Mongo
// layer does (eve/io/mongo/mongo.py `_convert_where_request_to_dict`, `_sanitize`,
// `_mongotize`; eve/utils.py `validate_filters`), with these differences:
// - both syntaxes are sanitized (Eve skips the Python one, letting `"$where" == "…"` through);
// - `$where`, `$function` and `$accumulator` (server-side JavaScript) are refused even when
//   DB_QUERY_BLACKLIST is emptied, and prototype keys are refused anywhere;
// - strings become ObjectId / Date by the field's schema type, not by their look alone, so a
//   24-hex or date-like value of a string field still matches what was stored (Eve casts every
//   such string, the pitfall `query_objectid_as_string` exists for). Fields the schema does not
//   type keep Eve's cast, which `query_objectid_as_string` turns off for ObjectIds;
// - VALIDATE_FILTERS checks converted values and operator operands (Eve validates raw JSON, so a
//   date string or `{"$gt": 1}` is never valid there).
import { ObjectId } from "bson";
import type { Filter } from "../drivers/types.ts";
import { badRequest, HttpError } from "../errors.ts";
import { parseDate } from "../render/dates.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { GEO_TYPES, geoTest, isPosition, type GeoTypeName } from "../validation/geo.ts";
import { castUntyped, parseJsonOrUndefined } from "./common.ts";
import { conditionFits, FieldTypes } from "./field-types.ts";
import { invalidField, probesWithheld } from "./withheld.ts";
import type { Mask } from "../auth/field-masks.ts";
import { isPlainObject, isRefusedKey } from "../util/objects.ts";
import { isObjectIdHex } from "../util/objectid.ts";
import { operatorRefusal, queryWhitelist } from "../util/operators.ts";
import { levelsOf } from "../http/json-shape.ts";

const LOGICAL = new Set(["$and", "$or", "$nor"]);

/**
 * Operators of a whole query, which MongoDB refuses in a field's condition ("unknown operator").
 * mingo takes `{field: {$expr: x}}` as the constant x: memory and SQLite matched every document
 * or none, and a write by filter changed or deleted the whole collection past its where guard.
 */
const QUERY_ONLY = new Set([...LOGICAL, "$expr", "$text", "$comment"]);

/** Operators whose operands are values of the field, hence converted like it. */
const VALUE_OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$not", "$elemMatch"]);

/** Long enough for any sensible search, short enough to bound what one pattern can cost. */
export const MAX_REGEX_LENGTH = 256;

/**
 * A client's `$regex` (once DB_QUERY_BLACKLIST allows it) runs inside the server on the memory
 * driver: it must be a string of bounded length that compiles, or the request is refused.
 */
function checkRegex(operand: unknown): void {
  if (typeof operand !== "string") throw badRequest("$regex expects a string");
  if (operand.length > MAX_REGEX_LENGTH) throw badRequest(`$regex longer than ${MAX_REGEX_LENGTH} characters`);
  try {
    new RegExp(operand);
  } catch {
    throw badRequest("$regex is not a valid regular expression");
  }
}

/** The operators a resource's where clauses may not and may also use, from the settings alone. */
type OperatorLists = { blacklist: Set<string>; whitelist: Set<string> };
const operatorLists = new WeakMap<Resource, OperatorLists>();

function operatorListsOf(resource: Resource, config: Config): OperatorLists {
  let lists = operatorLists.get(resource);
  if (!lists) {
    lists = {
      blacklist: new Set(config.DB_QUERY_BLACKLIST),
      whitelist: queryWhitelist(resource.raw, config.DB_QUERY_WHITELIST),
    };
    operatorLists.set(resource, lists);
  }
  return lists;
}

class WhereWalker {
  private readonly types: FieldTypes;
  private readonly blacklist: Set<string>;
  private readonly whitelist: Set<string>;
  private readonly allowed: string[];

  constructor(
    private readonly resource: Resource,
    private readonly config: Config,
    /** The fields the caller may not read (docs/contracts.md §4), or null. */
    private readonly hidden: Mask | null,
  ) {
    this.types = new FieldTypes(resource, config);
    ({ blacklist: this.blacklist, whitelist: this.whitelist } = operatorListsOf(resource, config));
    this.allowed = resource.allowed_filters;
  }

  private checkKey(key: string, depth: number, operand: unknown): void {
    // A dotted path's parts are levels too: a store nests an expression per part (SQLite's is bounded).
    if (depth + levelsOf(key) - 1 > this.config.MAX_JSON_DEPTH) throw badRequest("where clause nested too deeply");
    if (isRefusedKey(key)) throw badRequest(`refused key '${key}'`);
    const refusal = operatorRefusal(key, this.blacklist, this.whitelist);
    if (refusal) throw badRequest(refusal);
    if (key === "$regex") checkRegex(operand);
  }

  /** A query document: field conditions and logical operators. */
  query(query: Record<string, unknown>, depth: number): Filter {
    const out: Filter = {};
    for (const [key, value] of Object.entries(query)) {
      this.checkKey(key, depth, value);
      if (LOGICAL.has(key)) {
        if (!Array.isArray(value) || value.length === 0 || !value.every(isPlainObject)) {
          throw badRequest(`operator '${key}' expects a list of sub-queries`);
        }
        out[key] = value.map((member) => this.query(member, depth + 2));
      } else if (key.startsWith("$")) {
        // $expr, $text, $jsonSchema reach fields by other means than a key: not where some are withheld.
        if (this.hidden && key !== "$comment") throw invalidField("filter", key);
        out[key] = this.opaque(value, depth + 1);
      } else {
        this.checkAllowed(key);
        const converted = this.value(value, key, depth + levelsOf(key));
        if ((this.resource.validate_filters && !this.fits(key, converted)) || (this.hidden && probesWithheld(this.hidden, key, converted))) {
          throw invalidField("filter", key);
        }
        out[key] = converted;
      }
    }
    return out;
  }

  /** ALLOWED_FILTERS entries cover their sub-fields: `location` allows `location.city`. */
  private checkAllowed(key: string): void {
    if (this.allowed.includes("*")) return;
    for (let path = key; path; path = path.slice(0, Math.max(0, path.lastIndexOf(".")))) {
      if (this.allowed.includes(path)) return;
    }
    throw new HttpError(400, `filter on '${key}' not allowed`);
  }

  /**
   * A field's condition: converted by the field's type, through its operators and sub-fields.
   * `elements`: an `$elemMatch` operand, a query of the elements, where `$and`, `$or` and `$nor` stand.
   */
  private value(value: unknown, path: string, depth: number, elements = false): unknown {
    if (typeof value === "string") return this.cast(value, path);
    if (Array.isArray(value)) {
      if (depth > this.config.MAX_JSON_DEPTH) throw badRequest("where clause nested too deeply");
      return value.map((item) => this.value(item, path, depth + 1));
    }
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      this.checkKey(key, depth, member);
      if (!key.startsWith("$")) out[key] = this.value(member, `${path}.${key}`, depth + levelsOf(key));
      else if (QUERY_ONLY.has(key) && !(elements && LOGICAL.has(key))) throw badRequest(`unknown operator ${key}`);
      else if (VALUE_OPERATORS.has(key)) out[key] = this.value(member, path, depth + 1, key === "$elemMatch");
      else out[key] = this.opaque(member, depth + 1);
    }
    return out;
  }

  /** Operands that are not field values ($regex, $size, $expr …): checked, not converted. */
  private opaque(value: unknown, depth: number): unknown {
    if (Array.isArray(value)) {
      if (depth > this.config.MAX_JSON_DEPTH) throw badRequest("where clause nested too deeply");
      return value.map((item) => this.opaque(item, depth + 1));
    }
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      this.checkKey(key, depth, member);
      out[key] = this.opaque(member, depth + 1);
    }
    return out;
  }

  private cast(text: string, path: string): unknown {
    const types = this.types.scalarTypes(path);
    if (types === undefined) return castUntyped(text, this.resource, this.config);
    if (types.has("objectid") && isObjectIdHex(text)) return new ObjectId(text);
    if (types.has("datetime") || types.has("date")) return parseDate(text, this.config.DATE_FORMAT) ?? text;
    return text;
  }

  /** VALIDATE_FILTERS: the field exists and the condition's values suit its rule. */
  private fits(path: string, condition: unknown): boolean {
    const rule = this.types.ruleAt(path);
    return rule !== undefined && conditionFits(rule, condition);
  }
}

/**
 * `?where=` as a driver filter; `{}` for an empty value or where allowed_filters is empty (Eve then
 * ignores it); a 400 for malformed or refused input, and for a field `hidden` withholds. The Python syntax is a promise: its parser is
 * imported on first use, out of what a Worker loads at start (test/runtimes/workers-bundle.test.ts).
 */
export function parseWhere(raw: string, resource: Resource, config: Config, hidden: Mask | null = null): Filter | Promise<Filter> {
  if (!raw || resource.allowed_filters.length === 0) return {};
  const json = parseJsonOrUndefined(raw);
  if (json !== undefined) return whereFilter(json, resource, config, hidden);
  return import("./python-where.ts").then(({ parsePythonWhere }) => whereFilter(parsePythonWhere(raw, config.MAX_JSON_DEPTH), resource, config, hidden));
}

function whereFilter(query: unknown, resource: Resource, config: Config, hidden: Mask | null): Filter {
  if (!isPlainObject(query)) throw badRequest("where must be an object");
  const filter = new WhereWalker(resource, config, hidden).query(query, 1);
  checkOperands(filter);
  return filter;
}

const GEOMETRY_TESTS = new Map<string, (value: unknown) => boolean>(Object.entries(GEO_TYPES).map(([name, type]) => [type, geoTest(name as GeoTypeName, true)]));
const isPair = (value: unknown) => Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === "number" && Number.isFinite(n));

/** Operators whose operand MongoDB requires to be an array. */
const ARRAY_OPERANDS = new Set(["$in", "$nin", "$all", "$and", "$or", "$nor"]);

/** MongoDB's `$type` aliases and codes. */
const BSON_TYPES = new Set<unknown>([
  ..."double string object array binData undefined objectId bool date null regex dbPointer javascript symbol javascriptWithScope int timestamp long decimal minKey maxKey number".split(" "),
  ...Array.from({ length: 19 }, (_, i) => i + 1), -1, 127,
]);
const isNumber = (value: unknown) => typeof value === "number" && Number.isFinite(value);

/** The argument checks MongoDB makes of `$mod`, `$size`, `$type`, `$not` and `$elemMatch`; null when fine. */
function operandProblem(key: string, value: unknown): string | null {
  // A regex has no JSON form: anything but an operator expression (mingo would run a string as a match).
  if (key === "$not") return isPlainObject(value) && Object.keys(value).length > 0 ? null : "$not needs an operator expression";
  if (key === "$mod") {
    const ok = Array.isArray(value) && value.length === 2 && value.every(isNumber) && Math.trunc(value[0]) !== 0;
    return ok ? null : "$mod needs [divisor, remainder]: two numbers, the divisor not 0";
  }
  if (key === "$size") return Number.isInteger(value) && (value as number) >= 0 ? null : "$size needs a non-negative integer";
  if (key === "$type") return (Array.isArray(value) ? value.length > 0 && value.every((t) => BSON_TYPES.has(t)) : BSON_TYPES.has(value)) ? null : "$type: unknown type";
  return key === "$elemMatch" && !isPlainObject(value) ? "$elemMatch needs an object" : null;
}

/**
 * Operand shapes checked here rather than left to the database, so that every driver refuses the
 * same malformed query with the same 400 (backends differ in what they let through, and the
 * memory driver would fail on some of them).
 */
/** Operators under which MongoDB takes no `$near`: it must be a condition of the query itself. */
const BELOW_TOP = new Set(["$or", "$nor", "$not", "$elemMatch"]);

/** `nested`: under one of BELOW_TOP. */
function checkOperands(node: unknown, nested = false): void {
  if (Array.isArray(node)) return node.forEach((item) => checkOperands(item, nested));
  if (!isPlainObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    const problem = operandProblem(key, value);
    if (problem) throw badRequest(problem);
    if (ARRAY_OPERANDS.has(key) && !Array.isArray(value)) {
      throw badRequest(`${key} needs an array`);
    } else if (key === "$geometry") {
      const test = isPlainObject(value) && typeof value.type === "string" ? GEOMETRY_TESTS.get(value.type) : undefined;
      // Positions out of a longitude's or latitude's bounds fail the test too (src/validation/geo.ts).
      if (!test || !test(value)) throw badRequest("$geometry must be a valid GeoJSON geometry");
    } else if (key === "$maxDistance" || key === "$minDistance") {
      if (typeof value !== "number" || !(value >= 0) || !Number.isFinite(value)) throw badRequest(`${key} must be a non-negative number`);
    } else if (key === "$near" || key === "$nearSphere") {
      const point = isPlainObject(value) ? value.$geometry : value;
      // A legacy pair is a longitude and a latitude too: MongoDB refuses one out of their bounds.
      if (!((isPair(point) && isPosition(point)) || (isPlainObject(point) && point.type === "Point"))) throw badRequest(`${key} needs a Point or a coordinate pair`);
      if (nested) throw badRequest(`${key} must be a condition of the where itself, not under $or, $nor, $not or $elemMatch`);
    } else if (key === "$center" || key === "$centerSphere") {
      const centre = Array.isArray(value) && isPair(value[0]) && (key === "$center" || isPosition(value[0]));
      if (!centre || !(typeof value[1] === "number" && value[1] >= 0 && Number.isFinite(value[1]))) throw badRequest(`${key} needs [[x, y], radius], the radius not negative`);
    }
    checkOperands(value, nested || BELOW_TOP.has(key));
  }
}
