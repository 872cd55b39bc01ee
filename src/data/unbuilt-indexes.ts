// Indexes the stored documents do not allow: built one by one so that the others still are, and
// each one refused is reported once with what it means for the API (src/data/layer.ts).
import { DuplicateKeyError, type Driver, type IndexSpec, type Target } from "../drivers/types.ts";
import type { Logger } from "../logging.ts";

/** Builds each index of `specs` the documents allow; a unique index over duplicates is logged and skipped. */
export async function buildEach(driver: Driver, target: Target, specs: IndexSpec[], logger: Logger): Promise<void> {
  for (const spec of specs) {
    try {
      await driver.createIndexes(target, [spec]);
    } catch (error) {
      if (!(error instanceof DuplicateKeyError)) throw error;
      logger.warning(unbuiltIndexMessage(target, spec, error));
    }
  }
}

/** What a unique index that cannot be built means for the API, and how to fix it. */
function unbuiltIndexMessage(target: Target, spec: IndexSpec, error: DuplicateKeyError): string {
  const fields = spec.keys.map(([field]) => field);
  const values = Object.values(error.keyValue).filter((value) => value !== null && value !== undefined);
  const shared = values.length ? ` (for instance ${values.map((value) => JSON.stringify(value)).join(", ")})` : "";
  const where = `${target.database ? `${target.database}.` : ""}${target.collection}`;
  return (
    `the unique index '${spec.name ?? fields.join("_")}' on ${where} (${fields.join(", ")}) cannot be built: documents in it already share a value${shared}. ` +
    `Until they are removed and everest is restarted, 'unique' on ${fields.join(", ")} is checked by looking values up before each write, which two concurrent writes can both pass.`
  );
}
