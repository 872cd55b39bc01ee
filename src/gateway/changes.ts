// The gateway's change-log actions, an everest extension of the Data API (docs/drivers.md):
// `everest.changesRecord` asks the driver behind it to record a collection's writes (which its
// own write methods then do, in the same step as the write where its store allows),
// `everest.changesHead` and `everest.changesRead` read the log. A feed over the data-api driver
// polls them; nothing is pushed over this protocol.
import { InvalidPositionError, type Doc, type Driver, type Target } from "../drivers/types.ts";
import { GatewayError, isCount, isString, required, type Body } from "./parameters.ts";

/**
 * A write of a collection whose changes the client has asked to record says so (`recorded:
 * true`, src/drivers/data-api/driver.ts), and the collection is recorded here before the write:
 * what a driver records lives in its process, so a gateway restarted since records the
 * collection's changes from the first write on, not from a changesRecord the client never sends
 * again. Each collection is asked once per gateway.
 */
export function recordingOnWrite(driver: Driver, allow: (target: Target) => void): (body: Body) => Promise<void> {
  const asked = new Set<string>();
  return async (body) => {
    const { database, collection } = body;
    if (body.recorded !== true || !driver.changes || typeof database !== "string" || typeof collection !== "string") return;
    const key = `${database}\u0000${collection}`;
    if (asked.has(key)) return;
    allow({ database, collection });
    await driver.changes.record({ database, collection });
    asked.add(key);
  };
}

/** Changes in one answer at most, whatever the client asks: each carries two documents. */
export const MAX_CHANGES = 200;

export async function changeAction(driver: Driver, action: string, body: Body, allow: (target: Target) => void, allowDatabase: (database: string) => void): Promise<Doc> {
  const served = (database: string, collection: string): boolean => {
    try {
      allow({ database, collection });
      return true;
    } catch {
      return false;
    }
  };
  const log = driver.changes;
  if (!log) throw new GatewayError("UnknownAction", `the ${driver.kind} driver behind this gateway has no change log`);
  const database = required(body, "database", isString, "a string");
  if (action === "everest.changesRecord") {
    const target = { database, collection: required(body, "collection", isString, "a string") };
    allow(target);
    await log.record(target);
    return {};
  }
  allowDatabase(database);
  if (action === "everest.changesHead") return { position: await log.head(database) };
  const after = required(body, "after", isString, "a string");
  const limit = Math.min(MAX_CHANGES, Math.max(1, required(body, "limit", isCount, "a count")));
  try {
    const read = await log.read(database, after, limit);
    if (read.expired) return { expired: true, head: read.head };
    // A change of a collection this gateway does not serve keeps its place, not its content.
    const records = read.records.map((record) => (served(database, record.collection) ? record : { ...record, collection: "", id: null, before: null, after: null }));
    return { expired: false, records };
  } catch (error) {
    if (error instanceof InvalidPositionError) throw new GatewayError("InvalidPosition", error.message);
    throw error;
  }
}
