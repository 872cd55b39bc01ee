// Public API of everest.
export { createHandler, type Handler } from "./handler.ts";
export { App, type HandlerOptions } from "./app.ts";
export { RequestContext } from "./context.ts";
/** The request body as text, read once and kept for the method: what an auth check reads, never `ctx.request` itself. */
export { readBodyText as requestBodyText } from "./request/payload.ts";
export { HttpError, abort } from "./errors.ts";
export { Hooks, type HookCallback, type HookMap, type HookName, type HookSignatures } from "./events/hooks.ts";
export type { Settings, ResourceSettings, FieldSchema, FieldType, Schema, HttpMethod, DataRelation, CustomRules, CustomTypes, PrefixedDatabaseSetting } from "./settings/types.ts";
export type { Config, Resource } from "./settings/normalize.ts";
export type { FieldAccessHook, FieldAccessRequest } from "./settings/field-rules.ts";
export type { Driver, Doc, Filter, Sort, Projection, Target, FindQuery, Update, Change, Stamp, ModifyOptions, ModifyManyOptions, IndexSpec, MediaStore, MediaFile, RuntimeServices, FileAccess, FileReplacement, FileLock } from "./drivers/types.ts";
export { DuplicateKeyError, DatabaseUnavailableError, InvalidQueryError, UnmetRequirementError, FileLockedError } from "./drivers/types.ts";
export type { DocumentFeature } from "./features/pipeline.ts";
export { createLogger, consoleLogger, type Logger, type LogRecord } from "./logging.ts";
export { Auth, BasicAuth, TokenAuth, HMACAuth, hmacSha256Hex, type BasicAccount, type TokenAccount, type HmacAccount } from "./auth/auth.ts";
export { timingSafeEqual } from "./util/compare.ts";
export { MemoryRateLimitStore, type RateLimitStore, type RateLimitWindow } from "./ratelimit/index.ts";
export { compileValidator, toJsonSchema, type ValidatorExtensions, type CustomRule, type CustomRuleDefinition, type FieldValidator, type RuleContext, type ValidationEngine } from "./validation/index.ts";
export { openApiDocument, buildOpenApi, type OpenApiDocument, type OpenApiOptions } from "./openapi/index.ts";
export { createDataApiHandler, type DataApiHandlerOptions } from "./gateway/index.ts";
