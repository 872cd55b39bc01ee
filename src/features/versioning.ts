// Document versioning as a plug-in (Eve's eve/versioning.py): version numbers on writes, a copy
// of every version in the shadow collection (./shadow.ts). Reads: src/read/versions.ts and
// src/endpoints/versions.ts (`?version=all|diffs`).
import type { CallScope } from "../scope.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc, Update } from "../drivers/types.ts";
import { documentLink } from "../render/hateoas.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { DocumentFeature } from "./pipeline.ts";
import { shadowCopy, shadowResource, versionedIdField, versionOf } from "./shadow.ts";

/** The version a write of `original` produces. */
function nextVersion(config: Config, original: Doc): number {
  return versionOf(config, original) + 1;
}

class VersioningFeature implements DocumentFeature {
  constructor(
    private readonly config: Config,
    private readonly data: DataLayer,
  ) {}

  appliesTo(resource: Resource): boolean {
    return resource.versioning;
  }

  beforeInsert(_ctx: CallScope, resource: Resource, documents: Doc[]): void {
    if (resource.versioning) for (const document of documents) document[this.config.VERSION] = 1;
  }

  /** It only adds the version field, which no schema rule looks at. */
  keepsInserts(): boolean {
    return true;
  }

  async afterInsert(ctx: CallScope, resource: Resource, documents: Doc[]): Promise<void> {
    if (!resource.versioning) return;
    await this.data.insert(ctx, shadowResource(this.config, resource), documents.map((d) => shadowCopy(this.config, resource, d)));
  }

  beforeReplace(_ctx: CallScope, resource: Resource, document: Doc, original: Doc): void {
    if (resource.versioning) document[this.config.VERSION] = nextVersion(this.config, original);
  }

  afterReplace(ctx: CallScope, resource: Resource, document: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, document, original);
  }

  beforeUpdate(_ctx: CallScope, resource: Resource, updates: Doc, original: Doc): void {
    if (resource.versioning) updates[this.config.VERSION] = nextVersion(this.config, original);
  }

  /**
   * The store counts the version up itself ($inc), so concurrent updates each get their own
   * number. A document written before versioning was on has none to count from: it is given
   * version 1 first (and its copy as that version, as record() would), once, by whichever
   * write gets there first, so that the update makes it 2.
   */
  async beforeModify(ctx: CallScope, resource: Resource, update: Update, originals: Doc[]): Promise<void> {
    if (!resource.versioning) return;
    const field = this.config.VERSION;
    update.$inc = { ...update.$inc, [field]: 1 };
    const late = originals.filter((document) => document[field] === undefined).map((document) => document._id);
    if (late.length === 0) return;
    const numbered = await this.data.modifyMany(ctx, resource, { [field]: { $exists: false } }, { $set: { [field]: 1 } }, { ids: late, showDeleted: true });
    if (numbered.length > 0) await this.data.insert(ctx, shadowResource(this.config, resource), numbered.map(({ after }) => shadowCopy(this.config, resource, after)));
  }

  afterUpdate(ctx: CallScope, resource: Resource, _updates: Doc, updated: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, updated, original);
  }

  beforeSoftDelete(ctx: CallScope, resource: Resource, marked: Doc, original: Doc): void {
    this.beforeReplace(ctx, resource, marked, original);
  }

  afterSoftDelete(ctx: CallScope, resource: Resource, marked: Doc, original: Doc): Promise<void> {
    return this.record(ctx, resource, marked, original);
  }

  async afterDelete(ctx: CallScope, resource: Resource, original: Doc): Promise<void> {
    if (!resource.versioning) return;
    await this.data.removeMany(ctx, shadowResource(this.config, resource), { [versionedIdField(this.config, resource)]: original[resource.id_field] });
  }

  async afterDeleteMany(ctx: CallScope, resource: Resource, originals: Doc[]): Promise<void> {
    if (!resource.versioning) return;
    const ids = originals.map((d) => d[resource.id_field]);
    await this.data.removeMany(ctx, shadowResource(this.config, resource), { [versionedIdField(this.config, resource)]: { $in: ids } });
  }

  /** Eve's `resolve_document_version` for reads, and the self link of a version request. */
  beforeRespond(ctx: CallScope, resource: Resource, document: Doc, latest: Doc): void {
    if (!resource.versioning) return;
    const config = this.config;
    document[config.VERSION] = latest[config.VERSION] === undefined ? 1 : (document[config.VERSION] ?? 1);
    document[config.LATEST_VERSION] = versionOf(config, latest);
    const links = document[config.LINKS] as Record<string, unknown> | undefined;
    if (links?.self && ctx.arg(config.VERSION_PARAM)) {
      links.self = documentLink(config, ctx, resource, document[resource.id_field], document[config.VERSION]);
    }
  }

  /**
   * Eve's `late_versioning_catch` then `insert_versioning_documents`: a document written before
   * versioning was turned on (or whose version field was removed) gets its copy as version 1
   * first, so numbering goes on from 2. Copies are written once the write has succeeded.
   */
  private async record(ctx: CallScope, resource: Resource, written: Doc, original: Doc): Promise<void> {
    if (!resource.versioning) return;
    const config = this.config;
    const copies: Doc[] = [];
    if (original[config.VERSION] === undefined) copies.push(shadowCopy(config, resource, { ...original, [config.VERSION]: 1 }));
    copies.push(shadowCopy(config, resource, written));
    await this.data.insert(ctx, shadowResource(config, resource), copies);
  }
}

export function versioningFeature(config: Config, data: DataLayer): DocumentFeature {
  return new VersioningFeature(config, data);
}
