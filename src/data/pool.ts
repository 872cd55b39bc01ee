// Which driver and database serve a db prefix. Drivers are created lazily on first use and then
// reused for the life of the app (one client per URI, as the mongodb driver wants); a request
// only ever picks among them, so nothing here is per-request state.
import type { Config } from "../settings/normalize.ts";
import { createDriver } from "../drivers/registry.ts";
import type { Driver, DriverSettings, RuntimeServices } from "../drivers/types.ts";

export interface DatabaseSettings {
  uri: string;
  database: string;
}

function encode(value: unknown): string {
  return encodeURIComponent(String(value));
}

/** `<PREFIX>_DB_*` (or unprefixed DB_*) settings → a URI and a database name. */
export function databaseSettings(config: Config, prefix: string | null): DatabaseSettings {
  const read = (key: string): unknown => {
    if (!prefix) return config[key];
    return config[`${prefix}_${key}`] ?? config[`${prefix}_${key.replace(/^DB_/, "MONGO_")}`];
  };
  if (prefix && read("DB_URI") === undefined && read("DB_NAME") === undefined && read("DB_HOST") === undefined) {
    throw new Error(`db_prefix '${prefix}' has no ${prefix}_DB_URI, ${prefix}_DB_NAME or ${prefix}_DB_HOST setting`);
  }
  const name = (read("DB_NAME") as string | undefined) ?? (prefix ? undefined : config.DB_NAME) ?? "everest";
  const explicit = read("DB_URI") as string | null | undefined;
  if (explicit) return { uri: explicit, database: databaseFromUri(explicit) ?? name };
  const driver = (read("DB_DRIVER") as string | null | undefined) ?? (prefix ? undefined : config.DB_DRIVER);
  const host = read("DB_HOST");
  if (driver === "mongodb" || (prefix && host !== undefined)) {
    const user = read("DB_USERNAME");
    const password = read("DB_PASSWORD");
    const auth = user ? `${encode(user)}${password ? ":" + encode(password) : ""}@` : "";
    const port = read("DB_PORT") ?? 27017;
    const authSource = read("DB_AUTH_SOURCE");
    return { uri: `mongodb://${auth}${host ?? "localhost"}:${port}/${authSource ? `?authSource=${encode(authSource)}` : ""}`, database: name };
  }
  // A Data API endpoint is a base URL with a path of its own; no host/port setting can spell it.
  if (driver === "data-api") {
    const at = prefix ? `${prefix}_` : "";
    throw new Error(`${at}DB_DRIVER 'data-api' needs ${at}DB_URI: the Data API endpoint's base URL (https://…)`);
  }
  return { uri: driver && driver !== "memory" ? `${driver}:` : "memory", database: name };
}

/** The database named in a mongodb:// path, if any. */
function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(uri);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

/** What the drivers take from the settings. */
function driverSettings(config: Config): DriverSettings {
  return { DB_OPTIONS: config.DB_OPTIONS, DB_WRITE_CONCERN: config.DB_WRITE_CONCERN, DATA_API_KEY: config.DATA_API_KEY, DATA_API_SOURCE: config.DATA_API_SOURCE };
}

export class DriverPool {
  private readonly drivers = new Map<string, Promise<Driver>>();

  constructor(
    private readonly config: Config,
    private readonly services: RuntimeServices = {},
    /** A driver handed to createHandler serves every prefix that names no URI of its own. */
    private readonly provided?: Driver,
  ) {}

  async get(prefix: string | null): Promise<{ driver: Driver; database: string }> {
    const { uri, database } = databaseSettings(this.config, prefix);
    if (this.provided && (uri === "memory" || !prefix)) return { driver: this.provided, database };
    let driver = this.drivers.get(uri);
    if (!driver) {
      driver = createDriver(uri, { databaseName: database, settings: driverSettings(this.config), services: this.services });
      driver.catch(() => this.drivers.delete(uri));
      this.drivers.set(uri, driver);
    }
    return { driver: await driver, database };
  }

  async close(): Promise<void> {
    const drivers = [...this.drivers.values()];
    this.drivers.clear();
    await Promise.all(drivers.map(async (d) => (await d.catch(() => null))?.close()));
    await this.provided?.close();
  }
}
