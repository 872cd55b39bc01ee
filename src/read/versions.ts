// Reading versions: `?version=N` of an item, the versions versioned references point to, and
// the ETag of a versioned item.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Doc, Projection } from "../drivers/types.ts";
import { badRequest, HttpError } from "../errors.ts";
import { documentLink, type Link } from "../render/hateoas.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { shadowResource, synthesize, versionedIdField } from "../features/shadow.ts";
import { referencedVersion, type FindOne } from "../settings/relations.ts";
import { buildResponseDocument } from "./document.ts";

/**
 * The documents versioned references (`{<field>: …, <VERSION>: n}`) point to, in order: each
 * version rebuilt and made ready to send, or null when the document, the version, or the
 * version's being live (a soft-deleted version is gone) is missing. Each is looked up as
 * validation looks it up (settings/relations.ts referencedVersion), the current documents
 * through the datasource projection.
 */
export async function referencedVersions(services: Services, ctx: CallScope, target: Resource, field: string, refs: Doc[]): Promise<Array<Doc | null>> {
  const config = services.config;
  const findOne: FindOne = (name, filter, options) =>
    name === target.name
      ? services.data.findOne(ctx, target, filter, { showDeleted: options?.includeDeleted, projection: target.datasource.projection })
      : services.data.findOne(ctx, shadowResource(config, target), filter);
  return Promise.all(
    refs.map(async (ref) => {
      const found = await referencedVersion(config, target, field, ref, findOne, true);
      if (!found?.current) return null;
      const document = found.copy ? synthesize(config, target, found.current, found.copy) : found.current;
      return buildResponseDocument(services, ctx, document, target, { latest: found.current });
    }),
  );
}

export type VersionRequest = number | "all" | "diffs" | null;

/** `?version=`: null when absent or the resource is not versioned; Eve's 400 for a bad number. */
export function requestedVersion(config: Config, ctx: CallScope, resource: Resource): VersionRequest {
  if (!resource.versioning) return null;
  const raw = ctx.arg(config.VERSION_PARAM);
  if (raw === null || raw === "all" || raw === "diffs") return raw;
  const text = raw.trim();
  // Python's int(): optional sign, digits with single underscores between them.
  const number = /^[+-]?\d(?:_?\d)*$/.test(text) ? Number(text.replace(/_/g, "")) : NaN;
  if (!(number > 0) || !Number.isSafeInteger(number)) throw badRequest("Document version number should be an int greater than 0");
  return number;
}

/** One older version of `latest`, rebuilt; 404 when there is no such version. */
export async function storedVersion(services: Services, ctx: CallScope, resource: Resource, latest: Doc, version: number, projection: Projection | null): Promise<Doc> {
  const config = services.config;
  const { documents } = await services.data.find(ctx, shadowResource(config, resource), {
    filter: { [versionedIdField(config, resource)]: latest[resource.id_field], [config.VERSION]: version },
    projection,
    limit: 1,
    showDeleted: true,
    count: false,
  });
  if (documents[0]) return synthesize(config, resource, latest, documents[0]);
  // A document stored before versioning was turned on is its own version 1.
  if (version === 1 && latest[config.VERSION] === undefined) return latest;
  throw new HttpError(404);
}

/** The links of one version: self with the version asked, parent the item, collection its versions. */
export function versionLinks(config: Config, ctx: CallScope, resource: Resource, id: unknown): Record<string, Link> {
  const item = documentLink(config, ctx, resource, id);
  return {
    self: documentLink(config, ctx, resource, id, ctx.arg(config.VERSION_PARAM)),
    parent: item,
    collection: { title: resource.resource_title, href: `${item.href}?version=all` },
  };
}

/**
 * The ETag header of an item: with versioning, `_etag` followed by the latest version number —
 * unless fields are withheld from the caller, whose ETag is only that of what it sees (the
 * version moves with changes it cannot see: src/read/visible.ts).
 */
export function itemEtag(config: Config, resource: Resource, document: Doc, withheld = false): string | undefined {
  const etag = document[config.ETAG];
  if (!config.IF_MATCH || typeof etag !== "string") return undefined;
  return resource.versioning && !withheld ? etag + String(document[config.LATEST_VERSION]) : etag;
}
