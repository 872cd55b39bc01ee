// The seam through which document features (versioning, media, oplog, …) take part in writes
// and reads without each method knowing about each feature. Features run in the order given.
import type { CallScope } from "../scope.ts";
import type { Doc, Update } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";

export interface DocumentFeature {
  /**
   * Whether the feature acts on the resource at all, which its settings alone decide (versioning
   * off, no media fields …): a feature that does not is left out of the resource's stages, so
   * what is off costs nothing. Absent means it may act on any resource.
   */
  appliesTo?(resource: Resource): boolean;
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
  /**
   * An update the store applies itself (update operators, writes by filter: docs/updates.md),
   * about to be sent for `originals` as read before it: what the feature adds must hold
   * whatever the documents are by the time the store applies it (an `$inc`, not a value
   * worked out from an original). Each changed document then goes through afterUpdate (or
   * afterSoftDelete) with the document before and after, as the store reports them.
   */
  beforeModify?(ctx: CallScope, resource: Resource, update: Update, originals: Doc[]): Promise<void> | void;
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
  /** Per resource, the features taking part in each stage, found once: most resources need few or none. */
  private readonly stages = new WeakMap<Resource, Map<Stage, DocumentFeature[]>>();

  constructor(private readonly features: DocumentFeature[] = []) {}

  /**
   * Runs one stage of every feature that has it and applies to the resource, in order; each
   * stage's arguments are typed by DocumentFeature. A stage with no feature to run returns
   * nothing, without the promise of an async call, and callers await only a promise: awaiting
   * undefined still makes a promise and a microtask hop (about 200 bytes per await, bench/README.md).
   */
  run<S extends Stage>(stage: S, ...args: Parameters<NonNullable<DocumentFeature[S]>>): Promise<void> | undefined {
    const taking = this.taking(stage, args[1] as Resource);
    return taking.length === 0 ? undefined : runStage(taking, stage, args);
  }

  /** Whether any feature takes part in the stage for the resource. */
  has(stage: Stage, resource: Resource): boolean {
    return this.taking(stage, resource).length > 0;
  }

  private taking(stage: Stage, resource: Resource): DocumentFeature[] {
    let byStage = this.stages.get(resource);
    if (!byStage) this.stages.set(resource, (byStage = new Map()));
    let taking = byStage.get(stage);
    if (!taking) byStage.set(stage, (taking = this.features.filter((feature) => feature[stage] && feature.appliesTo?.(resource) !== false)));
    return taking;
  }

  /** No feature's beforeInsert changes what validation saw or acts outside the documents (keepsInserts). */
  keepsInserts(resource: Resource): boolean {
    return this.features.every((feature) => !feature.beforeInsert || feature.keepsInserts?.(resource) === true);
  }
}

async function runStage(features: DocumentFeature[], stage: Stage, args: unknown[]): Promise<void> {
  for (const feature of features) await (feature[stage] as (...a: unknown[]) => Promise<void> | void).apply(feature, args);
}
