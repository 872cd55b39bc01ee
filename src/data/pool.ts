// Which driver and database serve a db prefix. Drivers are created lazily on first use and then
// reused for the life of the app (one client per URI, as the mongodb driver wants); a request
// only ever picks among them, so nothing here is per-request state.
import { prefixedNames } from "../settings/defaults.ts";
import type { Config } from "../settings/normalize.ts";
import type { PrefixedDbKey } from "../settings/types.ts";
import { createDriver } from "../drivers/registry.ts";
import { FileAccessMissingError, RATE_LIMIT_COLLECTION, type Driver, type DriverSettings, type RuntimeServices } from "../drivers/types.ts";

export interface DatabaseSettings {
  uri: string;
  database: string;
}

function encode(value: unknown): string {
  return encodeURIComponent(String(value));
}

/** Without a DB_NAME, the database everest uses. */
const DEFAULT_DATABASE = "everest";

/** Settings that, given without DB_URI or DB_DRIVER, name a MongoDB server, as in Eve. */
const MONGODB_KEYS = ["DB_HOST", "DB_PORT", "DB_USERNAME", "DB_PASSWORD", "DB_NAME", "DB_AUTH_SOURCE", "DB_REPLICA_SET"] as const;

/**
 * `<PREFIX>_DB_*` (or unprefixed DB_*) settings → a URI and a database name (docs/decisions.md §7):
 * DB_URI as given; else DB_DRIVER; else any of MONGODB_KEYS selects MongoDB (`mongodb://host:port/`);
 * else the embedded store. A prefix that names only a database keeps the unprefixed server.
 */
export function databaseSettings(config: Config, prefix: string | null): DatabaseSettings {
  const read = (key: PrefixedDbKey): unknown => {
    if (!prefix) return config[key] ?? undefined;
    for (const name of prefixedNames(prefix, key)) if (config[name] != null) return config[name];
    return undefined;
  };
  if (prefix && read("DB_URI") === undefined && read("DB_NAME") === undefined && read("DB_HOST") === undefined) {
    throw new Error(`db_prefix '${prefix}' has no ${prefix}_DB_URI, ${prefix}_DB_NAME or ${prefix}_DB_HOST setting`);
  }
  const name = (read("DB_NAME") as string | undefined) ?? DEFAULT_DATABASE;
  const explicit = read("DB_URI") as string | undefined;
  if (explicit) return { uri: explicit, database: databaseFromUri(explicit) ?? name };
  const driver = read("DB_DRIVER") as string | undefined;
  const server = MONGODB_KEYS.filter((key) => key !== "DB_NAME" || !prefix).some((key) => read(key) !== undefined);
  if (prefix && !driver && !server) return { uri: databaseSettings(config, null).uri, database: name };
  if (driver === "mongodb" || (!driver && server)) {
    const user = read("DB_USERNAME");
    const password = read("DB_PASSWORD");
    const auth = user ? `${encode(user)}${password ? ":" + encode(password) : ""}@` : "";
    const port = read("DB_PORT") ?? 27017;
    // A replica set's members, as pymongo takes them in one string ("a:27017,b:27017"); a member
    // without its port gets DB_PORT.
    const hosts = String(read("DB_HOST") ?? "localhost").split(",").map((host) => host.trim());
    const members = hosts.map((host) => (/:\d+$/.test(host) ? host : `${host}:${port}`)).join(",");
    const options = [["authSource", read("DB_AUTH_SOURCE")], ["replicaSet", read("DB_REPLICA_SET")]].filter(([, value]) => value != null);
    const query = options.length > 0 ? `?${options.map(([key, value]) => `${key}=${encode(value)}`).join("&")}` : "";
    return { uri: `mongodb://${auth}${members}/${query}`, database: name };
  }
  // A Data API endpoint is a base URL with a path of its own; no host/port setting can spell it.
  if (driver === "data-api") {
    const at = prefix ? `${prefix}_` : "";
    throw new Error(`${at}DB_DRIVER 'data-api' needs ${at}DB_URI: the Data API endpoint's base URL (https://…)`);
  }
  return { uri: driver && driver !== "memory" ? `${driver}:` : "memory", database: name };
}

/** A prefix's URI, or undefined where its settings are incomplete (reported when it is first used). */
function knownUri(config: Config, prefix: string | null): string | undefined {
  try {
    return databaseSettings(config, prefix).uri;
  } catch {
    return undefined;
  }
}

/** The URI of every database the settings name (repeats included): the unprefixed one, then each resource's. */
export function databaseUris(config: Config): string[] {
  return [null, ...Object.values(config.DOMAIN).map((resource) => resource.db_prefix)].map((prefix) => databaseSettings(config, prefix).uri);
}

/** The database named in a mongodb:// path, if any. */
function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(uri);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

/** What the drivers take from the settings. */
function driverSettings(config: Config): DriverSettings {
  return {
    DB_OPTIONS: config.DB_OPTIONS,
    DB_WRITE_CONCERN: config.DB_WRITE_CONCERN,
    DATA_API_KEY: config.DATA_API_KEY,
    DATA_API_SOURCE: config.DATA_API_SOURCE,
    JOURNAL_COMPACTION_RATIO: config.JOURNAL_COMPACTION_RATIO,
    JOURNAL_COMPACTION_MIN_SIZE: config.JOURNAL_COMPACTION_MIN_SIZE,
    CHANGE_FEED_RETENTION: config.CHANGE_FEED_RETENTION,
    CHANGE_FEED_RETENTION_COUNT: config.CHANGE_FEED_RETENTION_COUNT,
  };
}

export class DriverPool {
  private readonly drivers = new Map<string, Promise<Driver>>();
  /** The drivers above that have opened (what liveness asks for faults). */
  private readonly opened = new Set<Driver>();

  constructor(
    private readonly config: Config,
    private readonly services: RuntimeServices = {},
    /** A driver handed to createHandler serves every prefix that names no URI of its own. */
    private readonly provided?: Driver,
  ) {
    // At createHandler, not at the first request: served with Deno.serve(handler) and the like,
    // a journal without file access would otherwise answer every request with a 500.
    if (!services.files) {
      for (const prefix of this.prefixes()) {
        if (prefix === null && provided) continue;
        const uri = knownUri(config, prefix);
        if (uri?.startsWith("file:")) throw new FileAccessMissingError(uri);
      }
    }
  }

  async get(prefix: string | null): Promise<{ driver: Driver; database: string }> {
    const { uri, database } = databaseSettings(this.config, prefix);
    if (this.provided && (!prefix || uri === "memory" || uri === databaseSettings(this.config, null).uri)) return { driver: this.provided, database };
    let driver = this.drivers.get(uri);
    if (!driver) {
      driver = createDriver(uri, { databaseName: database, settings: driverSettings(this.config), services: this.services });
      driver.then((opened) => this.opened.add(opened), () => this.drivers.delete(uri));
      this.drivers.set(uri, driver);
    }
    return { driver: await driver, database };
  }

  /** The db prefixes the settings name: null (the default database), then each resource's. */
  prefixes(): Array<string | null> {
    return [...new Set<string | null>([null, ...Object.values(this.config.DOMAIN).map((resource) => resource.db_prefix)])];
  }

  /**
   * Opens every prefix's database; a store that may refuse collections (Driver.checkServed) is
   * asked for those the settings use now, so a misconfigured allow-list stops start-up.
   */
  async open(): Promise<void> {
    await Promise.all(
      this.prefixes().map(async (prefix) => {
        const { driver, database } = await this.get(prefix);
        await driver.checkServed?.(database, this.collections(prefix));
      }),
    );
  }

  /** Whether the database of a prefix answers and serves its collections (readiness): rejects with why not. */
  async ping(prefix: string | null): Promise<void> {
    const { driver, database } = await this.get(prefix);
    await driver.ping(database, this.collections(prefix));
  }

  /**
   * The collections the settings use in a prefix's database: each resource's, its versions', and
   * (in the default one) the rate-limit counts' where the database keeps them.
   */
  private collections(prefix: string | null): string[] {
    const names = new Set<string>();
    for (const resource of Object.values(this.config.DOMAIN)) {
      if (resource.db_prefix !== prefix) continue;
      names.add(resource.datasource.source);
      if (resource.versioning) names.add(resource.datasource.source + this.config.VERSIONS);
    }
    if (prefix === null && this.config.RATE_LIMIT_STORE === "database") names.add(RATE_LIMIT_COLLECTION);
    return [...names];
  }

  /**
   * The failures of opened drivers that only a restart ends (Driver.fault): what liveness
   * reports. Drivers still opening are not waited for: liveness touches no database.
   */
  faults(): Error[] {
    return [...this.opened, this.provided].flatMap((driver) => driver?.fault?.() ?? []);
  }

  async close(): Promise<void> {
    const drivers = [...this.drivers.values()];
    this.drivers.clear();
    this.opened.clear();
    await Promise.all(drivers.map(async (d) => (await d.catch(() => null))?.close()));
    await this.provided?.close();
  }
}
