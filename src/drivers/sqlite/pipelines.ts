// What an aggregation pipeline reaches besides its own collection, which the sqlite driver runs
// in JavaScript over the documents it reads: the collections it reads, and the stages that
// would write (refused).
import type { Doc } from "../types.ts";

export const WRITING_STAGES: ReadonlySet<string> = new Set(["$out", "$merge"]);

/** Collections a pipeline reads besides its own ($lookup, $graphLookup, $unionWith), at any depth. */
export function collectionsRead(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const element of value) collectionsRead(element, out);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if ((key === "$lookup" || key === "$graphLookup") && inner && typeof (inner as Doc).from === "string") out.add((inner as Doc).from as string);
      if (key === "$unionWith") {
        const name = typeof inner === "string" ? inner : (inner as Doc | null)?.coll;
        if (typeof name === "string") out.add(name);
      }
      collectionsRead(inner, out);
    }
  }
  return out;
}
