// The JSON Schema engine: the structural rules of a compiled resource expressed once as a JSON
// Schema (draft 2019-09), validated with @cfworker/json-schema, its errors mapped back to
// Cerberus errors through the keyword location of each rule. Cerberus' rule-skipping is built
// into the schema: a null value is tested first (`if`/`then`), a type error keeps the other
// keywords from running (`if`/`else`), and so does an empty value for the rules `empty` skips.
import { encodePointer, Validator, type OutputUnit, type Schema } from "@cfworker/json-schema";
import type { Doc } from "../drivers/types.ts";
import type { DictNode, FieldNode } from "./compile.ts";
import { Level, MESSAGES, type Path, type Segment } from "./errors.ts";
import { compilePattern, pathKey, pyEqual, valueAt, type DocRun } from "./rules.ts";
import { EMPTY_DROPS, Q } from "./vocabulary.ts";

/** A container the walk enters on the way to a field: which child validator it is. */
interface Crossing {
  rule: "schema" | "items" | "keysrules" | "valuesrules";
  q: number;
}

type MarkerKind =
  /** The error is the field's own (instanceLocation is the field). */
  | "self"
  /** A list item failed `allowed` / `forbidden`: one error on the list, listing the items. */
  | "item"
  /** A `contains` member is missing: one error on the list, listing the members. */
  | "member"
  | "unknown"
  | "required"
  | "itemsLength";

interface Marker {
  kind: MarkerKind;
  rule: string | null;
  q: number;
  chain: Crossing[];
  message?: string;
  /** `self` errors whose message shows the value. */
  describe?: (value: unknown) => string;
  member?: unknown;
  field?: string;
  requiredIndex?: number;
  expected?: number;
}

const crossing = (rule: Crossing["rule"], q: number): Crossing => ({ rule, q });

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
      this.mark(`${location}/additionalProperties/not`, { kind: "unknown", rule: null, q: 0, chain, message: MESSAGES.unknown });
    }
    return (allOf, at) => {
      if (this.update || !dict.requiredInJson) return;
      dict.required.forEach((field, requiredIndex) => {
        this.mark(`${at}/allOf/${allOf.length}/required`, { kind: "required", rule: "required", q: 0, chain, field, requiredIndex, message: MESSAGES.required });
        allOf.push({ required: [field] });
      });
    };
  }

  private field(node: FieldNode, location: string, chain: Crossing[]): Schema | boolean {
    if (!node.covered) return true;
    const schema: Schema = { if: { type: "null" } };
    if (!node.nullable) {
      schema.then = { not: {} };
      this.mark(`${location}/then/not`, { kind: "self", rule: "nullable", q: Q.nullable, chain, message: MESSAGES.nullable });
    }
    schema.else = this.typed(node, `${location}/else`, chain);
    return schema;
  }

  private typed(node: FieldNode, location: string, chain: Crossing[]): Schema {
    if (!node.jsonTypes) return this.body(node, location, chain);
    const types = node.jsonTypes;
    this.mark(`${location}/else/not`, { kind: "self", rule: "type", q: Q.type, chain, message: MESSAGES.type(node.typeLabel) });
    return { if: { type: types.length === 1 ? types[0]! : types }, then: this.body(node, `${location}/then`, chain), else: { not: {} } };
  }

  private body(node: FieldNode, location: string, chain: Crossing[]): Schema {
    if (!node.hasEmpty) return this.rules(node, location, chain, false);
    return {
      if: { anyOf: [{ type: "string", maxLength: 0 }, { type: "array", maxItems: 0 }, { type: "object", maxProperties: 0 }] },
      then: this.rules(node, `${location}/then`, chain, true),
      else: this.rules(node, `${location}/else`, chain, false),
    };
  }

  private rules(node: FieldNode, location: string, chain: Crossing[], emptyValue: boolean): Schema {
    const schema: Schema = {};
    const allOf: Schema[] = [];
    let required: ((allOf: Schema[], at: string) => void) | null = null;
    const entry = () => `${location}/allOf/${allOf.length}`;
    const self = (rule: string, q: number, message: string): Marker => ({ kind: "self", rule, q, chain, message });
    for (const rule of node.queue) {
      if (rule.json === "none" || (emptyValue && EMPTY_DROPS.has(rule.name))) continue;
      const { name, q, value } = rule;
      switch (name) {
        case "minlength":
        case "maxlength": {
          const [str, arr, obj] = name === "minlength" ? ["minLength", "minItems", "minProperties"] : ["maxLength", "maxItems", "maxProperties"];
          for (const keyword of [str!, arr!, obj!]) {
            schema[keyword] = value;
            this.mark(`${location}/${keyword}`, self(name, q, MESSAGES[name](value)));
          }
          break;
        }
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
          const values = value as unknown[];
          const list = node.jsonTypes?.[0] === "array";
          const check: Schema = name === "allowed" ? { enum: values } : { not: { enum: values } };
          const keyword = name === "allowed" ? "enum" : "not";
          if (list) {
            this.mark(`${entry()}/items/${keyword}`, { kind: "item", rule: name, q, chain });
            allOf.push({ items: check });
          } else {
            this.mark(`${entry()}/${keyword}`, { kind: "self", rule: name, q, chain, describe: MESSAGES.unallowedValue });
            allOf.push(check);
          }
          break;
        }
        case "contains": {
          const wanted = Array.isArray(value) ? value : [value];
          wanted.forEach((member, m) => this.mark(`${entry()}/allOf/${m}/contains`, { kind: "member", rule: name, q, chain, member }));
          allOf.push({ allOf: wanted.map((member) => ({ contains: { const: member } })) });
          break;
        }
        case "items": {
          const at = entry();
          const nodes = node.items!;
          this.mark(`${at}/else/not`, { kind: "itemsLength", rule: name, q, chain, expected: nodes.length });
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
    if (emptyValue && !node.empty) {
      schema.not = {};
      this.mark(`${location}/not`, self("empty", Q.empty, MESSAGES.empty));
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
function decodeLocation(location: string, document: Doc): Segment[] {
  const path: Segment[] = [];
  if (location === "#") return path;
  let current: unknown = document;
  for (const raw of location.slice(2).split("/")) {
    const segment = unescapeSegment(raw);
    const key: Segment = Array.isArray(current) ? Number(segment) : segment;
    path.push(key);
    current = current !== null && typeof current === "object" ? (current as Record<Segment, unknown>)[key] : undefined;
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

  function emit(document: Doc, run: DocRun, root: Level, marker: Marker, path: Path, message: string): void {
    const top = path[0];
    if (typeof top === "string" && run.blocked.has(top) && !(marker.rule === "nullable" && path.length === 1)) return;
    if (marker.rule === "type") run.badType!.add(pathKey(path));
    let level = root;
    marker.chain.forEach((c, j) => {
      const at = path.slice(0, j + 1);
      level = level.group(at, c.rule, [1, indexOf(document, at), c.q]);
    });
    const key = marker.kind === "required" ? [2, marker.requiredIndex!] : [1, indexOf(document, path), marker.q];
    level.add(key, { path, rule: marker.rule, message });
  }

  function check(document: Doc, run: DocRun, level: Level, update: boolean): boolean {
    let errors: OutputUnit[];
    try {
      errors = (update ? validators.update : validators.create).validate(document).errors;
    } catch {
      return false;
    }
    run.badType = new Set();
    const grouped = new Map<string, { marker: Marker; path: Path; values: unknown[] }>();
    for (const error of errors) {
      const marker = markers.get(error.keywordLocation);
      if (!marker) continue;
      const at = decodeLocation(error.instanceLocation, document);
      switch (marker.kind) {
        case "self":
          emit(document, run, level, marker, at, marker.describe ? marker.describe(valueAt(document, at)) : marker.message!);
          break;
        case "unknown":
          emit(document, run, level, marker, at, marker.message!);
          break;
        case "required":
          emit(document, run, level, marker, [...at, marker.field!], marker.message!);
          break;
        case "itemsLength":
          emit(document, run, level, marker, at, MESSAGES.itemsLength(marker.expected!, (valueAt(document, at) as unknown[]).length));
          break;
        case "item":
        case "member": {
          const path = marker.kind === "item" ? at.slice(0, -1) : at;
          const id = `${pathKey(path)}\u0001${marker.rule}`;
          const group = grouped.get(id) ?? { marker, path, values: [] };
          grouped.set(id, group);
          const value = marker.kind === "item" ? valueAt(document, at) : marker.member;
          if (!group.values.some((v) => pyEqual(v, value))) group.values.push(value);
          break;
        }
      }
    }
    for (const { marker, path, values } of grouped.values()) {
      emit(document, run, level, marker, path, marker.kind === "member" ? MESSAGES.missingMembers(values) : MESSAGES.unallowedValues(values));
    }
    return true;
  }

  return { check, schemas };
}
