// The extension API: what Eve users write as `_validate_<rule>`, `_validate_type_<type>`,
// `_normalize_coerce_<name>`, `_normalize_default_setter_<name>` and `check_with` methods on a
// Validator subclass, given here as plain functions. See docs/validation.md.
import type { Doc } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";
import type { ValidationEnv, ValidationMode } from "./types.ts";

/** What a custom rule or a field validator can see and do while a document is validated. */
export interface RuleContext {
  /** Reports an error on `field` of the current (sub-)document: the field itself or a sibling. */
  error(field: string | number, message: string): void;
  /** The (sub-)document that holds the field; for list items, the list. */
  readonly document: Doc | unknown[];
  /** The whole document being validated, converted and normalized. */
  readonly root: Doc;
  /** The stored document, on PUT and PATCH. */
  readonly original: Doc | undefined;
  readonly mode: ValidationMode;
  readonly resource: Resource;
  /** Where the field sits in the document, e.g. `["location", "city"]` or `["tags", 2]`. */
  readonly path: ReadonlyArray<string | number>;
  readonly env: ValidationEnv;
}

/** `_validate_<rule>(self, rule_value, field, value)`. */
export type CustomRule = (ruleValue: any, field: string | number, value: unknown, ctx: RuleContext) => void | Promise<void>;

export interface CustomRuleDefinition {
  validate: CustomRule;
  /**
   * Start-up check of the value a schema gives the rule (Cerberus checks it against the rule's
   * docstring schema): return a description of what is wrong, or nothing when it is fine.
   */
  check?(ruleValue: unknown): string | undefined | void;
}

/** A `check_with` / `validator` function: `(field, value, error)`, as in Cerberus. */
export type FieldValidator = (
  field: string | number,
  value: unknown,
  error: (field: string | number, message: string) => void,
  ctx: RuleContext,
) => void | Promise<void>;

export interface ValidatorExtensions {
  /** Custom rules by name, usable in any field definition. */
  rules?: Record<string, CustomRule | CustomRuleDefinition>;
  /** Custom types by name: a predicate on the (converted) value. */
  types?: Record<string, (value: unknown) => boolean>;
  /** Named coercers for `coerce: "<name>"` (and `rename_handler`). A thrown error is reported. */
  coercers?: Record<string, (value: unknown) => unknown>;
  /** Named default setters for `default_setter: "<name>"`; they receive the (sub-)document. */
  defaultSetters?: Record<string, (document: Doc) => unknown>;
  /** Named field validators for `check_with: "<name>"` / `validator: "<name>"`. */
  validators?: Record<string, FieldValidator>;
}

export function customRule(definition: CustomRule | CustomRuleDefinition): CustomRuleDefinition {
  return typeof definition === "function" ? { validate: definition } : definition;
}
