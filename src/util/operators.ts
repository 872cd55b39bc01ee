// Query operators no client may send, whatever the settings say.

/** Server-side JavaScript: code that would run on the database server. */
export const SCRIPT_OPERATORS: ReadonlySet<string> = new Set(["$where", "$function", "$accumulator"]);

/** Aggregation stages that read or write collections other than the endpoint's own. */
export const CROSS_COLLECTION_OPERATORS: ReadonlySet<string> = new Set(["$lookup", "$graphLookup", "$unionWith", "$out", "$merge"]);
