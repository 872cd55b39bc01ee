// Update operators in a PATCH body (docs/updates.md), checked against the resource's schema
// before anything is written: each operator allowed on the resource (UPDATE_OPERATORS), each
// path a field of the schema the client may change, each operand fit for its field
// (./operands.ts), values checked by the resource's validator, and the rules that depend on
// the stored value turned into guards the store checks atomically (./guards.ts). Compiled once
// per resource, by its first operator PATCH (src/app.ts); a resource without operators has
// none, and costs nothing.
import type { Doc, Update } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { UPDATE_OPERATOR_NAMES } from "../settings/opt-in.ts";
import { declaredTypes, keepsUnique } from "../settings/rule-types.ts";
import { isMediaRule } from "../settings/media-rules.ts";
import type { FieldSchema, Schema } from "../settings/types.ts";
import { isPlainObject } from "../util/objects.ts";
import { MESSAGES } from "./errors.ts";
import { kindGuard, type Guard } from "./guards.ts";
import { fieldIssue, plan, type OperandPlan } from "./operands.ts";
import type { Issues, ResourceValidator, ValidationEnv } from "./types.ts";

export interface ParsedOperators {
  /** The operators as the store takes them: `$currentDate` as a `$set` of the request's time. */
  update: Update;
  /** The operators with their checked operands, as hooks see them. */
  operators: Doc;
  guards: Guard[];
  /** Every path the operators change. */
  paths: string[];
  /** `{operator: {path: message}}`; null when every operator is fine. */
  issues: Issues | null;
}

export interface OperatorSchema {
  /**
   * Checks the operators of a body (its `$` keys). `env` is the validation's (the original is
   * the document changed, when there is one); `now` the time `$currentDate` writes.
   */
  parse(operators: Doc, env: ValidationEnv, now: Date): Promise<ParsedOperators>;
}

const KNOWN = new Set<string>(UPDATE_OPERATOR_NAMES);

/** The item rules of list fields, without the rules about the list as a whole, for the validator that checks a $push's items. */
export function itemsResource(resource: Resource): Resource {
  return { ...resource, schema: itemsSchema(resource.schema) };
}

const LIST_ONLY = ["minlength", "maxlength", "contains", "empty", "required", "readonly", "unique", "default", "default_setter", "dependencies", "excludes"];

function itemsSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [field, def] of Object.entries(schema)) out[field] = itemsRules(def);
  return out;
}

function itemsRules(def: FieldSchema): FieldSchema {
  if (!isPlainObject(def)) return def;
  const types = declaredTypes(def);
  const copy: FieldSchema = { ...def };
  if (types.has("list")) for (const rule of LIST_ONLY) delete (copy as Record<string, unknown>)[rule];
  if (types.has("dict") && isPlainObject(def.schema)) copy.schema = itemsSchema(def.schema as Schema);
  return copy;
}

/** The definition of the field a dotted path names, through sub-documents only; null when there is none. */
function fieldAt(schema: Schema, segments: string[]): FieldSchema[] | null {
  const chain: FieldSchema[] = [];
  let fields: Schema | null = schema;
  for (const segment of segments) {
    const def: FieldSchema | undefined = fields && Object.hasOwn(fields, segment) ? fields[segment] : undefined;
    if (!def || !isPlainObject(def)) return null;
    chain.push(def);
    const inner: unknown = def.schema;
    fields = declaredTypes(def).has("dict") && isPlainObject(inner) ? (inner as Schema) : null;
  }
  return chain;
}

/** A copy of `document` with `value` at the path (the objects on the way copied, so `document` is left as it was). */
function withValueAt(document: Doc, segments: string[], value: unknown): Doc {
  const [first, ...rest] = segments;
  const inner = document[first!];
  return { ...document, [first!]: rest.length === 0 ? value : withValueAt(isPlainObject(inner) ? inner : {}, rest, value) };
}

function at(value: unknown, segments: string[]): unknown {
  let node = value;
  for (const segment of segments) node = isPlainObject(node) ? node[segment] : undefined;
  return node;
}

/** The issue the validator reported at the path, or at a field on the way to it (a dict that is not one). */
function issueAt(issues: Issues, segments: string[]): unknown {
  let node: unknown = issues;
  for (const segment of segments) {
    if (!isPlainObject(node)) return node;
    if (!Object.hasOwn(node, segment)) return undefined;
    node = node[segment];
  }
  return node;
}

/** A value that holds sub-documents: a $set of it replaces them, so their required fields must be there. */
const holdsDocuments = (value: unknown): boolean => isPlainObject(value) || (Array.isArray(value) && value.some(isPlainObject));

interface Planned {
  operator: string;
  path: string;
  segments: string[];
  plan: OperandPlan;
}

/**
 * Fields only everest writes: meta fields, the id, the owner, and a sub-resource's URL segments
 * (a write cannot move a document out of the URL it was sent to; src/routing/lookup.ts).
 */
function reservedFields(resource: Resource, config: Config): Set<string> {
  const reserved = new Set([resource.id_field, config.ID_FIELD, config.ETAG, config.DATE_CREATED, config.LAST_UPDATED, config.DELETED, config.VERSION, config.LATEST_VERSION]);
  if (resource.auth_field) reserved.add(resource.auth_field);
  for (const param of resource.urlParams) reserved.add(param.name);
  return reserved;
}

/** Why a client may not change the field of this path (definitions on the way) with an operator; null when it may. */
function refusal(reserved: ReadonlySet<string>, uniqueIndexed: ReadonlySet<string>, segments: string[], chain: FieldSchema[]): string | null {
  if (reserved.has(segments[0]!) || chain.some((def) => def.readonly === true)) return MESSAGES.readonly;
  if (chain.length === 0) return MESSAGES.unknown;
  const types = declaredTypes(chain[chain.length - 1]!);
  if (types.has("media") || isMediaRule(chain[chain.length - 1])) return "media fields are sent as files, not with update operators";
  if (chain.length === 1 && keepsUnique(chain[0]) && !uniqueIndexed.has(segments[0]!)) {
    return "unique is kept for update operators only where the store keeps a unique index (see docs/updates.md)";
  }
  if (chain.slice(1).some(keepsUnique)) return "unique is kept for update operators only on top-level fields";
  return null;
}

/**
 * A field beside the one at `segments` whose `dependencies` name it (by its name, or its whole
 * dotted path): a $unset would leave that field stored without what it needs, which the store
 * cannot be asked to check, so it is refused outright.
 */
function dependentOn(level: Schema, segments: string[]): string | undefined {
  const name = segments[segments.length - 1]!;
  const path = segments.join(".");
  for (const [field, def] of Object.entries(level ?? {})) {
    const needs = isPlainObject(def) ? def.dependencies : undefined;
    const names = typeof needs === "string" ? [needs] : Array.isArray(needs) ? needs : isPlainObject(needs) ? Object.keys(needs) : [];
    if (names.some((needed) => needed === name || needed === path || needed === `^${path}`)) return field;
  }
  return undefined;
}

/**
 * The fields each of the resource's operators may change, as dotted paths with their
 * definitions: what the OpenAPI document shows as an operator PATCH's body.
 */
export function operatorTargets(resource: Resource, config: Config, uniqueIndexed: ReadonlySet<string>): Map<string, Array<{ path: string; def: FieldSchema }>> {
  const reserved = reservedFields(resource, config);
  const paths: Array<{ segments: string[]; chain: FieldSchema[] }> = [];
  const walk = (schema: Schema, segments: string[], chain: FieldSchema[]) => {
    for (const [field, def] of Object.entries(schema)) {
      if (!isPlainObject(def)) continue;
      const next = { segments: [...segments, field], chain: [...chain, def] };
      paths.push(next);
      if (declaredTypes(def).has("dict") && isPlainObject(def.schema)) walk(def.schema as Schema, next.segments, next.chain);
    }
  };
  walk(resource.schema, [], []);
  const targets = new Map<string, Array<{ path: string; def: FieldSchema }>>();
  for (const operator of resource.update_operators) {
    const fit = paths.filter(({ segments, chain }) => refusal(reserved, uniqueIndexed, segments, chain) === null && fieldIssue(operator, chain[chain.length - 1]!) === null);
    targets.set(operator, fit.map(({ segments, chain }) => ({ path: segments.join("."), def: chain[chain.length - 1]! })));
  }
  return targets;
}

export function compileOperators(resource: Resource, config: Config, validator: ResourceValidator, items: ResourceValidator, uniqueIndexed: ReadonlySet<string>): OperatorSchema {
  const allowed = new Set<string>(resource.update_operators);
  const reserved = reservedFields(resource, config);

  return {
    async parse(operators, env, now) {
      const issues: Record<string, Record<string, unknown> | string> = {};
      const planned: Planned[] = [];
      const taken: string[] = [];
      const fail = (operator: string, path: string, message: unknown) => (((issues[operator] ??= {}) as Record<string, unknown>)[path] = message);
      for (const [operator, fields] of Object.entries(operators)) {
        if (!KNOWN.has(operator)) issues[operator] = "unknown update operator";
        else if (!allowed.has(operator)) issues[operator] = "unallowed update operator";
        else if (!isPlainObject(fields)) issues[operator] = MESSAGES.type("dict");
        else if (Object.keys(fields).length === 0) issues[operator] = MESSAGES.empty;
        if (issues[operator] !== undefined) continue;
        for (const [path, operand] of Object.entries(fields as Doc)) {
          const segments = path.split(".");
          const chain = segments.every((segment) => segment !== "" && !segment.startsWith("$")) ? fieldAt(resource.schema, segments) : null;
          if (!chain && !reserved.has(segments[0]!)) {
            fail(operator, path, MESSAGES.unknown);
            continue;
          }
          const refused = refusal(reserved, uniqueIndexed, segments, chain ?? []);
          // Two changes of one field, or of a field and a part of it, would have the store choose between them.
          const clash = taken.find((other) => other === path || other.startsWith(`${path}.`) || path.startsWith(`${other}.`));
          if (refused || clash !== undefined) {
            fail(operator, path, refused ?? `conflicts with the update of '${clash}'`);
            continue;
          }
          taken.push(path);
          const dependent = operator === "$unset" ? dependentOn(chain!.length > 1 ? (chain![chain!.length - 2]!.schema as Schema) : resource.schema, segments) : undefined;
          if (dependent !== undefined) {
            fail(operator, path, `cannot be unset: field '${dependent}' depends on it`);
            continue;
          }
          const made = plan(operator, path, operand, chain![chain!.length - 1]!, now);
          if (made.issue !== undefined) fail(operator, path, made.issue);
          else planned.push({ operator, path, segments, plan: made });
        }
      }
      await checkValues(planned, env, (item, path, message) => fail(item, path, message));
      return assemble(planned, Object.keys(issues).length > 0 ? (issues as Issues) : null, taken);
    },
  };

  /**
   * The operands' values through the validator: converted where it converts, refused where a
   * rule refuses them. What replaces sub-documents or adds list items is checked as a new
   * value in the document (PUT, so their required fields count), the rest as a PATCH of it.
   */
  async function checkValues(planned: Planned[], env: ValidationEnv, fail: (operator: string, path: string, message: unknown) => void): Promise<void> {
    for (const entry of planned) {
      const { plan, segments } = entry;
      const listed = plan.items !== undefined;
      const values = plan.items ?? plan.values;
      if (!values) continue;
      const value = listed ? values : values[0];
      const adds = entry.operator === "$push" || entry.operator === "$addToSet";
      const replaces = entry.operator === "$set" && holdsDocuments(value);
      // A replaced sub-document is checked in the document it goes into: the field's own
      // dependencies look at the fields beside it. (A list operator's field has none: operands.ts.)
      const document = withValueAt(replaces ? stripped(env.original ?? {}) : segments.length > 1 ? beside(segments, planned, env.original) : {}, segments, value);
      const whole = adds || replaces;
      const result = await (listed ? items : validator).validate(document, whole ? "PUT" : "PATCH", env);
      const issue = issueAt(result.issues, segments);
      if (issue !== undefined) fail(entry.operator, entry.path, issue);
      else plan.operand = plan.rebuild!(listed ? (at(result.document, segments) as unknown[]) : [at(result.document, segments)]);
    }
  }

  /** A stored document as the validator sees a client's: without the fields only everest writes. */
  function stripped(document: Doc): Doc {
    const out: Doc = {};
    for (const [field, value] of Object.entries(document)) if (!reserved.has(field) || field === resource.auth_field) out[field] = value;
    return out;
  }
}

/**
 * The stored siblings of a value set below the top, with those the same request sets: what its
 * dependencies look at (a `$set` of `sub.y` needing `sub.x` was refused with `sub.x` stored).
 */
function beside(segments: string[], planned: Planned[], original: Doc | undefined): Doc {
  const parent = segments.slice(0, -1);
  const stored = at(original, parent);
  let document = withValueAt({}, parent, isPlainObject(stored) ? stored : {});
  const under = parent.join(".") + ".";
  for (const other of planned) {
    if (other.operator === "$set" && other.plan.values && other.segments.length === segments.length && other.path.startsWith(under)) document = withValueAt(document, other.segments, other.plan.values[0]);
  }
  return document;
}

function assemble(planned: Planned[], issues: Issues | null, paths: string[]): ParsedOperators {
  const update: Record<string, Doc> = {};
  const operators: Record<string, Doc> = {};
  const guards: Guard[] = [];
  const dicts = new Set<string>();
  for (const { operator, path, segments, plan } of planned) {
    (update[operator === "$currentDate" ? "$set" : operator] ??= {})[path] = plan.operand;
    (operators[operator] ??= {})[path] = operator === "$currentDate" ? true : plan.operand;
    // A dotted path goes through sub-documents, which must be ones (or absent: they are made).
    for (let i = 1; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join(".");
      if (!dicts.has(prefix)) guards.push(kindGuard(operator, prefix, "object", MESSAGES.type("dict")));
      dicts.add(prefix);
    }
    guards.push(...(plan.guards ?? []));
  }
  return { update: update as Update, operators, guards, paths, issues };
}
