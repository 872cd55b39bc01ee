// The compiled form of a schema (built by compile.ts) and the state of one validation run over
// it (walk.ts, rules.ts): the types every part of the validator shares.
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { JsonType } from "./datatypes.ts";
import type { Level, Path, Segment } from "./errors.ts";
import type { ValidationEnv, ValidationMode } from "./types.ts";

/** How the JSON Schema engine treats a rule of a node it covers. */
export type JsonHandling =
  /** Expressed in the JSON Schema; the closure only runs in the closure engine. */
  | "full"
  /** A container rule: the JSON Schema checks it, the closure still descends for residual work. */
  | "recurse"
  /** Closure only (database lookups, functions, cross-field rules). */
  | "none";

export interface Rule {
  name: string;
  /** Position in the field's Cerberus rule queue: orders errors as Cerberus emits them. */
  q: number;
  json: JsonHandling;
  /** The rule's value in the definition. */
  value: unknown;
  run: RuleRun;
}

export interface DictNode {
  fields: Map<string, FieldNode>;
  /** Schema order, for readonly and default processing and required errors. */
  order: string[];
  required: string[];
  allowUnknown: boolean;
  purgeUnknown: boolean;
  /** Fields stored as sent without validation (the root's meta fields). */
  meta: ReadonlySet<string>;
  /** False when `excludes` makes requiredness depend on the document (closures decide). */
  requiredInJson: boolean;
  /** Work for the closure walk of the JSON Schema engine in this sub-document. */
  residualWork: boolean;
  /** Whether normalization has anything to do here (a field or sub-document renames, defaults, coerces, purges …). */
  normalizes: boolean;
}

export interface FieldNode {
  name: Segment;
  def: Record<string, unknown>;
  /** The `type` value as written, for "must be of … type". */
  typeLabel: unknown;
  typeTest: ((value: unknown) => boolean) | null;
  /** Set when every type of the field has a JSON Schema equivalent. */
  jsonTypes: JsonType[] | null;
  nullable: boolean;
  readonly: boolean;
  required: boolean;
  hasEmpty: boolean;
  empty: boolean;
  /** The JSON Schema engine's schema checks this node (it and its ancestors are JSON types). */
  covered: boolean;
  queue: Rule[];
  convert: ((value: unknown) => unknown) | null;
  autoList: boolean;
  coerce: Array<(value: unknown) => unknown> | null;
  renameTo: string | null;
  renameHandler: Array<(value: unknown) => unknown> | null;
  hasDefault: boolean;
  defaultValue: unknown;
  defaultSetter: ((document: Doc) => unknown) | null;
  dict: DictNode | null;
  list: FieldNode | null;
  items: FieldNode[] | null;
  keysrules: FieldNode | null;
  valuesrules: FieldNode | null;
  /** Every `*of` definition, in order (type conversion tries each, as Eve does). */
  definitions: FieldNode[];
  /** Eve's dotted query path for `unique` (list levels skipped). */
  queryPath: string;
  /** Work for the closure walk of the JSON Schema engine at or below this node. */
  residualWork: boolean;
  converts: boolean;
  normalizes: boolean;
}


/** One document's validation. */
export interface DocRun {
  mode: ValidationMode;
  env: ValidationEnv;
  config: Config;
  resource: Resource;
  root: Doc;
  original: Doc | undefined;
  /** Whether the normalization phase ran (PATCH skips it unless normalize_on_patch). */
  normalized: boolean;
  pending: Array<Promise<unknown>>;
  /** JSON Schema engine: where its schema found a type error (closures skip those fields). */
  badType: Set<string> | null;
  /** Top-level fields that failed `readonly` during normalization: nothing else is checked (null until one does). */
  blocked: Set<string> | null;
  /** Values checked for uniqueness, for the cross-document check of a bulk insert. */
  unique: UniqueCandidate[];
}

export interface UniqueCandidate {
  field: string;
  value: unknown;
  level: Level;
  key: number[];
  path: Path;
  /** Set once the database lookup reported it. */
  reported: boolean;
  /**
   * The database lookup, when it was left to the store's unique index (ValidationEnv
   * uniqueByIndex): run only if the document is refused anyway, so the issues stay Eve's.
   */
  deferred?: () => Promise<void>;
}

/** The state of one child validator over a mapping. */
export interface DictState {
  node: DictNode | null;
  /** Cerberus' `_unrequired_by_excludes`; made by the first `excludes` that adds to it (most documents have none). */
  unrequired: Set<string> | null;
}

/** One field being validated. */
export interface FieldRun {
  doc: DocRun;
  node: FieldNode;
  level: Level;
  path: Path;
  field: Segment;
  /** The validator's document: the mapping that holds the field, or the list for items. */
  container: Doc | unknown[];
  /** The field's position in its container: the order Cerberus validates fields in. */
  index: number;
  residual: boolean;
  update: boolean;
  dict: DictState;
}

export type RuleRun = (value: unknown, f: FieldRun, q: number) => void | Promise<unknown>;
