// Resource-level data access over the Driver contract, as Eve's `app.data` is over pymongo:
// picks the driver and database (db_prefix), and ANDs the conditions every operation on a
// resource must carry (datasource filter, soft delete, user-restricted access). Methods and
// features read and write through here, never through a driver directly.
import type { CallScope } from "../scope.ts";
import { indexDefinition } from "../settings/indexes.ts";
import { DuplicateKeyError, type Change, type Doc, type Driver, type Filter, type FindQuery, type IndexSpec, type MediaStore, type ModifyManyOptions, type ModifyOptions, type Projection, type Sort, type Target, type Update } from "../drivers/types.ts";
import type { Logger } from "../logging.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { DriverPool } from "./pool.ts";
import { authFieldFilter } from "../auth/access.ts";
import { keepsUnique, sortsAlike } from "../settings/rule-types.ts";

export interface FindOptions {
  filter?: Filter;
  sort?: Sort | null;
  projection?: Projection | null;
  skip?: number;
  limit?: number;
  /** Include soft-deleted documents. */
  showDeleted?: boolean;
  /** Skip the count (OPTIMIZE_PAGINATION_FOR_SPEED). */
  count?: boolean;
  /**
   * The count may come from the store's statistics (`estimated`, docs/contracts.md §5): only
   * where the scoped filter is empty, so a restricted read never learns the collection's size.
   */
  estimate?: boolean;
  /** A keyset read from this position (FindQuery.after). */
  after?: Doc | null;
  /** Look past the datasource filter and user-restricted access (Eve's `unique` checks the whole collection). */
  wholeCollection?: boolean;
  /** The documents are only read, never changed (FindQuery.shared). */
  shared?: boolean;
}

export interface Bound {
  driver: Driver;
  target: Target;
  /**
   * Top-level `unique` fields whose unique index the store built and keeps for as long as it is
   * open (Driver.indexesStay): a POST may leave their check to the index. Elsewhere another
   * client can drop a collection and its indexes with it, so every value is looked up first;
   * and where one of the collection's indexes could not be built, every value of it is too.
   */
  uniqueIndexed: ReadonlySet<string>;
}

/** `{}` pieces dropped, one piece returned as is, several ANDed. */
export function combineFilters(...parts: Array<Filter | null | undefined>): Filter {
  const present = parts.filter((p): p is Filter => !!p && Object.keys(p).length > 0);
  if (present.length === 0) return {};
  if (present.length === 1) return present[0]!;
  return { $and: present };
}

/** Whether a filter mentions a field anywhere (soft delete stays out of a `where` on `_deleted`). */
export function filterMentions(filter: unknown, field: string): boolean {
  if (Array.isArray(filter)) return filter.some((f) => filterMentions(f, field));
  if (!filter || typeof filter !== "object") return false;
  return Object.entries(filter as Record<string, unknown>).some(
    ([key, value]) => key === field || (key.startsWith("$") && filterMentions(value, field)),
  );
}

/** What find answers: see DataLayer.find. */
interface Found {
  documents: Doc[];
  total: number | null;
  versioned: boolean;
  estimated?: boolean;
}

/** The one document a findOne's query (limit 1) found, or null. */
const firstFound = (documents: Doc[]): Doc | null => documents[0] ?? null;

function findQuery(filter: Filter, options: FindOptions): FindQuery {
  const query: FindQuery = { filter };
  if (options.sort?.length) query.sort = options.sort;
  if (options.projection && Object.keys(options.projection).length) query.projection = options.projection;
  if (options.skip) query.skip = options.skip;
  if (options.limit) query.limit = options.limit;
  if (options.shared) query.shared = true;
  if (options.after !== undefined) query.after = options.after;
  return query;
}

export class DataLayer {
  /** The unique fields each collection's indexes hold (Bound.uniqueIndexed), per database and collection. */
  private readonly indexed = new Map<string, Promise<ReadonlySet<string>>>();
  /**
   * What bind() found per resource and db prefix: settings alone decide it, so it is looked up
   * once, and once found it is kept as it is rather than as a promise, so that an operation
   * has no promise to await for it (each await cost a microtask hop and about 200 bytes).
   */
  private readonly bound = new WeakMap<Resource, Map<string | null, Bound | Promise<Bound>>>();
  /**
   * The collections whose writes the change log records (docs/contracts.md §3): those any
   * resource with change_feed reads, whichever resource writes them. Empty when no resource has
   * the feed, and then binding costs nothing more.
   */
  private readonly recorded: ReadonlySet<string>;

  constructor(
    private readonly config: Config,
    private readonly pool: DriverPool,
    private readonly logger: Logger,
  ) {
    this.recorded = new Set(Object.values(config.DOMAIN).filter((resource) => resource.change_feed).map((resource) => resource.datasource.source));
  }

  /** The driver and collection a resource lives in, for this request's db prefix. */
  bind(ctx: CallScope | null, resource: Resource): Bound | Promise<Bound> {
    const prefix = (ctx?.dbPrefix !== undefined ? ctx.dbPrefix : resource.db_prefix) ?? null;
    let byPrefix = this.bound.get(resource);
    if (!byPrefix) this.bound.set(resource, (byPrefix = new Map()));
    const known = byPrefix.get(prefix);
    if (known) return known;
    const binding = this.resolve(prefix, resource).then((bound) => {
      byPrefix.set(prefix, bound);
      return bound;
    });
    // A driver that failed to open or indexes that failed to build are tried again next time.
    binding.catch(() => byPrefix.delete(prefix));
    byPrefix.set(prefix, binding);
    return binding;
  }

  /**
   * Runs `work` on the resource's bound store and hands its promise on as it is: not an async
   * frame and an await of its own around every read and write (a promise and a turn of the
   * microtask queue each; bench/README.md, "A seventh pass"). What `work` throws is a rejection.
   */
  private onBound<T>(ctx: CallScope | null, resource: Resource, work: (bound: Bound) => Promise<T>): Promise<T> {
    try {
      const binding = this.bind(ctx, resource);
      return binding instanceof Promise ? binding.then(work) : work(binding);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async resolve(prefix: string | null, resource: Resource): Promise<Bound> {
    const { driver, database } = await this.pool.get(prefix);
    const target = { database, collection: resource.datasource.source };
    const uniqueIndexed = await this.ensureIndexes(driver, target, resource);
    if (this.recorded.has(target.collection)) {
      if (!driver.changes) throw new Error(`change_feed is on for '${target.collection}', but the ${driver.kind} driver has no change log`);
      await driver.changes.record(target);
    }
    return { driver, target, uniqueIndexed };
  }

  /** Conditions every read and write of the resource carries. */
  scope(ctx: CallScope | null, resource: Resource, options: { showDeleted?: boolean; userFilter?: Filter; wholeCollection?: boolean } = {}): Filter {
    // The common case, a resource with no datasource filter, owner field or soft delete: the
    // caller's filter as it is, without the arrays of the general case below.
    if (!resource.datasource.filter && !resource.auth_field && !resource.soft_delete) return options.userFilter ?? {};
    const parts: Filter[] = [];
    if (resource.datasource.filter && !options.wholeCollection) parts.push(resource.datasource.filter);
    const restricted = ctx && !options.wholeCollection ? authFieldFilter(ctx, resource, options.userFilter) : null;
    if (restricted) parts.push(restricted);
    if (options.userFilter) parts.push(options.userFilter);
    const deleted = this.config.DELETED;
    if (resource.soft_delete && !options.showDeleted && !filterMentions(options.userFilter, deleted)) {
      parts.push({ [deleted]: { $ne: true } });
    }
    return combineFilters(...parts);
  }

  /**
   * The documents, and their count unless `count` is false; `estimated` when the count came from
   * statistics; `versioned`: the documents are stored versions (Driver.sharesVersions; a shared read only).
   */
  find(ctx: CallScope | null, resource: Resource, options: FindOptions = {}): Promise<Found> {
    return this.onBound(ctx, resource, ({ driver, target }) => {
      const filter = this.scope(ctx, resource, { showDeleted: options.showDeleted, userFilter: options.filter, wholeCollection: options.wholeCollection });
      const query = findQuery(filter, options);
      if (query.sort?.every(([path]) => sortsAlike(resource, this.config, path))) query.sortsAlike = true;
      const versioned = options.shared === true && driver.sharesVersions === true;
      if (options.count === false) return driver.find(target, query).then((documents) => ({ documents, total: null, versioned }));
      const estimated = options.estimate === true && Object.keys(filter).length === 0;
      return Promise.all([driver.find(target, query), estimated ? driver.estimatedCount(target) : driver.count(target, filter)]).then(([documents, total]) =>
        estimated ? { documents, total, versioned, estimated } : { documents, total, versioned },
      );
    });
  }

  findOne(ctx: CallScope | null, resource: Resource, lookup: Filter, options: Pick<FindOptions, "showDeleted" | "projection" | "wholeCollection" | "shared"> = {}): Promise<Doc | null> {
    return this.onBound(ctx, resource, ({ driver, target }) => {
      const filter = this.scope(ctx, resource, { showDeleted: options.showDeleted, userFilter: lookup, wholeCollection: options.wholeCollection });
      const query = findQuery(filter, options);
      query.limit = 1;
      return driver.find(target, query).then(firstFound);
    });
  }

  insert(ctx: CallScope | null, resource: Resource, documents: Doc[]): Promise<void> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.insertMany(target, documents));
  }

  /** Replaces the document matching lookup (which carries `_id` and, when checked, `_etag`). */
  replace(ctx: CallScope | null, resource: Resource, lookup: Filter, document: Doc): Promise<boolean> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.replaceOne(target, this.scope(ctx, resource, { showDeleted: true, userFilter: lookup }), document));
  }

  update(ctx: CallScope | null, resource: Resource, lookup: Filter, update: Update): Promise<boolean> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.updateOne(target, this.scope(ctx, resource, { showDeleted: true, userFilter: lookup }), update));
  }

  /**
   * Applies update operators to the document matching lookup, atomically, with the options'
   * stamp and requirement (docs/updates.md); what it changed, or null when nothing matched.
   */
  modify(ctx: CallScope | null, resource: Resource, lookup: Filter, update: Update, options: ModifyOptions): Promise<Change | null> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.findOneAndUpdate(target, this.scope(ctx, resource, { showDeleted: true, userFilter: lookup }), update, options));
  }

  /**
   * Applies update operators to every document matching filter (and options.ids) in the
   * resource's scope — soft-deleted ones only with showDeleted — all-or-nothing where the
   * driver can be; the documents it changed.
   */
  modifyMany(ctx: CallScope | null, resource: Resource, filter: Filter, update: Update, options: ModifyManyOptions & { showDeleted?: boolean }): Promise<Change[]> {
    const { showDeleted, ...rest } = options;
    return this.onBound(ctx, resource, ({ driver, target }) => driver.updateMany(target, this.scope(ctx, resource, { showDeleted, userFilter: filter }), update, rest));
  }

  remove(ctx: CallScope | null, resource: Resource, lookup: Filter): Promise<boolean> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.deleteOne(target, this.scope(ctx, resource, { showDeleted: true, userFilter: lookup })));
  }

  /** `ids`: only documents with one of these `_id`s (a write by filter deleting what it matched). */
  removeMany(ctx: CallScope | null, resource: Resource, filter: Filter, options?: { ids?: unknown[] }): Promise<number> {
    return this.onBound(ctx, resource, ({ driver, target }) => driver.deleteMany(target, this.scope(ctx, resource, { showDeleted: true, userFilter: filter }), options));
  }

  /**
   * The scope holds here too (Eve's pipeline sees the whole collection): the pipeline only ever
   * sees the caller's live documents of the datasource filter.
   */
  aggregate(ctx: CallScope | null, resource: Resource, pipeline: Doc[]): Promise<Doc[]> {
    return this.onBound(ctx, resource, ({ driver, target }) => {
      const scope = this.scope(ctx, resource);
      if (Object.keys(scope).length === 0) return driver.aggregate(target, pipeline);
      const [first, ...rest] = pipeline;
      // $geoNear must stay the first stage; its own query takes the condition instead.
      if (first && "$geoNear" in first) {
        const geoNear = first.$geoNear as Doc;
        return driver.aggregate(target, [{ $geoNear: { ...geoNear, query: combineFilters(geoNear.query as Filter | undefined, scope) } }, ...rest]);
      }
      return driver.aggregate(target, [{ $match: scope }, ...pipeline]);
    });
  }

  /** The media store of the database a resource uses (the request's prefix first, as in bind). */
  async media(ctx: CallScope | null, resource: Resource | null): Promise<MediaStore> {
    const prefix = ctx?.dbPrefix !== undefined ? ctx.dbPrefix : resource?.db_prefix;
    const { driver, database } = await this.pool.get(prefix ?? null);
    return driver.media(database);
  }

  /** Indexes a resource's collection needs, created once per database and collection. */
  private ensureIndexes(driver: Driver, target: Target, resource: Resource): Promise<ReadonlySet<string>> {
    const key = `${driver.kind}\u0000${target.database ?? ""}\u0000${target.collection}\u0000${resource.name}`;
    let pending = this.indexed.get(key);
    if (!pending) {
      pending = this.buildIndexes(driver, target, resource);
      // A store that failed to answer must not wedge the resource: retry next time.
      pending.catch(() => this.indexed.delete(key));
      this.indexed.set(key, pending);
    }
    return pending;
  }

  /**
   * Builds the indexes and answers which unique fields they hold. A unique index the documents
   * already break (duplicates stored before it, or while it was gone) cannot be built: the
   * others are built one by one, that one is reported (./unbuilt-indexes.ts), and the resource is
   * still served, its `unique` checked by lookups alone, as Eve checks it.
   */
  private async buildIndexes(driver: Driver, target: Target, resource: Resource): Promise<ReadonlySet<string>> {
    const declared = indexSpecs(this.config, resource);
    // A cursor resource's orders come from a module of their own, imported only for it.
    const specs = resource.pagination_cursor ? [...declared, ...(await import("../query/keyset.ts")).orderSpecs(resource)] : declared;
    try {
      if (specs.length) await driver.createIndexes(target, specs);
    } catch (error) {
      if (!(error instanceof DuplicateKeyError)) throw error;
      // Imported on first use: a store whose data keeps its indexes never needs it.
      await (await import("./unbuilt-indexes.ts")).buildEach(driver, target, specs, this.logger);
      return new Set();
    }
    // Imported on first use, as above: only a store no other client reaches drops indexes.
    if (driver.indexesStay && driver.dropIndexesBut) await (await import("./undeclared-indexes.ts")).dropUndeclared(this.config, (other) => indexSpecs(this.config, other), driver.dropIndexesBut.bind(driver), target, resource, this.logger);
    return new Set(driver.indexesStay ? uniqueIndexFields(this.config, resource) : []);
  }
}

const GEO_TYPES = new Set(["point", "multipoint", "linestring", "multilinestring", "polygon", "multipolygon", "geometrycollection"]);

/** Top-level fields kept unique in any of Eve's ways (keepsUnique) but `_id`, which the store itself keeps unique. */
function topLevelUniqueFields(resource: Resource): string[] {
  return Object.entries(resource.schema)
    .filter(([field, rules]) => keepsUnique(rules) && field !== "_id")
    .map(([field]) => field);
}

/**
 * Soft-deleted documents must not collide, so soft-delete resources (and ones whose datasource
 * filter narrows what `unique` sees) get no unique index and rely on the validator's query alone.
 */
const indexesUnique = (resource: Resource): boolean => !resource.soft_delete && !resource.datasource.filter;

/**
 * Top-level `unique` fields the store keeps a unique index on, so uniqueness holds under
 * concurrent writers. An index belongs to the collection and refuses a duplicate written through
 * any resource over it, so a field gets one only where every such resource keeps it unique across
 * the whole collection: one with soft delete or a filter lets hidden documents share a value (as
 * Eve's lookups do), and one that does not declare it unique lets any value in.
 */
export function uniqueIndexFields(config: Config, resource: Resource): string[] {
  const over = Object.values(config.DOMAIN).filter((other) => !other.datasource.aggregation && other.datasource.source === resource.datasource.source && other.db_prefix === resource.db_prefix);
  return topLevelUniqueFields(resource).filter((field) => over.every((other) => indexesUnique(other) && other.schema[field]?.unique === true));
}

/** Top-level `unique` fields no index guards (see above): src/methods/unique-claims.ts holds them. */
export function unindexedUniqueFields(config: Config, resource: Resource): string[] {
  const indexed = uniqueIndexFields(config, resource);
  return topLevelUniqueFields(resource).filter((field) => !indexed.includes(field));
}

/** The unique indexes above, 2dsphere on geo fields, `mongo_indexes` taken as given (but one on a unique index's keys). */
export function indexSpecs(config: Config, resource: Resource): IndexSpec[] {
  const specs: IndexSpec[] = uniqueIndexFields(config, resource).map((field) => ({ keys: [[field, 1]], unique: true, sparse: true, name: `${field}_unique` }));
  for (const [field, rules] of Object.entries(resource.schema)) {
    const type = rules?.type;
    if (typeof type === "string" && GEO_TYPES.has(type)) specs.push({ keys: [[field, "2dsphere"]], name: `${field}_2dsphere` });
  }
  for (const [name, definition] of Object.entries(resource.mongo_indexes)) {
    // Checked at start-up (src/settings/validate.ts): every entry has one of the forms.
    const { key, options } = indexDefinition(definition)!;
    // A store keeps one index per key pattern: one a `unique` field needs wins over one declared
    // on the same keys, which would otherwise replace it and leave the field unguarded.
    const same = (spec: IndexSpec) => spec.unique && spec.keys.length === key.length && spec.keys.every(([field, order], i) => key[i]![0] === field && key[i]![1] === order);
    if (!specs.some(same)) specs.push({ keys: key, name, unique: options?.unique === true, sparse: options?.sparse === true });
  }
  return specs;
}
