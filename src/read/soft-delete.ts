// Soft delete as reads see it. Writes keep the document flagged (src/methods/delete.ts), the
// data layer hides flagged documents unless asked (`show_deleted`, a `where` on the flag).
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";

export function isSoftDeleted(config: Config, resource: Resource, document: Doc): boolean {
  return resource.soft_delete && document[config.DELETED] === true;
}

/** Eve's answer for a soft-deleted item: 404 whose body is the document itself. */
export function softDeletedBody(config: Config, document: Doc): Doc {
  return {
    ...document,
    [config.STATUS]: [config.STATUS_ERR],
    [config.ERROR]: { code: 404, message: "The requested URL was not found on this server." },
  };
}
