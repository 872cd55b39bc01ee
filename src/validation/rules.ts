// Cerberus' rules as closures over a field being validated (walk.ts runs them in queue order).
import type { Doc } from "../drivers/types.ts";
import { ObjectId } from "bson";
import type { Config, Resource } from "../settings/normalize.ts";
import { referencedVersion, relationField } from "../settings/relations.ts";
import { isObjectIdHex } from "../util/objectid.ts";
import { bsonType } from "./datatypes.ts";
import { Level, MESSAGES, type Path } from "./errors.ts";
import type { CustomRule, FieldValidator } from "./extensions.ts";
import type { DocRun, FieldNode, FieldRun, RuleRun, UniqueCandidate } from "./tree.ts";
import { type LogicRule } from "./vocabulary.ts";
import { isPlainObject } from "../util/objects.ts";
import { child, distinct, fail, members, noDict, pyEqual, ruleContext, sizeOf, validateDict, validateField } from "./walk.ts";

// ---- rules --------------------------------------------------------------------------------

export function allowed(values: unknown[]): RuleRun {
  return (value, f, q) => {
    const items = members(value);
    if (items) {
      const bad = distinct(items.filter((v) => !values.some((a) => pyEqual(a, v))));
      if (bad.length) fail(f, q, "allowed", MESSAGES.unallowedValues(bad));
    } else if (!values.some((a) => pyEqual(a, value))) {
      fail(f, q, "allowed", MESSAGES.unallowedValue(value));
    }
  };
}

export function forbidden(values: unknown[]): RuleRun {
  return (value, f, q) => {
    if (Array.isArray(value)) {
      const bad = distinct(value.filter((v) => values.some((a) => pyEqual(a, v))));
      if (bad.length) fail(f, q, "forbidden", MESSAGES.unallowedValues(bad));
    } else if (values.some((a) => pyEqual(a, value))) {
      fail(f, q, "forbidden", MESSAGES.unallowedValue(value));
    }
  };
}

export function contains(expected: unknown): RuleRun {
  const wanted = Array.isArray(expected) ? expected : [expected];
  return (value, f, q) => {
    const have = typeof value === "string" ? [...value] : members(value);
    if (!have) return;
    const missing = distinct(wanted.filter((w) => !have.some((h) => pyEqual(h, w))));
    if (missing.length) fail(f, q, "contains", MESSAGES.missingMembers(missing));
  };
}

function comparable(a: unknown, b: unknown): [number | string, number | string] | null {
  if (typeof a === "number" && typeof b === "number") return [a, b];
  if (typeof a === "string" && typeof b === "string") return [a, b];
  if (a instanceof Date && b instanceof Date) return [a.getTime(), b.getTime()];
  return null;
}

/** `min` / `max`; values Python cannot order against the bound are not checked. */
export function bound(name: "min" | "max", limit: unknown): RuleRun {
  return (value, f, q) => {
    const pair = comparable(value, limit);
    if (!pair) return;
    if (name === "min" ? pair[0] < pair[1] : pair[0] > pair[1]) fail(f, q, name, MESSAGES[name](limit));
  };
}

export function length(name: "minlength" | "maxlength", limit: number): RuleRun {
  return (value, f, q) => {
    const size = sizeOf(value);
    if (size === undefined) return;
    if (name === "minlength" ? size < limit : size > limit) fail(f, q, name, MESSAGES[name](limit));
  };
}

/**
 * A Cerberus regex as JavaScript: anchored the way Cerberus anchors it (`$` appended unless
 * present, matched from the start), Python-only syntax translated. `unicode` tells whether
 * it also compiles with the `u` flag, which JSON Schema validators use.
 */
export function compilePattern(pattern: string): { regex: RegExp; source: string; unicode: boolean } {
  const translated = (pattern.endsWith("$") ? pattern : pattern + "$")
    .replace(/\(\?P</g, "(?<")
    .replace(/\(\?P=(\w+)\)/g, "\\k<$1>")
    .replace(/\\A/g, "^")
    .replace(/\\Z/g, "$");
  const source = `^(?:${translated})`;
  try {
    return { regex: new RegExp(source, "u"), source, unicode: true };
  } catch {
    return { regex: new RegExp(source), source, unicode: false };
  }
}

export function regex(pattern: string, compiled: RegExp): RuleRun {
  return (value, f, q) => {
    if (typeof value === "string" && !compiled.test(value)) fail(f, q, "regex", MESSAGES.regex(pattern));
  };
}

/** Cerberus' `_lookup_field`: dotted paths, `^` for the root document. */
function lookupField(f: FieldRun, name: string): { found: boolean; value: unknown } {
  let path = name;
  let context: unknown = f.container;
  let atRoot = f.path.length === 1;
  if (path.startsWith("^")) {
    path = path.slice(1);
    if (!path.startsWith("^")) {
      context = f.doc.root;
      atRoot = true;
    }
  }
  const parts = path.split(".");
  const walk = (start: unknown) => {
    let current = start;
    for (const part of parts) {
      if (!isPlainObject(current) || !Object.hasOwn(current, part)) return { found: false, value: null };
      current = current[part];
    }
    return { found: true, value: current };
  };
  const result = walk(context);
  // Eve checks a PATCH (or PUT) against the stored values of fields it does not send.
  if (!result.found && atRoot && f.doc.original) return walk(f.doc.original);
  return result;
}

export function dependencies(spec: unknown): RuleRun {
  return (_value, f, q) => {
    if (isPlainObject(spec)) {
      const ok = Object.entries(spec).every(([name, wanted]) => {
        const allowedValues = Array.isArray(wanted) ? wanted : [wanted];
        const { value } = lookupField(f, name);
        return allowedValues.some((a) => pyEqual(a, value));
      });
      if (!ok) fail(f, q, "dependencies", MESSAGES.dependencyValues(spec));
      return;
    }
    const names = Array.isArray(spec) ? spec : [spec];
    names.forEach((name, i) => {
      if (!lookupField(f, String(name)).found) fail(f, q, "dependencies", MESSAGES.dependencyField(String(name)), i);
    });
  };
}

export function excludes(excluded: string[]): RuleRun {
  return (_value, f, q) => {
    if (f.node.required) {
      const unrequired = (f.dict.unrequired ??= new Set());
      unrequired.add(String(f.field));
      for (const name of excluded) if (f.dict.node?.fields.has(name)) unrequired.add(name);
    }
    const container = f.container as Record<string, unknown>;
    if (excluded.some((name) => Object.hasOwn(container, name))) fail(f, q, "excludes", MESSAGES.excludes(excluded, f.field));
  };
}

/** `schema`: a sub-document against its mapping, or every list item against its rules. */
export function schema(node: FieldNode): RuleRun {
  return (value, f, q) => {
    if (node.dict && isPlainObject(value)) {
      if (f.residual && !node.dict.residualWork) return;
      const level = f.level.group(f.path, "schema", [1, f.index, q]);
      validateDict({ doc: f.doc, level, path: f.path, residual: f.residual, update: f.update }, node.dict, value);
    } else if (node.list && Array.isArray(value)) {
      const item = node.list;
      if (f.residual && item.covered && !item.residualWork) return;
      const level = f.level.group(f.path, "schema", [1, f.index, q]);
      value.forEach((v, i) => validateField(child(f, item, level, i, value, i, noDict()), v));
    }
  };
}

export function items(nodes: FieldNode[]): RuleRun {
  return (value, f, q) => {
    if (!Array.isArray(value)) return;
    if (value.length !== nodes.length) {
      if (!f.residual) fail(f, q, "items", MESSAGES.itemsLength(nodes.length, value.length));
      return;
    }
    const level = f.level.group(f.path, "items", [1, f.index, q]);
    nodes.forEach((node, i) => {
      const g = child(f, node, level, i, value, i, noDict());
      if (!g.residual || node.residualWork) validateField(g, value[i]);
    });
  };
}

function mappingRule(rule: "keysrules" | "valuesrules", node: FieldNode): RuleRun {
  return (value, f, q) => {
    if (!isPlainObject(value)) return;
    if (f.residual && node.covered && !node.residualWork) return;
    const level = f.level.group(f.path, rule, [1, f.index, q]);
    Object.keys(value).forEach((key, i) => validateField(child(f, node, level, key, value, i, noDict()), rule === "keysrules" ? key : value[key]));
  };
}

export const keysrules = (node: FieldNode) => mappingRule("keysrules", node);
export const valuesrules = (node: FieldNode) => mappingRule("valuesrules", node);

const LOGIC_PASSES: Record<LogicRule, (valid: number, total: number) => boolean> = {
  anyof: (valid) => valid >= 1,
  allof: (valid, total) => valid === total,
  noneof: (valid) => valid === 0,
  oneof: (valid) => valid === 1,
};

export function logic(rule: LogicRule, definitions: FieldNode[]): RuleRun {
  return (value, f, q) => {
    const doc: DocRun = { ...f.doc, pending: [] };
    const levels = definitions.map((node) => {
      const level = new Level();
      validateField({ ...f, doc, node, level, residual: false, dict: noDict() }, value);
      return level;
    });
    const finish = () => {
      const valid = levels.filter((l) => l.isEmpty()).length;
      if (!LOGIC_PASSES[rule](valid, definitions.length)) {
        f.level.add([1, f.index, q], { path: f.path, rule, message: MESSAGES[rule], definitions: levels });
      }
    };
    if (!doc.pending.length) return finish();
    return settle(doc.pending).then(finish);
  };
}

/** Waits for every pending check, including the ones those add. */
export async function settle(pending: Array<Promise<unknown>>): Promise<void> {
  while (pending.length) await Promise.all(pending.splice(0));
}

export function checkWith(validators: FieldValidator[]): RuleRun {
  return (value, f, q) => {
    const waiting: Array<Promise<unknown> | void> = validators.map((validate, i) => {
      const ctx = ruleContext(f, q, [i]);
      return validate(f.field, value, ctx.error, ctx);
    });
    const promises = waiting.filter((p): p is Promise<unknown> => !!p);
    return promises.length ? Promise.all(promises) : undefined;
  };
}

export function custom(validate: CustomRule, ruleValue: unknown): RuleRun {
  return (value, f, q) => validate(ruleValue, f.field, value, ruleContext(f, q));
}

/** A class, not a literal, as a bulk insert holds one per document (docs/performance.md). */
class Candidate implements UniqueCandidate {
  reported = false;
  deferred?: () => Promise<void>;
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly level: Level,
    readonly key: number[],
    readonly path: Path,
  ) {}
}

/**
 * `unique`, `unique_to_user` and `unique_within_resource` (Eve's `_is_value_unique`): another
 * live document of the resource holding the value. `unique` and `unique_to_user` look at the
 * whole collection, `unique_within_resource` only at the resource's datasource filter.
 */
export function unique(kind: "unique" | "unique_to_user" | "unique_within_resource"): RuleRun {
  return (value, f, q) => {
    if (value === null) return;
    const { env, resource, original } = f.doc;
    const filter: Doc = { [f.node.queryPath]: value };
    if (original && original[resource.id_field] !== undefined) {
      // The id field itself: a PUT or PATCH may only repeat it (checkImmutableId,
      // src/methods/conditional.ts), and the document's own id is held by no other.
      if (f.node.queryPath === resource.id_field) return;
      filter[resource.id_field] = { $ne: original[resource.id_field] };
    }
    if (kind === "unique_to_user" && resource.auth_field) filter[resource.auth_field] = env.requestAuthValue ?? null;
    const candidate = new Candidate(f.node.queryPath, value, f.level, Array.of(1, f.index, q), f.path);
    f.doc.unique.push(candidate);
    const lookup = () =>
      env.findOne(resource.name, filter, kind === "unique_within_resource" ? undefined : { ignoreFilter: true }).then((found) => {
        if (!found) return;
        candidate.reported = true;
        f.level.add(candidate.key, { path: f.path, rule: null, message: MESSAGES.notUnique(value) });
      });
    if (kind === "unique" && !original && env.uniqueByIndex?.has(candidate.field) && isIndexScalar(value)) candidate.deferred = lookup;
    else return lookup();
  };
}

/** Values a unique index and an equality query agree on (an array would match by element). */
function isIndexScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && !Number.isNaN(value));
}

export interface RelationSpec {
  resource: string;
  field?: string;
  version?: boolean;
}

/**
 * A reference sent as a string (a list data_relation without an item schema) looked up as Eve's
 * find_one looks it up: 24 hex digits are an ObjectId, unless the target field is typed otherwise.
 */
function storedReference(id: unknown, target: Resource | undefined, field: string): unknown {
  if (typeof id !== "string" || !isObjectIdHex(id) || !target || target.query_objectid_as_string) return id;
  const type = target.schema[field]?.type ?? (field === target.id_field ? "objectid" : undefined);
  return type === undefined || type === "objectid" ? new ObjectId(id) : id;
}

/** Eve's `_validate_data_relation`: the referenced document exists and is not soft-deleted. */
export function dataRelation(spec: RelationSpec, config: Config): RuleRun {
  const field = relationField(config, spec);
  const target = spec.resource;
  return (value, f, q) => {
    if (value === null || (f.node.nullable && isFalsy(value))) return;
    const { env } = f.doc;
    if (spec.version === true) {
      const versionField = config.VERSION;
      if (!isPlainObject(value) || !Object.hasOwn(value, field) || !Object.hasOwn(value, versionField)) {
        fail(f, q, null, MESSAGES.versionedRelationShape(field, versionField));
        return;
      }
      if (!config.DOMAIN[target]?.versioning) {
        fail(f, q, null, MESSAGES.unversionedRelation(target));
        return;
      }
      return referencedVersion(config, config.DOMAIN[target]!, field, value, env.findOne).then((found) => {
        if (!found) fail(f, q, null, MESSAGES.versionedRelation(value[field], target, field, value[versionField]));
      });
    }
    const references = Array.isArray(value) ? value : [value];
    return Promise.all(
      references.map((reference, i) => {
        const id = bsonType(reference) === "DBRef" ? (reference as { oid: unknown }).oid : reference;
        return env.findOne(target, { [field]: storedReference(id, config.DOMAIN[target], field) }).then((found) => {
          if (!found) fail(f, q, null, MESSAGES.relation(id, target, field), i);
        });
      }),
    );
  };
}

/** Python's `not value`. */
function isFalsy(value: unknown): boolean {
  return value === false || value === 0 || value === "" || sizeOf(value) === 0;
}
