// Aggregation endpoints (Eve's `_perform_aggregation`): the resource's pipeline with the client's
// `$placeholders` filled in, stages left without parameters pruned, the page cut by a `$facet`
// that also counts. As in Eve, `sort` and `where` are not read (the pipeline's stages order and filter). Beyond Eve, a placeholder value may not smuggle in server-side JavaScript or
// stages that read or write other collections, whatever the pipeline's author wrote around it.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { checkJsonShape } from "../http/json-shape.ts";
import type { Reply } from "../render/reply.ts";
import { pageMeta, parsePaging } from "../query/paging.ts";
import { castUntyped } from "../query/common.ts";
import { paginationLinks } from "../render/hateoas.ts";
import { isPlainObject } from "../util/objects.ts";
import { CROSS_COLLECTION_OPERATORS, SCRIPT_OPERATORS, UNBOUNDED_PARAMETER_OPERATORS } from "../util/operators.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { Mask } from "../auth/field-masks.ts";
import { aggregationMasks, checkParameterFields, visibleResults } from "./aggregation-rules.ts";


/** A copy of the plain structure; ObjectIds, dates and other values are shared, never changed. */
function copyStructure<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyStructure) as T;
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyStructure(v)])) as T;
  return value;
}

/** Every value equal to `placeholder`, in objects and arrays at any depth, becomes `value`. */
function substitute(node: unknown, placeholder: string, value: unknown): void {
  if (Array.isArray(node)) {
    node.forEach((member, i) => {
      if (member === placeholder) node[i] = copyStructure(value);
      else substitute(member, placeholder, value);
    });
  } else if (isPlainObject(node)) {
    for (const [key, member] of Object.entries(node)) {
      if (member === placeholder) node[key] = copyStructure(value);
      else substitute(member, placeholder, value);
    }
  }
}

/** Drops keys whose object value is, once pruned itself, empty (a placeholder given `{}`). */
function prune(node: Record<string, unknown>): void {
  for (const [key, member] of Object.entries(node)) {
    if (isPlainObject(member)) {
      prune(member);
      if (Object.keys(member).length === 0) delete node[key];
    }
  }
}

function refuseOperators(value: unknown): void {
  if (Array.isArray(value)) value.forEach(refuseOperators);
  else if (isPlainObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      if (SCRIPT_OPERATORS.has(key) || CROSS_COLLECTION_OPERATORS.has(key) || UNBOUNDED_PARAMETER_OPERATORS.has(key)) throw new HttpError(400, `operator ${key} is not allowed in an aggregation parameter`);
      refuseOperators(member);
    }
  }
}

/** Strings in a parameter value cast as Eve's `_mongotize` casts the pipeline (dates, ObjectIds). */
function castStrings(value: unknown, resource: Resource, config: Config): unknown {
  if (typeof value === "string") return castUntyped(value, resource, config);
  if (Array.isArray(value)) return value.map((member) => castStrings(member, resource, config));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, castStrings(v, resource, config)]));
  return value;
}

/** The `aggregate` parameter: `{"$placeholder": value, …}`. */
function parseParameters(config: Config, resource: Resource, raw: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError(400, "Aggregation query could not be parsed.");
  }
  if (!isPlainObject(parsed)) throw new HttpError(400, "Aggregation query could not be parsed.");
  checkJsonShape(parsed, config.MAX_JSON_DEPTH);
  refuseOperators(parsed);
  return castStrings(parsed, resource, config) as Record<string, unknown>;
}

/**
 * The pipeline this request runs, before pagination: placeholders filled, empty stages gone.
 * `withheld`: what field rules withhold from the caller, which no parameter may name.
 */
export function requestPipeline(config: Config, ctx: CallScope, pipeline: Doc[], withheld: Mask[] | null = null): Doc[] {
  const stages = copyStructure(pipeline);
  const raw = ctx.arg(config.QUERY_AGGREGATION);
  if (raw) {
    const parameters = parseParameters(config, ctx.resource!, raw);
    if (withheld) checkParameterFields(parameters, withheld);
    for (const [placeholder, value] of Object.entries(parameters)) {
      for (const stage of stages) substitute(stage, placeholder, value);
    }
  }
  return stages.filter((stage) => {
    prune(stage);
    return Object.keys(stage).length > 0;
  });
}

/** GET on an aggregation endpoint. */
export async function getAggregation(services: Services, ctx: CallScope): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const withheld = aggregationMasks(config, ctx, resource);
  const pipeline = requestPipeline(config, ctx, resource.datasource.aggregation!.pipeline, withheld);
  const paging = parsePaging(ctx.args, resource, config);
  await services.hooks.emit("before_aggregation", resource.name, pipeline);

  // Added after the hook, as Eve does: callbacks see and may change the pipeline, not the paging.
  const page: Doc[] = paging.maxResults > 0 ? [{ $skip: (paging.page - 1) * paging.maxResults }, { $limit: paging.maxResults }] : [{ $skip: 0 }];
  const [result] = await services.data.aggregate(ctx, resource, [...pipeline, { $facet: { paginated_results: page, total_count: [{ $count: "count" }] } }]);
  const results = (result?.paginated_results as Doc[] | undefined) ?? [];
  const documents = withheld ? visibleResults(config, ctx, resource, results, withheld) : results;
  const total = ((result?.total_count as Doc[] | undefined)?.[0]?.count as number | undefined) ?? 0;
  await services.hooks.emit("after_aggregation", resource.name, documents);

  const response: Doc = { [config.ITEMS]: documents };
  if (resource.pagination) response[config.META] = pageMeta(config, paging, total);
  if (resource.hateoas) response[config.LINKS] = paginationLinks(config, ctx, paging, total);
  return { status: 200, body: response };
}
