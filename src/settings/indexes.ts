// A `mongo_indexes` entry in each form an Eve settings file writes it: a list of (field,
// direction) pairs; Eve's (pairs, options) tuple, a two-element list in JSON; or
// `{key, options}`. One reading for the data layer (src/data/layer.ts), cursor orders
// (src/query/keyset.ts) and the start-up check (./validate.ts).

export interface IndexDefinition {
  key: Array<[string, 1 | -1 | "2dsphere" | "2d" | "text" | "hashed"]>;
  options: Record<string, unknown>;
}

const isPair = (value: unknown): boolean => Array.isArray(value) && value.length === 2 && typeof value[0] === "string";
const isKey = (value: unknown): value is IndexDefinition["key"] => Array.isArray(value) && value.length > 0 && value.every(isPair);
const isOptions = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The entry's keys and options, or null for a shape none of the three forms has. */
export function indexDefinition(definition: unknown): IndexDefinition | null {
  if (isKey(definition)) return { key: definition, options: {} };
  if (Array.isArray(definition) && definition.length === 2 && isKey(definition[0]) && isOptions(definition[1])) return { key: definition[0], options: definition[1] };
  // `{key, unique: true}` would build a plain index without a word: options go under `options`.
  const known = isOptions(definition) && Object.keys(definition).every((name) => name === "key" || name === "options");
  if (known && isKey(definition.key) && (definition.options === undefined || isOptions(definition.options))) return { key: definition.key, options: (definition.options as Record<string, unknown> | undefined) ?? {} };
  return null;
}
