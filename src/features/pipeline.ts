// The seam through which document features (versioning, media, oplog, …) take part in writes
// and reads without each method knowing about each feature. Features run in the order given.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";

export interface DocumentFeature {
  /** Documents validated and stamped, about to be hashed and inserted. */
  beforeInsert?(ctx: CallScope, resource: Resource, documents: Doc[]): Promise<void> | void;
  /**
   * Whether this feature's beforeInsert, for the resource, leaves every field validation saw as
   * it was and acts on nothing outside the documents, so an insert the store refuses leaves
   * nothing behind. A feature with a beforeInsert that does not say so is assumed not to.
   */
  keepsInserts?(resource: Resource): boolean;
  afterInsert?(ctx: CallScope, resource: Resource, documents: Doc[]): Promise<void> | void;
  beforeReplace?(ctx: CallScope, resource: Resource, document: Doc, original: Doc): Promise<void> | void;
  afterReplace?(ctx: CallScope, resource: Resource, document: Doc, original: Doc): Promise<void> | void;
  /** `updates` is what will be $set; `original` the stored document. */
  beforeUpdate?(ctx: CallScope, resource: Resource, updates: Doc, original: Doc): Promise<void> | void;
  afterUpdate?(ctx: CallScope, resource: Resource, updates: Doc, updated: Doc, original: Doc): Promise<void> | void;
  /** A document was removed for good (not soft-deleted). */
  afterDelete?(ctx: CallScope, resource: Resource, original: Doc): Promise<void> | void;
  /** A whole collection's documents were removed for good. */
  afterDeleteMany?(ctx: CallScope, resource: Resource, originals: Doc[]): Promise<void> | void;
  /** `marked` (the original flagged deleted) is hashed already and about to replace it. */
  beforeSoftDelete?(ctx: CallScope, resource: Resource, marked: Doc, original: Doc): Promise<void> | void;
  afterSoftDelete?(ctx: CallScope, resource: Resource, marked: Doc, original: Doc): Promise<void> | void;
  /**
   * A document about to be sent (Eve's `build_response_document`), meta fields and links in
   * place; `latest` is the stored current document (itself, unless an older version is sent).
   */
  beforeRespond?(ctx: CallScope, resource: Resource, document: Doc, latest: Doc): Promise<void> | void;
}

type Stage = keyof DocumentFeature;

export class FeaturePipeline {
  constructor(private readonly features: DocumentFeature[] = []) {}

  /** Runs one stage of every feature that has it, in order; each stage's arguments are typed by DocumentFeature. */
  async run<S extends Stage>(stage: S, ...args: Parameters<NonNullable<DocumentFeature[S]>>): Promise<void> {
    for (const feature of this.features) {
      const step = feature[stage] as ((...a: unknown[]) => Promise<void> | void) | undefined;
      if (step) await step.apply(feature, args);
    }
  }

  /** No feature's beforeInsert changes what validation saw or acts outside the documents (keepsInserts). */
  keepsInserts(resource: Resource): boolean {
    return this.features.every((feature) => !feature.beforeInsert || feature.keepsInserts?.(resource) === true);
  }
}
