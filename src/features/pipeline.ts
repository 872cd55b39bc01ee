// The seam through which document features (versioning, media, oplog, …) take part in writes
// and reads without each method knowing about each feature. Features run in the order given.
import type { RequestContext } from "../context.ts";
import type { Doc } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";

export interface DocumentFeature {
  /** Documents validated and stamped, about to be hashed and inserted. */
  beforeInsert?(ctx: RequestContext, resource: Resource, documents: Doc[]): Promise<void> | void;
  afterInsert?(ctx: RequestContext, resource: Resource, documents: Doc[]): Promise<void> | void;
  beforeReplace?(ctx: RequestContext, resource: Resource, document: Doc, original: Doc): Promise<void> | void;
  afterReplace?(ctx: RequestContext, resource: Resource, document: Doc, original: Doc): Promise<void> | void;
  /** `updates` is what will be $set; `original` the stored document. */
  beforeUpdate?(ctx: RequestContext, resource: Resource, updates: Doc, original: Doc): Promise<void> | void;
  afterUpdate?(ctx: RequestContext, resource: Resource, updates: Doc, updated: Doc, original: Doc): Promise<void> | void;
  /** A document was removed for good (not soft-deleted). */
  afterDelete?(ctx: RequestContext, resource: Resource, original: Doc): Promise<void> | void;
  /** A whole collection's documents were removed for good. */
  afterDeleteMany?(ctx: RequestContext, resource: Resource, originals: Doc[]): Promise<void> | void;
  /** `marked` (the original flagged deleted) is hashed already and about to replace it. */
  beforeSoftDelete?(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc): Promise<void> | void;
  afterSoftDelete?(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc): Promise<void> | void;
  /**
   * A document about to be sent (Eve's `build_response_document`), meta fields and links in
   * place; `latest` is the stored current document (itself, unless an older version is sent).
   */
  beforeRespond?(ctx: RequestContext, resource: Resource, document: Doc, latest: Doc): Promise<void> | void;
}

type Stage = keyof DocumentFeature;

export class FeaturePipeline {
  constructor(private readonly features: DocumentFeature[] = []) {}

  private async run(stage: Stage, args: unknown[]): Promise<void> {
    for (const feature of this.features) {
      const step = feature[stage] as ((...a: unknown[]) => Promise<void> | void) | undefined;
      if (step) await step.apply(feature, args);
    }
  }

  beforeInsert(ctx: RequestContext, resource: Resource, documents: Doc[]) {
    return this.run("beforeInsert", [ctx, resource, documents]);
  }
  afterInsert(ctx: RequestContext, resource: Resource, documents: Doc[]) {
    return this.run("afterInsert", [ctx, resource, documents]);
  }
  beforeReplace(ctx: RequestContext, resource: Resource, document: Doc, original: Doc) {
    return this.run("beforeReplace", [ctx, resource, document, original]);
  }
  afterReplace(ctx: RequestContext, resource: Resource, document: Doc, original: Doc) {
    return this.run("afterReplace", [ctx, resource, document, original]);
  }
  beforeUpdate(ctx: RequestContext, resource: Resource, updates: Doc, original: Doc) {
    return this.run("beforeUpdate", [ctx, resource, updates, original]);
  }
  afterUpdate(ctx: RequestContext, resource: Resource, updates: Doc, updated: Doc, original: Doc) {
    return this.run("afterUpdate", [ctx, resource, updates, updated, original]);
  }
  afterDelete(ctx: RequestContext, resource: Resource, original: Doc) {
    return this.run("afterDelete", [ctx, resource, original]);
  }
  afterDeleteMany(ctx: RequestContext, resource: Resource, originals: Doc[]) {
    return this.run("afterDeleteMany", [ctx, resource, originals]);
  }
  beforeSoftDelete(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc) {
    return this.run("beforeSoftDelete", [ctx, resource, marked, original]);
  }
  afterSoftDelete(ctx: RequestContext, resource: Resource, marked: Doc, original: Doc) {
    return this.run("afterSoftDelete", [ctx, resource, marked, original]);
  }
  beforeRespond(ctx: RequestContext, resource: Resource, document: Doc, latest: Doc) {
    return this.run("beforeRespond", [ctx, resource, document, latest]);
  }
}
