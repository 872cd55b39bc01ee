// Which database the HTTP-level suite runs on, by EVEREST_TEST_DB:
//   memory (default)   the embedded driver everest builds from the settings
//   mongodb            the mongodb driver on MONGODB_URI
//   data-api           the data-api driver through the gateway, in-process, over a memory driver
//   data-api+mongodb   the same gateway over the mongodb driver on MONGODB_URI
//   sqlite             the sqlite driver on an in-memory SQLite database (needs node:sqlite or bun:sqlite)
// Every API gets databases of its own (a random prefix on every database name), so tests that
// share one server never see each other's data.
import { ObjectId } from "bson";
import { createDataApiHandler, type DataApiHandler } from "../../src/gateway/index.ts";
import { DataApiDriver } from "../../src/drivers/data-api/index.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { MongoDriver } from "../../src/drivers/mongodb/index.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { retentionOf } from "../../src/drivers/change-log.ts";
import type { Change, ChangeLog, Doc, Driver, DriverSettings, Filter, FindQuery, IndexSpec, MediaStore, ModifyManyOptions, ModifyOptions, Target, Update } from "../../src/drivers/types.ts";

export const TEST_DATA_API_KEY = "test-key";

/** A fetch that hands requests straight to a handler, as if it were across the network. */
export function inProcessFetch(handler: DataApiHandler): typeof fetch {
  return async (input, init) => handler(new Request(input, init));
}

/** The data-api driver talking to a gateway over `backing`, all in this process. */
export function dataApiOver(backing: Driver, databaseName = "everest"): DataApiDriver {
  return new DataApiDriver({
    url: "https://gateway.test/app/everest/endpoint/data/v1",
    databaseName,
    dataSource: "mongodb-atlas",
    apiKey: TEST_DATA_API_KEY,
    fetch: inProcessFetch(createDataApiHandler(backing, { apiKeys: [TEST_DATA_API_KEY] })),
    timeoutMs: 30_000,
  });
}

function mongodbUri(choice: string): string {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error(`EVEREST_TEST_DB=${choice} needs MONGODB_URI (e.g. MONGODB_URI=$(../shared/mongo-emulator/start 27018))`);
  return uri;
}

/** Renames every database the core names; closing closes everything behind it. */
export class ScopedDriver implements Driver {
  private readonly prefix = `t${new ObjectId().toHexString().slice(-10)}_`;

  constructor(
    readonly kind: string,
    private readonly inner: Promise<Driver>,
    private readonly behind: Array<Promise<Driver>> = [],
  ) {}

  /**
   * The inner driver's change log with its databases renamed. It does not say it pushes (the
   * inner driver is not known yet when this is read): the feed then polls as well, which only
   * adds reads.
   */
  readonly changes: ChangeLog = {
    pushes: false,
    record: (target) => this.log().then((log) => log.record(this.scope(target))),
    head: (database) => this.log().then((log) => log.head(this.database(database))),
    read: (database, after, limit) => this.log().then((log) => log.read(this.database(database), after, limit)),
    watch: (database, wake) => {
      let stop: (() => void) | undefined;
      let stopped = false;
      void this.log().then((log) => {
        if (!stopped) stop = log.watch(this.database(database), wake);
      });
      return () => {
        stopped = true;
        stop?.();
      };
    },
  };

  private async log(): Promise<ChangeLog> {
    const driver = await this.inner;
    if (!driver.changes) throw new Error(`the ${driver.kind} driver has no change log`);
    return driver.changes;
  }

  find(target: Target, query: FindQuery): Promise<Doc[]> {
    return this.inner.then((d) => d.find(this.scope(target), query));
  }
  count(target: Target, filter: Filter): Promise<number> {
    return this.inner.then((d) => d.count(this.scope(target), filter));
  }
  estimatedCount(target: Target): Promise<number> {
    return this.inner.then((d) => d.estimatedCount(this.scope(target)));
  }
  insertMany(target: Target, docs: Doc[]): Promise<void> {
    return this.inner.then((d) => d.insertMany(this.scope(target), docs));
  }
  replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    return this.inner.then((d) => d.replaceOne(this.scope(target), filter, doc));
  }
  updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    return this.inner.then((d) => d.updateOne(this.scope(target), filter, update));
  }
  findOneAndUpdate(target: Target, filter: Filter, update: Update, options?: ModifyOptions): Promise<Change | null> {
    return this.inner.then((d) => d.findOneAndUpdate(this.scope(target), filter, update, options));
  }
  updateMany(target: Target, filter: Filter, update: Update, options?: ModifyManyOptions): Promise<Change[]> {
    return this.inner.then((d) => d.updateMany(this.scope(target), filter, update, options));
  }
  deleteOne(target: Target, filter: Filter): Promise<boolean> {
    return this.inner.then((d) => d.deleteOne(this.scope(target), filter));
  }
  deleteMany(target: Target, filter: Filter, options?: { ids?: unknown[] }): Promise<number> {
    return this.inner.then((d) => d.deleteMany(this.scope(target), filter, options));
  }
  aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]> {
    return this.inner.then((d) => d.aggregate(this.scope(target), pipeline));
  }
  createIndexes(target: Target, indexes: IndexSpec[]): Promise<void> {
    return this.inner.then((d) => d.createIndexes(this.scope(target), indexes));
  }
  media(database?: string): MediaStore {
    const store = this.inner.then((d) => d.media(this.database(database)));
    return {
      put: (data, meta) => store.then((s) => s.put(data, meta)),
      get: (id) => store.then((s) => s.get(id)),
      delete: (id) => store.then((s) => s.delete(id)),
    };
  }
  async countHit(key: string, windowEnd: number): Promise<number> {
    const inner = await this.inner;
    if (!inner.countHit) throw new Error(`the ${inner.kind} driver keeps no shared counts`);
    return inner.countHit(this.prefix + key, windowEnd);
  }
  ping(): Promise<void> {
    return this.inner.then((d) => d.ping());
  }
  async close(): Promise<void> {
    await Promise.all([this.inner, ...this.behind].map(async (driver) => (await driver).close()));
  }

  /** The database a name the core uses stands for (a test that reaches the store from outside needs it). */
  database(name: string | undefined): string {
    return `${this.prefix}${name ?? "default"}`;
  }
  private scope(target: Target): Target {
    return { ...target, database: this.database(target.database) };
  }
}

/**
 * The HTTP suite runs on mongodb through ../shared/mongo-emulator (mongomock), which lacks some
 * of MongoDB's checks and aggregation expressions; tests name such gaps with this flag.
 */
export const ON_MONGODB_EMULATOR = process.env.MONGODB_EMULATOR === "1" && (process.env.EVEREST_TEST_DB ?? "").includes("mongodb");
/** The HTTP suite runs over the Data API, whose relaxed Extended JSON carries every number as a double. */
export const ON_DATA_API = (process.env.EVEREST_TEST_DB ?? "").startsWith("data-api");

/**
 * The driver EVEREST_TEST_DB asks for, or undefined for everest's own choice from the settings.
 * `settings`: what the API's own settings would give its driver (the change log's retention).
 */
export function testDriver(settings: DriverSettings = {}): Driver | undefined {
  const retention = retentionOf(settings);
  const choice = process.env.EVEREST_TEST_DB ?? "memory";
  switch (choice) {
    case "memory":
      return undefined;
    case "mongodb":
      return new ScopedDriver("mongodb", Promise.resolve(new MongoDriver({ uri: mongodbUri(choice), databaseName: "everest", retention })));
    case "data-api": {
      const backing = MemoryDriver.open({ databaseName: "everest", retention });
      return new ScopedDriver("data-api", backing.then((memory) => dataApiOver(memory)), [backing]);
    }
    case "data-api+mongodb": {
      const backing = new MongoDriver({ uri: mongodbUri(choice), databaseName: "everest", retention });
      return new ScopedDriver("data-api", Promise.resolve(dataApiOver(backing)), [Promise.resolve(backing)]);
    }
    case "sqlite":
      return new ScopedDriver("sqlite", createDriver("sqlite::memory:", { databaseName: "everest", settings }));
    default:
      throw new Error(`EVEREST_TEST_DB: '${choice}' is not one of memory, mongodb, data-api, data-api+mongodb, sqlite`);
  }
}
