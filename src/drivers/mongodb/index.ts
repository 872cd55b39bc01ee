// The mongodb driver as the registry builds it from a `mongodb://` or `mongodb+srv://` URI and
// the settings: DB_OPTIONS are the MongoClient options (Eve's MONGO_OPTIONS), DB_WRITE_CONCERN
// the write concern. It is also the package's `everest-api/mongodb` entry: importing it
// registers the driver, for bundles the registry's run-time import cannot reach
// (src/drivers/registry.ts).
import type { MongoClientOptions } from "mongodb";
import { retentionOf } from "../change-log.ts";
import { registerMongodbDriver } from "../registry.ts";
import type { DriverFactory, DriverSettings } from "../types.ts";
import { MongoDriver } from "./driver.ts";

export { MongoDriver, type MongoDriverOptions } from "./driver.ts";

/**
 * How long an operation waits for a reachable server before the request is answered 503.
 * The mongodb package's 30 s would hold every request that long during an outage.
 */
const SERVER_SELECTION_TIMEOUT_MS = 3000;

/** pymongo options an Eve settings file may carry that MongoClient does not know (and would refuse). */
const PYMONGO_ONLY = new Set(["connect", "tz_aware", "tzinfo", "uuidrepresentation", "document_class", "type_registry", "unicode_decode_error_handler", "datetime_conversion"]);

export function clientOptions(settings: DriverSettings): MongoClientOptions {
  const given = settings.DB_OPTIONS ?? {};
  const options: Record<string, unknown> = {
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    connectTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
  };
  for (const [key, value] of Object.entries(given)) if (!PYMONGO_ONLY.has(key.toLowerCase())) options[key] = value;
  const writeConcern = settings.DB_WRITE_CONCERN;
  if (writeConcern && typeof writeConcern === "object" && Object.keys(writeConcern).length > 0) options.writeConcern = writeConcern;
  return options as MongoClientOptions;
}

export const createMongoDriver: DriverFactory = (options) =>
  new MongoDriver({ uri: options.uri, databaseName: options.databaseName, client: clientOptions(options.settings), retention: retentionOf(options.settings) });

registerMongodbDriver(createMongoDriver);
