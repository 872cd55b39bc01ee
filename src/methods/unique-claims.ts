// `unique` where no index of the store guards it: a soft-delete resource or one with a datasource
// filter (their documents must not collide with deleted or filtered-out ones, so
// src/data/layer.ts uniqueIndexFields builds them no index), or any resource over a collection
// that such a resource, or one without that `unique`, shares. There a value is checked by a lookup
// during validation, and two writes of one value that look it up before either stores it would
// both be stored. Within one process a write holds the values it gives such fields from its
// lookups to its write, so that the second waits for the first and then finds its value taken.
// Several instances are not covered: docs/deploy.md says so.
import { unindexedUniqueFields } from "../data/layer.ts";
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";

const keyOf = (value: unknown): string => (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));

/**
 * Values held by the writes in progress, per collection, field and value. Equal values may map
 * to one key more often than the store would call them equal (1 and "1"): such writes only wait
 * for each other.
 */
export class UniqueClaims {
  private readonly tails = new Map<string, Promise<void>>();
  /** unindexedUniqueFields per resource: it depends on the settings alone, and every write asks. */
  private readonly unguarded = new WeakMap<Resource, string[]>();

  constructor(private readonly config: Config) {}

  private unguardedFields(resource: Resource): string[] {
    let fields = this.unguarded.get(resource);
    if (!fields) this.unguarded.set(resource, (fields = unindexedUniqueFields(this.config, resource)));
    return fields;
  }

  /**
   * Holds what `documents` give the resource's unguarded unique fields, waiting for writes that
   * hold any of them; resolves to the release. Null, synchronously, when the resource has no
   * such field or the documents give none (every other write pays nothing).
   */
  hold(resource: Resource, documents: Doc[]): Promise<() => void> | null {
    const fields = this.unguardedFields(resource);
    if (fields.length === 0) return null;
    const keys = new Set<string>();
    for (const document of documents) {
      for (const field of fields) if (document[field] !== undefined) keys.add(`${resource.datasource.source}\0${field}\0${keyOf(document[field])}`);
    }
    // Taken in one order by every write, so two writes holding two values each cannot wait on each other.
    return keys.size === 0 ? null : this.take([...keys].sort());
  }

  private async take(keys: string[]): Promise<() => void> {
    const releases: Array<() => void> = [];
    for (const key of keys) {
      const before = this.tails.get(key);
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      const tail = before ? before.then(() => mine) : mine;
      this.tails.set(key, tail);
      releases.push(() => {
        release();
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
      if (before) await before;
    }
    return () => {
      for (const release of releases) release();
    };
  }
}
