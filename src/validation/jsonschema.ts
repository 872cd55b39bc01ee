// The JSON Schema engine: the structural rules of a compiled resource expressed once as a JSON
// Schema (draft 2019-09), validated with @cfworker/json-schema, its errors mapped back to
// Cerberus errors through the keyword location of each rule.
//
// Every field is one flat subschema (its type, then its rules' keywords), so a document costs
// one evaluation per field. Cerberus skips rules that JSON Schema evaluates anyway; the mapping
// drops their errors the same way: a field that fails its type keeps that error only, a null
// value keeps none (the rules it would fail are the ones Cerberus skips for null), and an
// empty value loses the errors of the rules `empty` skips.
import { encodePointer, Validator, type OutputUnit, type Schema } from "@cfworker/json-schema";
import type { Doc } from "../drivers/types.ts";
import type { DictNode, DocRun, FieldNode } from "./tree.ts";
import type { JsonType } from "./datatypes.ts";
import { Level, MESSAGES, type Path } from "./errors.ts";
import { compilePattern } from "./rules.ts";
import { pathKey, pyEqual, valueAt } from "./walk.ts";
import { EMPTY_DROPS, Q } from "./vocabulary.ts";
import { isPlainObject } from "../util/objects.ts";

/** A container the walk enters on the way to a field: which child validator it is. */
interface Crossing {
  rule: "schema" | "items" | "keysrules" | "valuesrules";
  q: number;
}

type MarkerKind =
  /** The field's own error, at its instanceLocation. */
  | "self"
  /** The type keyword: a type error, or "null value not allowed" for a null. */
  | "type"
  /** A list item failed `allowed` / `forbidden`: one error on the list, listing the items. */
  | "item"
  /** A `contains` member is missing: one error on the list, listing the members. */
  | "member"
  /** instanceLocation is the unknown key. */
  | "unknown"
  /** instanceLocation is the sub-document missing the field. */
  | "required"
  | "itemsLength";

interface Marker {
  kind: MarkerKind;
  rule: string | null;
  q: number;
  chain: Crossing[];
  /** The field whose rule this is (unknown and required errors belong to none). */
  node: FieldNode | null;
  message?: string;
  /** Errors whose message shows the value. */
  describe?: (value: unknown) => string;
  member?: unknown;
  field?: string;
  requiredIndex?: number;
  expected?: number;
}

const crossing = (rule: Crossing["rule"], q: number): Crossing => ({ rule, q });

const LENGTH_KEYWORDS: Record<"minlength" | "maxlength", Array<[JsonType, string]>> = {
  minlength: [["string", "minLength"], ["array", "minItems"], ["object", "minProperties"]],
  maxlength: [["string", "maxLength"], ["array", "maxItems"], ["object", "maxProperties"]],
};

const EMPTY_VALUE: Schema = { anyOf: [{ type: "string", maxLength: 0 }, { type: "array", maxItems: 0 }, { type: "object", maxProperties: 0 }] };

class SchemaBuilder {
  readonly markers = new Map<string, Marker>();

  constructor(private readonly update: boolean) {}

  root(dict: DictNode): Schema {
    const schema: Schema = {};
    const allOf: Schema[] = [];
    this.dict(dict, "#", [], schema)(allOf, "#");
    if (allOf.length) schema.allOf = allOf;
    return schema;
  }

  private mark(location: string, marker: Marker): void {
    this.markers.set(location, marker);
  }

  /**
   * Properties and unknown fields of a sub-document. Returns what adds its required fields to
   * the allOf list once every other entry is there, so that the other entries sit at the same
   * place in the create and update variants.
   */
  private dict(dict: DictNode, location: string, chain: Crossing[], schema: Schema): (allOf: Schema[], at: string) => void {
    const properties: Record<string, Schema | boolean> = {};
    for (const [name, node] of dict.fields) properties[name] = this.field(node, `${location}/properties/${encodePointer(name)}`, chain);
    for (const name of dict.meta) properties[name] = true;
    schema.properties = properties;
    if (!dict.allowUnknown) {
      schema.additionalProperties = { not: {} };
      this.mark(`${location}/additionalProperties/not`, { kind: "unknown", rule: null, q: 0, chain, node: null, message: MESSAGES.unknown });
    }
    return (allOf, at) => {
      if (this.update || !dict.requiredInJson) return;
      dict.required.forEach((field, requiredIndex) => {
        this.mark(`${at}/allOf/${allOf.length}/required`, { kind: "required", rule: "required", q: 0, chain, node: null, field, requiredIndex, message: MESSAGES.required });
        allOf.push({ required: [field] });
      });
    };
  }

  private field(node: FieldNode, location: string, chain: Crossing[]): Schema | boolean {
    if (!node.covered) return true;
    const schema: Schema = {};
    const allOf: Schema[] = [];
    const entry = () => `${location}/allOf/${allOf.length}`;
    const self = (rule: string, q: number, message: string): Marker => ({ kind: "self", rule, q, chain, node, message });
    let required: ((allOf: Schema[], at: string) => void) | null = null;

    const types = node.jsonTypes;
    if (types) {
      schema.type = node.nullable ? [...types, "null"] : types.length === 1 ? types[0]! : types;
      this.mark(`${location}/type`, { kind: "type", rule: "type", q: Q.type, chain, node, message: MESSAGES.type(node.typeLabel) });
    } else if (!node.nullable) {
      this.mark(`${entry()}/not`, self("nullable", Q.nullable, MESSAGES.nullable));
      allOf.push({ not: { type: "null" } });
    }
    if (node.hasEmpty && !node.empty) {
      this.mark(`${entry()}/not`, self("empty", Q.empty, MESSAGES.empty));
      allOf.push({ not: EMPTY_VALUE });
    }

    for (const rule of node.queue) {
      if (rule.json === "none") continue;
      const { name, q, value } = rule;
      switch (name) {
        case "minlength":
        case "maxlength":
          for (const [family, keyword] of LENGTH_KEYWORDS[name]) {
            if (types && !types.includes(family)) continue;
            schema[keyword] = value;
            this.mark(`${location}/${keyword}`, self(name, q, MESSAGES[name](value)));
          }
          break;
        case "min":
        case "max": {
          const limit = node.convert && typeof value === "string" ? node.convert(value) : value;
          const keyword = name === "min" ? "minimum" : "maximum";
          schema[keyword] = limit as number;
          this.mark(`${location}/${keyword}`, self(name, q, MESSAGES[name](limit)));
          break;
        }
        case "regex":
          schema.pattern = compilePattern(value as string).source;
          this.mark(`${location}/pattern`, self(name, q, MESSAGES.regex(value as string)));
          break;
        case "allowed":
        case "forbidden": {
          const check: Schema = name === "allowed" ? { enum: value as unknown[] } : { not: { enum: value as unknown[] } };
          const keyword = name === "allowed" ? "enum" : "not";
          if (types?.length === 1 && types[0] === "array") {
            this.mark(`${entry()}/items/${keyword}`, { kind: "item", rule: name, q, chain, node });
            allOf.push({ items: check });
          } else {
            this.mark(`${entry()}/${keyword}`, { kind: "self", rule: name, q, chain, node, describe: MESSAGES.unallowedValue });
            allOf.push(check);
          }
          break;
        }
        case "contains": {
          const wanted = Array.isArray(value) ? value : [value];
          wanted.forEach((member, m) => this.mark(`${entry()}/allOf/${m}/contains`, { kind: "member", rule: name, q, chain, node, member }));
          allOf.push({ allOf: wanted.map((member) => ({ contains: { const: member } })) });
          break;
        }
        case "items": {
          const at = entry();
          const nodes = node.items!;
          this.mark(`${at}/else/not`, { kind: "itemsLength", rule: name, q, chain, node, expected: nodes.length });
          const slot = allOf.push({}) - 1;
          allOf[slot] = {
            if: { minItems: nodes.length, maxItems: nodes.length },
            then: { items: nodes.map((n, i) => this.field(n, `${at}/then/items/${i}`, [...chain, crossing("items", q)])) },
            else: { not: {} },
          };
          break;
        }
        case "schema":
          if (node.dict) required = this.dict(node.dict, location, [...chain, crossing("schema", q)], schema);
          else if (node.list) schema.items = this.field(node.list, `${location}/items`, [...chain, crossing("schema", q)]);
          break;
        case "keysrules":
          schema.propertyNames = this.field(node.keysrules!, `${location}/propertyNames`, [...chain, crossing("keysrules", q)]) as Schema;
          break;
        case "valuesrules": {
          const at = entry();
          const slot = allOf.push({}) - 1;
          allOf[slot] = { additionalProperties: this.field(node.valuesrules!, `${at}/additionalProperties`, [...chain, crossing("valuesrules", q)]) };
          break;
        }
      }
    }
    required?.(allOf, location);
    if (allOf.length) schema.allOf = allOf;
    return schema;
  }
}

function unescapeSegment(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~");
}

/** An instanceLocation as a document path: list indexes as numbers, as Cerberus has them. */
function decodeLocation(location: string, document: Doc): Path {
  const path: Array<string | number> = [];
  if (location === "#") return path;
  let current: unknown = document;
  for (const raw of location.slice(2).split("/")) {
    const segment = unescapeSegment(raw);
    const key = Array.isArray(current) ? Number(segment) : segment;
    path.push(key);
    current = current !== null && typeof current === "object" ? (current as Record<string | number, unknown>)[key] : undefined;
  }
  return path;
}

/** Where a field sits among its siblings: the order Cerberus validates them in. */
function indexOf(document: Doc, path: Path): number {
  const segment = path[path.length - 1]!;
  if (typeof segment === "number") return segment;
  const container = valueAt(document, path.slice(0, -1));
  return container && typeof container === "object" ? Object.keys(container).indexOf(segment) : 0;
}

function isEmptyValue(value: unknown): boolean {
  if (typeof value === "string" || Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

/** One error found, where it goes. */
interface Finding {
  marker: Marker;
  /** The path the message is reported at. */
  path: Path;
  /** The value the message shows (items, members). */
  value?: unknown;
}

export interface JsonEngine {
  /** Validates and adds the mapped errors to the root level; false if the validator threw. */
  check(document: Doc, run: DocRun, level: Level, update: boolean): boolean;
  /** The generated schemas, for inspection. */
  schemas: { create: Schema; update: Schema };
}

export function compileJsonEngine(root: DictNode): JsonEngine {
  const createBuilder = new SchemaBuilder(false);
  const updateBuilder = new SchemaBuilder(true);
  const schemas = { create: createBuilder.root(root), update: updateBuilder.root(root) };
  const markers = createBuilder.markers;
  const validators = { create: new Validator(schemas.create, "2019-09", false), update: new Validator(schemas.update, "2019-09", false) };
  const nodeIds = new Map<FieldNode, number>();
  const nodeId = (node: FieldNode) => {
    let id = nodeIds.get(node);
    if (id === undefined) nodeIds.set(node, (id = nodeIds.size));
    return id;
  };

  function emit(document: Doc, root: Level, marker: Marker, path: Path, message: string, rule = marker.rule, q = marker.q): void {
    let level = root;
    marker.chain.forEach((c, j) => {
      const at = path.slice(0, j + 1);
      level = level.group(at, c.rule, [1, indexOf(document, at), c.q]);
    });
    const key = marker.kind === "required" ? [2, marker.requiredIndex!] : [1, indexOf(document, path), q];
    level.add(key, { path, rule, message });
  }

  function find(error: OutputUnit, document: Doc): Finding | null {
    const marker = markers.get(error.keywordLocation);
    if (!marker) return null;
    const at = decodeLocation(error.instanceLocation, document);
    switch (marker.kind) {
      case "required":
        return { marker, path: [...at, marker.field!] };
      case "item":
        return { marker, path: at.slice(0, -1), value: valueAt(document, at) };
      case "member":
        return { marker, path: at, value: marker.member };
      default:
        return { marker, path: at };
    }
  }

  /** Emits a field's findings as Cerberus would have reported them. */
  function report(document: Doc, run: DocRun, level: Level, findings: Finding[]): void {
    const { marker: first, path } = findings[0]!;
    const top = path[0];
    if (typeof top === "string" && run.blocked?.has(top)) {
      // A field that failed `readonly` keeps that error only (bar "null value not allowed").
      if (path.length > 1) return;
      if (valueAt(document, path) !== null) return;
      findings = findings.filter((f) => f.marker.kind === "type" || f.marker.rule === "nullable");
    }
    const value = valueAt(document, path);
    const typeError = findings.find((f) => f.marker.kind === "type");
    if (typeError) {
      if (value === null) emit(document, level, typeError.marker, path, MESSAGES.nullable, "nullable", Q.nullable);
      else {
        run.badType!.add(pathKey(path));
        emit(document, level, typeError.marker, path, typeError.marker.message!);
      }
      return;
    }
    const nullable = findings.find((f) => f.marker.rule === "nullable");
    if (nullable) return emit(document, level, nullable.marker, path, nullable.marker.message!);
    if (value === null && first.node) return;
    const skipEmpty = first.node?.hasEmpty === true && isEmptyValue(value);
    const grouped = new Map<Marker, unknown[]>();
    for (const finding of findings) {
      const { marker } = finding;
      if (skipEmpty && marker.rule !== null && EMPTY_DROPS.has(marker.rule)) continue;
      switch (marker.kind) {
        case "item":
        case "member": {
          // One error for the whole list, listing the items or members, as Cerberus does.
          const key = [...grouped.keys()].find((m) => m.rule === marker.rule) ?? marker;
          const values = grouped.get(key) ?? [];
          if (!values.some((v) => pyEqual(v, finding.value))) values.push(finding.value);
          grouped.set(key, values);
          break;
        }
        case "itemsLength":
          emit(document, level, marker, path, MESSAGES.itemsLength(marker.expected!, (value as unknown[]).length));
          break;
        default:
          emit(document, level, marker, path, marker.describe ? marker.describe(value) : marker.message!);
      }
    }
    for (const [marker, values] of grouped) {
      emit(document, level, marker, path, marker.kind === "member" ? MESSAGES.missingMembers(values) : MESSAGES.unallowedValues(values));
    }
  }

  function check(document: Doc, run: DocRun, level: Level, update: boolean): boolean {
    let errors: OutputUnit[];
    try {
      errors = (update ? validators.update : validators.create).validate(document).errors;
    } catch {
      return false;
    }
    run.badType = new Set();
    // Findings grouped by field: the errors of one field's rules at one place in the document.
    const fields = new Map<string, Finding[]>();
    for (const error of errors) {
      const finding = find(error, document);
      if (!finding) continue;
      const { node, kind } = finding.marker;
      const id = `${pathKey(finding.path)}\u0001${node ? nodeId(node) : kind}`;
      const list = fields.get(id);
      if (list) list.push(finding);
      else fields.set(id, [finding]);
    }
    for (const findings of fields.values()) report(document, run, level, findings);
    return true;
  }

  return { check, schemas };
}
