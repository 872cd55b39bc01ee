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
import { GEO_TYPES, geoTest, type GeoTypeName } from "../validation/geo.ts";
import type { FieldSchema, Schema } from "../settings/types.ts";
import { castUntyped, parseJsonOrUndefined } from "./common.ts";
import { isPlainObject, isPrototypeKey } from "../util/objects.ts";
import { isObjectIdHex } from "../util/objectid.ts";
import { SCRIPT_OPERATORS } from "../util/operators.ts";

/** Eve's `Mongo.operators`: anything else needs the query whitelist. */
const KNOWN_OPERATORS = new Set([
  "$gt", "$gte", "$in", "$lt", "$lte", "$ne", "$nin", "$eq",
  "$or", "$and", "$not", "$nor",
  "$mod", "$regex", "$text", "$where",
  "$options", "$search", "$language", "$caseSensitive",
  "$diacriticSensitive", "$exists", "$type",
  "$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$centerSphere",
  "$geometry", "$maxDistance", "$minDistance", "$box",
  "$all", "$elemMatch", "$size",
  "$bitsAllClear", "$bitsAllSet", "$bitsAnyClear", "$bitsAnySet",
  "$center", "$expr",
]);

const LOGICAL = new Set(["$and", "$or", "$nor"]);

/** Operators whose operands are values of the field, hence converted like it. */
const VALUE_OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$not", "$elemMatch"]);

type Types = Set<string> | undefined;

/** Per rule object: a where clause asks for the same fields' types on every request. */
const typesByRule = new WeakMap<FieldSchema, Set<string>>();

function typesOf(rule: FieldSchema | undefined): Types {
  const type = rule?.type;
  if (type === undefined) return undefined;
  let types = typesByRule.get(rule!);
  if (!types) typesByRule.set(rule!, (types = new Set(Array.isArray(type) ? type : [type])));
  return types;
}

/** A `schema` that is one rule (a list's items) rather than a mapping of fields. */
function isRule(schema: unknown): schema is FieldSchema {
  if (!isPlainObject(schema)) return false;
  return typeof schema.type === "string" || (Array.isArray(schema.type) && schema.type.every((t) => typeof t === "string"));
}

function isList(rule: FieldSchema): boolean {
  return typesOf(rule)?.has("list") === true;
}

/** The fields of a dict rule (or of a rule whose `schema` is a mapping). */
function dictFields(rule: FieldSchema | undefined): Schema | undefined {
  if (!rule || !isPlainObject(rule.schema) || isList(rule) || isRule(rule.schema)) return undefined;
  return rule.schema as Schema;
}

/** Every rule an element of a list rule may follow. */
function elementRules(rule: FieldSchema): FieldSchema[] {
  if (isRule(rule.schema)) return [rule.schema];
  return Array.isArray(rule.items) ? rule.items.filter(isPlainObject) : [];
}

/** The rules of meta fields, shared, so that their types are worked out once (typesOf). */
const META_RULES = Object.fromEntries(["objectid", "datetime", "string", "boolean", "integer"].map((type) => [type, { type }])) as Record<
  "objectid" | "datetime" | "string" | "boolean" | "integer",
  FieldSchema
>;

export class FieldTypes {
  constructor(
    private readonly resource: Resource,
    private readonly config: Config,
  ) {}

  /** Meta fields are typed even where the schema does not declare them. */
  private metaRule(name: string): FieldSchema | undefined {
    const c = this.config;
    if (name === this.resource.id_field || name === this.resource.id_field + c.VERSION_ID_SUFFIX) return META_RULES.objectid;
    if (name === c.DATE_CREATED || name === c.LAST_UPDATED) return META_RULES.datetime;
    if (name === c.ETAG) return META_RULES.string;
    if (name === c.DELETED) return META_RULES.boolean;
    if (name === c.VERSION || name === c.LATEST_VERSION) return META_RULES.integer;
    return undefined;
  }

  /** The rule a (dotted) path follows, through dicts and lists; undefined when the schema has none. */
  ruleAt(path: string): FieldSchema | undefined {
    const [first, ...rest] = path.split(".");
    let rule: FieldSchema | undefined = this.resource.schema[first!] ?? this.metaRule(first!);
    for (const segment of rest) {
      if (!rule) return undefined;
      if (isList(rule)) {
        const elements = elementRules(rule);
        if (/^\d+$/.test(segment)) {
          rule = isRule(rule.schema) ? rule.schema : elements[Number(segment)];
          continue;
        }
        rule = elements.map((element) => dictFields(element)?.[segment]).find(Boolean);
      } else {
        rule = dictFields(rule)?.[segment];
      }
    }
    return rule;
  }

  /** The types a scalar at `path` may have: a list's element types for list fields. */
  scalarTypes(path: string): Types {
    const rule = this.ruleAt(path);
    if (!rule || !isList(rule)) return typesOf(rule);
    const elements = elementRules(rule).map(typesOf);
    if (elements.length === 0 || elements.some((types) => types === undefined)) return undefined;
    return new Set(elements.flatMap((types) => [...types!]));
  }
}


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
    const raw = resource.raw;
    lists = {
      blacklist: new Set(config.DB_QUERY_BLACKLIST),
      whitelist: new Set((raw.db_query_whitelist ?? raw.mongo_query_whitelist ?? config.DB_QUERY_WHITELIST) as string[]),
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
  ) {
    this.types = new FieldTypes(resource, config);
    ({ blacklist: this.blacklist, whitelist: this.whitelist } = operatorListsOf(resource, config));
    this.allowed = resource.allowed_filters;
  }

  private checkKey(key: string, depth: number, operand: unknown): void {
    if (depth > this.config.MAX_JSON_DEPTH) throw badRequest("where clause nested too deeply");
    if (isPrototypeKey(key)) throw badRequest(`refused key '${key}'`);
    if (!key.startsWith("$")) return;
    if (SCRIPT_OPERATORS.has(key) || this.blacklist.has(key)) throw badRequest(`operator ${key} is banned`);
    if (!KNOWN_OPERATORS.has(key) && !this.whitelist.has(key)) throw badRequest(`unknown operator ${key}`);
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
        out[key] = this.opaque(value, depth + 1);
      } else {
        this.checkAllowed(key);
        const converted = this.value(value, key, depth + 1);
        if (this.resource.validate_filters && !this.fits(key, converted)) {
          throw new HttpError(400, `filter on '${key}' is invalid`);
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

  /** A field's condition: converted by the field's type, through its operators and sub-fields. */
  private value(value: unknown, path: string, depth: number): unknown {
    if (typeof value === "string") return this.cast(value, path);
    if (Array.isArray(value)) {
      if (depth > this.config.MAX_JSON_DEPTH) throw badRequest("where clause nested too deeply");
      return value.map((item) => this.value(item, path, depth + 1));
    }
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      this.checkKey(key, depth, member);
      if (!key.startsWith("$")) out[key] = this.value(member, `${path}.${key}`, depth + 1);
      else if (VALUE_OPERATORS.has(key)) out[key] = this.value(member, path, depth + 1);
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

function conditionFits(rule: FieldSchema, condition: unknown): boolean {
  if (!isPlainObject(condition)) return valueFits(rule, condition);
  const keys = Object.keys(condition);
  if (!keys.some((key) => key.startsWith("$"))) return valueFits(rule, condition);
  return keys.every((operator) => {
    const operand = condition[operator];
    switch (operator) {
      case "$eq": case "$ne": case "$gt": case "$gte": case "$lt": case "$lte":
        return valueFits(rule, operand);
      case "$in": case "$nin":
        return Array.isArray(operand) && operand.every((item) => valueFits(rule, item));
      case "$all":
        return Array.isArray(operand) && operand.every((item) => elementFits(rule, item));
      case "$not":
        return conditionFits(rule, operand);
      case "$exists":
        return typeof operand === "boolean";
      default:
        return true;
    }
  });
}

/** Cerberus' view of a value for a field: type, nullable, allowed, a dict's fields. */
function valueFits(rule: FieldSchema, value: unknown): boolean {
  if (value === null) return rule.nullable === true;
  const types = typesOf(rule);
  if (types?.has("list") && !Array.isArray(value)) return elementFits(rule, value);
  if (types && ![...types].some((type) => typeFits(type, value))) return false;
  if (Array.isArray(rule.allowed)) {
    const values = Array.isArray(value) ? value : [value];
    if (!values.every((v) => rule.allowed!.includes(v))) return false;
  }
  const fields = dictFields(rule);
  if (fields && isPlainObject(value)) {
    return Object.entries(value).every(([key, member]) => fields[key] !== undefined && valueFits(fields[key]!, member));
  }
  return true;
}

/** A scalar compared with a list field matches its elements. */
function elementFits(rule: FieldSchema, value: unknown): boolean {
  const elements = elementRules(rule);
  if (elements.length === 0) return !Array.isArray(rule.allowed) || rule.allowed.includes(value);
  return elements.some((element) => valueFits({ ...element, allowed: element.allowed ?? rule.allowed }, value));
}

function typeFits(type: string, value: unknown): boolean {
  switch (type) {
    case "string": return typeof value === "string";
    case "integer": return Number.isInteger(value);
    case "number": case "float": return typeof value === "number";
    case "boolean": return typeof value === "boolean";
    case "datetime": case "date": return value instanceof Date;
    case "objectid": return value instanceof ObjectId;
    case "list": case "set": return Array.isArray(value);
    case "dict": return isPlainObject(value);
    default: return true;
  }
}

/**
 * `?where=` as a driver filter; `{}` for an empty value or where allowed_filters is empty (Eve then
 * ignores it); a 400 for malformed or refused input. The Python syntax is a promise: its parser is
 * imported on first use, out of what a Worker loads at start (test/runtimes/workers-bundle.test.ts).
 */
export function parseWhere(raw: string, resource: Resource, config: Config): Filter | Promise<Filter> {
  if (!raw || resource.allowed_filters.length === 0) return {};
  const json = parseJsonOrUndefined(raw);
  if (json !== undefined) return whereFilter(json, resource, config);
  return import("./python-where.ts").then(({ parsePythonWhere }) => whereFilter(parsePythonWhere(raw, config.MAX_JSON_DEPTH), resource, config));
}

function whereFilter(query: unknown, resource: Resource, config: Config): Filter {
  if (!isPlainObject(query)) throw badRequest("where must be an object");
  const filter = new WhereWalker(resource, config).query(query, 1);
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

/** The argument checks MongoDB makes of `$mod`, `$size`, `$type` and `$elemMatch`; null when fine. */
function operandProblem(key: string, value: unknown): string | null {
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
function checkOperands(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(checkOperands);
  if (!isPlainObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    const problem = operandProblem(key, value);
    if (problem) throw badRequest(problem);
    if (ARRAY_OPERANDS.has(key) && !Array.isArray(value)) {
      throw badRequest(`${key} needs an array`);
    } else if (key === "$geometry") {
      const test = isPlainObject(value) && typeof value.type === "string" ? GEOMETRY_TESTS.get(value.type) : undefined;
      if (!test || !test(value)) throw badRequest("$geometry must be a valid GeoJSON geometry");
    } else if (key === "$maxDistance" || key === "$minDistance") {
      if (typeof value !== "number" || !(value >= 0) || !Number.isFinite(value)) throw badRequest(`${key} must be a non-negative number`);
    } else if (key === "$near" || key === "$nearSphere") {
      const point = isPlainObject(value) ? value.$geometry : value;
      if (!(isPair(point) || (isPlainObject(point) && point.type === "Point"))) throw badRequest(`${key} needs a Point or a coordinate pair`);
    }
    checkOperands(value);
  }
}
