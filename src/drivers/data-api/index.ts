// The data-api driver as the registry builds it from an `https://` (or, for a gateway on a
// private network, `http://`) URI: the URI is the endpoint's base URL, DATA_API_KEY the key,
// DATA_API_SOURCE the dataSource, DB_OPTIONS.timeoutMS the per-request time limit.
import type { DriverFactory } from "../types.ts";
import { DataApiDriver } from "./driver.ts";

export { DataApiDriver, type DataApiDriverOptions } from "./driver.ts";

/** The Data API's usual name for the linked cluster. */
const DEFAULT_DATA_SOURCE = "mongodb-atlas";
/** Long enough for a slow aggregation, short enough that an outage answers 503 promptly. */
const DEFAULT_TIMEOUT_MS = 10_000;

export const createDataApiDriver: DriverFactory = (options) => {
  const { settings } = options;
  const dbOptions = settings.DB_OPTIONS ?? {};
  const timeoutMs = dbOptions.timeoutMS ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0)) throw new Error(`DB_OPTIONS.timeoutMS: '${String(timeoutMs)}' is not a positive number of milliseconds`);
  const given = options.services?.fetch;
  return new DataApiDriver({
    url: options.uri,
    databaseName: options.databaseName,
    dataSource: typeof settings.DATA_API_SOURCE === "string" ? settings.DATA_API_SOURCE : DEFAULT_DATA_SOURCE,
    ...(typeof settings.DATA_API_KEY === "string" ? { apiKey: settings.DATA_API_KEY } : {}),
    // Called unbound, as Workers' fetch insists.
    fetch: given ?? ((input, init) => fetch(input, init)),
    timeoutMs,
  });
};
