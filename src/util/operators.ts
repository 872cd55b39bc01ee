// Query operators no client may send, whatever the settings say.

/** Server-side JavaScript: code that would run on the database server. */
export const SCRIPT_OPERATORS: ReadonlySet<string> = new Set(["$where", "$function", "$accumulator"]);

/** Aggregation stages that read or write collections other than the endpoint's own. */
export const CROSS_COLLECTION_OPERATORS: ReadonlySet<string> = new Set(["$lookup", "$graphLookup", "$unionWith", "$out", "$merge"]);

/**
 * Expressions a client's aggregation parameter may not hold. `$range`, `$reduce`, `$let`, `$map`
 * and `$replaceAll` build values without a bound (a `$range` of 10^8, a string doubled at each
 * step, nested maps or replacements each multiplying the last, ran the embedded store's process
 * out of heap, where MongoDB stops a stage at 100 MB); `$getField`, `$setField` and `$unsetField`
 * name a field by a plain string, which read rules do not see as a path.
 */
export const UNBOUNDED_PARAMETER_OPERATORS: ReadonlySet<string> = new Set(["$range", "$reduce", "$let", "$map", "$replaceAll", "$getField", "$setField", "$unsetField"]);

