// A resource schema compiled once, at start-up, into a tree of field nodes: each with its type
// test and conversion, its normalization (coerce, defaults, renames) and its Cerberus rule queue
// as closures. Both engines (validator.ts) walk this tree; the JSON Schema one also derives its
// schema from it (jsonschema.ts).
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { builtinTypes, type DataType, type JsonType } from "./datatypes.ts";
import { customRule, type FieldValidator, type ValidatorExtensions } from "./extensions.ts";
import * as run from "./rules.ts";
import type { DictNode, FieldNode, Rule } from "./tree.ts";
import type { Segment } from "./errors.ts";
import { expandDefinition, PASSIVE_RULES, PRIORITY_RULES, schemaIsForItems, type LogicRule } from "./vocabulary.ts";

export interface CompileContext {
  resource: Resource;
  config: Config;
  ext: ValidatorExtensions;
  types: Record<string, DataType>;
  /** allow_unknown of the enclosing validator (inherited by sub-documents). */
  allowUnknown: boolean;
  requireAll: boolean;
  covered: boolean;
  queryPath: readonly string[];
}

export function typesFor(config: Config, ext: ValidatorExtensions): Record<string, DataType> {
  const types = builtinTypes({ dateFormat: config.DATE_FORMAT, allowCustomGeoFields: config.ALLOW_CUSTOM_FIELDS_IN_GEOJSON === true });
  for (const [name, test] of Object.entries(ext.types ?? {})) types[name] = { test };
  return types;
}

const PRIORITY = new Set<string>(PRIORITY_RULES);
const PASSIVE = new Set<string>(PASSIVE_RULES);

function asList<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function namedFunctions<F>(value: unknown, registry: Record<string, F> | undefined): F[] {
  return asList(value as unknown).map((entry) => (typeof entry === "string" ? registry?.[entry] : entry) as F).filter((f): f is F => typeof f === "function");
}

function converterFor(types: DataType[]): ((value: unknown) => unknown) | null {
  const convertible = types.filter((t) => t.convert);
  if (!convertible.length) return null;
  if (types.length === 1) return types[0]!.convert!;
  // Eve applies the conversions in the listed order; the first one that applies wins, and a
  // value already of that type needs none (1 stays a number ahead of `boolean`).
  return (value) => {
    for (const type of convertible) {
      if (type.test(value)) return value;
      const converted = type.convert!(value);
      if (converted !== value && type.test(converted)) return converted;
    }
    return value;
  };
}

/** Whether a value is of one of the types: a loop, where `some` made a closure per field checked. */
function anyOf(types: DataType[]): (value: unknown) => boolean {
  if (types.length === 1) {
    const type = types[0]!;
    return (value) => type.test(value);
  }
  return (value) => {
    for (const type of types) if (type.test(value)) return true;
    return false;
  };
}

function uniqueJsonTypes(types: DataType[]): JsonType[] | null {
  if (!types.length || types.some((t) => !t.json)) return null;
  return [...new Set(types.map((t) => t.json!))];
}

/** Compiles one field definition (its sub-schemas included). */
export function compileField(raw: unknown, name: Segment, cc: CompileContext): FieldNode {
  const def = expandDefinition((raw ?? {}) as Record<string, unknown>);
  const typeNames = def.type === undefined || def.type === null ? null : (asList(def.type) as string[]);
  const dataTypes = typeNames ? typeNames.map((t) => cc.types[t] ?? { test: () => false }) : [];
  const jsonTypes = typeNames ? uniqueJsonTypes(dataTypes) : null;
  const convert = typeNames ? converterFor(dataTypes) : null;
  const node: FieldNode = {
    name,
    def,
    typeLabel: def.type,
    typeTest: typeNames ? anyOf(dataTypes) : null,
    jsonTypes,
    nullable: def.nullable === true,
    readonly: def.readonly === true,
    required: (def.required ?? cc.requireAll) === true,
    hasEmpty: "empty" in def,
    empty: def.empty !== false,
    covered: cc.covered && (typeNames === null || jsonTypes !== null),
    queue: [],
    convert,
    autoList: cc.config.AUTO_CREATE_LISTS === true && !!typeNames?.includes("list"),
    coerce: "coerce" in def ? namedFunctions(def.coerce, cc.ext.coercers) : null,
    renameTo: typeof def.rename === "string" ? def.rename : null,
    renameHandler: "rename_handler" in def ? namedFunctions(def.rename_handler, cc.ext.coercers) : null,
    hasDefault: "default" in def,
    defaultValue: convert && def.default !== null && def.default !== undefined ? convert(def.default) : def.default,
    defaultSetter: namedFunctions<(d: Doc) => unknown>(def.default_setter, cc.ext.defaultSetters)[0] ?? null,
    dict: null,
    list: null,
    items: null,
    keysrules: null,
    valuesrules: null,
    definitions: [],
    queryPath: cc.queryPath.join("."),
    residualWork: false,
    converts: false,
    normalizes: false,
  };

  let q = PRIORITY_RULES.length;
  for (const [ruleName, value] of Object.entries(def)) {
    if (PRIORITY.has(ruleName) || PASSIVE.has(ruleName)) continue;
    const rule = compileRule(ruleName, value, node, cc);
    if (rule) node.queue.push({ name: ruleName, q: q++, value, ...rule });
  }

  const children = [node.list, node.keysrules, node.valuesrules, ...(node.items ?? []), ...(node.dict ? node.dict.fields.values() : [])].filter(
    (child): child is FieldNode => child !== null,
  );
  node.residualWork =
    !node.covered ||
    node.readonly ||
    node.queue.some((r) => r.json === "none") ||
    children.some((c) => c.residualWork) ||
    (node.dict?.residualWork ?? false);
  node.converts = !!convert || node.autoList || node.definitions.length > 0 || children.some((c) => c.converts);
  node.normalizes =
    !!node.coerce ||
    !!node.renameTo ||
    !!node.renameHandler ||
    node.hasDefault ||
    !!node.defaultSetter ||
    node.readonly ||
    (node.dict?.purgeUnknown ?? false) ||
    children.some((c) => c.normalizes);
  return node;
}

type CompiledRule = Pick<Rule, "json" | "run">;

function compileRule(name: string, value: unknown, node: FieldNode, cc: CompileContext): CompiledRule | null {
  const scalarTypes = node.jsonTypes?.every((t) => t !== "array" && t !== "object") ?? false;
  const listOnly = node.jsonTypes?.length === 1 && node.jsonTypes[0] === "array";
  switch (name) {
    case "allowed":
      return { json: scalarTypes || listOnly ? "full" : "none", run: run.allowed(value as unknown[]) };
    case "forbidden":
      return { json: scalarTypes || listOnly ? "full" : "none", run: run.forbidden(value as unknown[]) };
    case "contains":
      return { json: listOnly ? "full" : "none", run: run.contains(value) };
    case "min":
    case "max": {
      const bound = node.convert && typeof value === "string" ? node.convert(value) : value;
      return { json: typeof bound === "number" ? "full" : "none", run: run.bound(name, bound) };
    }
    case "minlength":
    case "maxlength":
      return { json: "full", run: run.length(name, value as number) };
    case "regex": {
      const regex = run.compilePattern(value as string);
      return { json: regex.unicode ? "full" : "none", run: run.regex(value as string, regex.regex) };
    }
    case "dependencies":
      return { json: "none", run: run.dependencies(value) };
    case "excludes":
      return { json: "none", run: run.excludes(asList(value as string | string[])) };
    case "schema":
      return compileSchemaRule(value, node, cc);
    case "items": {
      const json = node.covered && listOnly ? "recurse" : "none";
      const childCc = { ...cc, covered: json === "recurse" };
      node.items = (value as unknown[]).map((def, i) => compileField(def, i, childCc));
      return { json, run: run.items(node.items) };
    }
    case "keysrules":
      node.keysrules = compileField(value, "", { ...cc, covered: node.covered });
      return { json: "recurse", run: run.keysrules(node.keysrules) };
    case "valuesrules":
      node.valuesrules = compileField(value, "", { ...cc, covered: node.covered });
      return { json: "recurse", run: run.valuesrules(node.valuesrules) };
    case "allof":
    case "anyof":
    case "noneof":
    case "oneof": {
      const definitions = (value as Record<string, unknown>[]).map((d) => {
        const merged: Record<string, unknown> = { ...d };
        if (!("type" in merged) && "type" in node.def) merged.type = node.def.type;
        if (!("allow_unknown" in merged)) merged.allow_unknown = cc.allowUnknown;
        return compileField(merged, node.name, { ...cc, covered: false });
      });
      node.definitions.push(...definitions);
      return { json: "none", run: run.logic(name as LogicRule, definitions) };
    }
    case "check_with":
      return { json: "none", run: run.checkWith(namedFunctions<FieldValidator>(value, cc.ext.validators)) };
    case "unique":
    case "unique_to_user":
    case "unique_within_resource":
      return value === true ? { json: "none", run: run.unique(name) } : null;
    case "data_relation":
      return { json: "none", run: run.dataRelation(value as run.RelationSpec, cc.config) };
  }
  const custom = cc.ext.rules?.[name];
  return custom ? { json: "none", run: run.custom(customRule(custom).validate, value) } : null;
}

function compileSchemaRule(value: unknown, node: FieldNode, cc: CompileContext): CompiledRule | null {
  if (value === null || typeof value !== "object") return null;
  const forList = schemaIsForItems(node.def.type, value as Record<string, unknown>, (key) => !!cc.ext.rules?.[key]);
  const childCc: CompileContext = { ...cc, covered: node.covered };
  if (forList) {
    node.list = compileField(value, 0, childCc);
  } else {
    const allowUnknown = (node.def.allow_unknown ?? cc.allowUnknown) === true;
    const requireAll = (node.def.require_all ?? cc.requireAll) === true;
    node.dict = compileDict(value as Record<string, unknown>, { ...childCc, allowUnknown, requireAll }, new Set(), node.def.purge_unknown === true);
  }
  return { json: "recurse", run: run.schema(node) };
}

export function compileDict(schema: Record<string, unknown>, cc: CompileContext, meta: ReadonlySet<string>, purgeUnknown: boolean): DictNode {
  const fields = new Map<string, FieldNode>();
  for (const [name, def] of Object.entries(schema)) {
    fields.set(name, compileField(def, name, { ...cc, queryPath: [...cc.queryPath, name] }));
  }
  const nodes = [...fields.values()];
  const requiredInJson = !nodes.some((n) => n.required && "excludes" in n.def);
  return {
    fields,
    order: [...fields.keys()],
    required: nodes.filter((n) => n.required).map((n) => String(n.name)),
    allowUnknown: cc.allowUnknown,
    purgeUnknown,
    meta,
    requiredInJson,
    residualWork: !requiredInJson || nodes.some((n) => n.residualWork),
    normalizes: purgeUnknown || nodes.some((n) => n.normalizes),
  };
}

/**
 * The resource's root: its schema plus the fields Eve manages itself. `_id` is validated as an
 * objectid unless the schema says otherwise (Eve adds that definition); `_deleted` is only
 * accepted unchanged, so that a client cannot soft-delete or restore through a write.
 */
export function compileResource(resource: Resource, config: Config, ext: ValidatorExtensions, usable: Record<string, unknown>): DictNode {
  const schema: Record<string, unknown> = { ...usable };
  const meta = new Set([config.DATE_CREATED, config.LAST_UPDATED, config.ETAG]);
  if (!(resource.id_field in schema)) schema[resource.id_field] = { type: "objectid" };
  if (resource.soft_delete) schema[config.DELETED] = { readonly: true };
  const cc: CompileContext = {
    resource,
    config,
    ext,
    types: typesFor(config, ext),
    allowUnknown: resource.allow_unknown,
    requireAll: false,
    covered: true,
    queryPath: [],
  };
  return compileDict(schema, cc, meta, false);
}
