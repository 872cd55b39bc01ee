// The memory driver's aggregation: mingo's Aggregator with the pipeline stages, expression and
// accumulator operators it offers. mingo.ts imports this module the first time an operation
// needs it (a pipeline, or `$expr` in a filter), so a bundle keeps it apart (a chunk of its own
// in the Workers build) and deployments that only read and write never load it.
//
// Left out, deliberately (docs/drivers.md lists them; all fail as unknown operators, 400):
// - window functions: the $setWindowFields stage and its operators ($rank, $denseRank,
//   $documentNumber, $shift, $derivative, $integral, $expMovingAvg, $linearFill, $locf,
//   $minMaxScaler, and $covariancePop/$covarianceSamp, which only windows accept), with $fill
//   (built on them) and $densify — the MongoDB emulator the suites run against lacks all of them;
// - $out and $merge, which the driver refuses before mingo sees them (they would bypass the
//   store's indexes and journal);
// - $function and $accumulator, server-side JavaScript, refused everywhere;
// - $toHashedIndexKey, a sharding helper.
import { Aggregator } from "mingo/aggregator";
import * as accumulators from "mingo/operators/accumulator";
import * as arithmetic from "mingo/operators/expression/arithmetic";
import * as array from "mingo/operators/expression/array";
import * as bitwise from "mingo/operators/expression/bitwise";
import * as boolean from "mingo/operators/expression/boolean";
import * as comparison from "mingo/operators/expression/comparison";
import * as conditional from "mingo/operators/expression/conditional";
import * as date from "mingo/operators/expression/date";
import * as misc from "mingo/operators/expression/misc";
import * as object from "mingo/operators/expression/object";
import * as set from "mingo/operators/expression/set";
import * as string from "mingo/operators/expression/string";
import * as trigonometry from "mingo/operators/expression/trignometry";
import * as type from "mingo/operators/expression/type";
import * as variable from "mingo/operators/expression/variable";
import { $literal, $median, $percentile } from "mingo/operators/expression";
import * as pipelineStages from "mingo/operators/pipeline";
import type { AccumulatorOperator, ExpressionOperator, Options, PipelineOperator } from "mingo/types";
import type { Doc } from "../types.ts";

export const expressionOperators: Record<string, ExpressionOperator> = {
  ...arithmetic,
  ...array,
  ...bitwise,
  ...boolean,
  ...comparison,
  ...conditional,
  ...date,
  ...misc,
  ...object,
  ...set,
  ...string,
  ...trigonometry,
  ...type,
  ...variable,
  $literal,
  $median,
  $percentile,
};

/** mingo's operators of one kind, less those left out (listed above). */
function offered<T>(all: Record<string, unknown>, leftOut: readonly string[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, operator] of Object.entries(all)) if (name.startsWith("$") && !leftOut.includes(name)) out[name] = operator as T;
  return out;
}

export const accumulatorOperators: Record<string, AccumulatorOperator> = offered(accumulators, ["$accumulator", "$covariancePop", "$covarianceSamp"]);

/** MongoDB's $count emits no document at all for empty input, where mingo's emits a count of 0. */
const $countStage: typeof pipelineStages.$count = (collection, expr, options) =>
  pipelineStages.$count(collection, expr, options).filter((doc: Record<string, number>) => doc[expr as string]! > 0);

export const pipelineOperators: Record<string, PipelineOperator> = {
  ...offered<PipelineOperator>(pipelineStages, ["$setWindowFields", "$fill", "$densify", "$out", "$merge"]),
  $count: $countStage,
};

/** Runs a pipeline with options whose context holds the operators above. */
export function aggregate(stages: Doc[], input: Doc[], options: Partial<Options>): Doc[] {
  return new Aggregator(stages, options).run<Doc>(input);
}
