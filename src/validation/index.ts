// Document validation: Eve 2.3.1 / Cerberus 1.3 semantics and messages. See docs/validation.md.
export { compileValidator, type CompileOptions, type ValidationEngine } from "./validator.ts";
export { checkSchemaDefinition } from "./schema-check.ts";
export { documentSchema, toJsonSchema, type JsonSchema, type JsonSchemaOptions } from "./export.ts";
export type { CustomRule, CustomRuleDefinition, FieldValidator, RuleContext, ValidatorExtensions } from "./extensions.ts";
export type { Issues, ResourceValidator, ValidationEnv, ValidationMode, ValidationResult } from "./types.ts";
