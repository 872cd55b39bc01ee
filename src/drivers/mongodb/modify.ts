// The mongodb driver's findOneAndUpdate and updateMany. The update itself is MongoDB's own
// (findOneAndUpdate, updateMany): atomic per document on the server, never a read-modify-write
// here. MongoDB cannot run the stamp's hash, so the ETag field gets a fresh random value in the
// same update (Stamp). A requirement is part of the update's filter; a document the filter
// matches but the requirement does not is then reported as unmet. Where the deployment has
// transactions (a replica set or sharded cluster), updateMany runs in one and is all-or-nothing;
// on a standalone server each document is updated atomically and a failure half way leaves the
// documents before it updated (docs/drivers.md).
import { deserialize } from "bson";
import type { ClientSession, Collection, MongoClient } from "mongodb";
import { DatabaseUnavailableError, UnmetRequirementError, type Change, type Doc, type Filter, type ModifyManyOptions, type ModifyOptions, type Update } from "../types.ts";
import { modifiedCopies, requirement } from "../memory/modify.ts";
import { valueKey } from "../memory/values.ts";
import { run, translateError } from "./errors.ts";
import { ownBson } from "./own-bson.ts";
import { withInt64s } from "./int64.ts";

/** Tries of a findOneAndUpdate whose document met its requirement only by the time it was looked at again. */
const ATTEMPTS = 10;

/** 40 random hex digits: the form of an ETag, equal to no ETag ever given out before. */
export function freshEtag(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(20)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The update as MongoDB takes it: the stamp's field set to a fresh value, empty operators dropped
 * (MongoDB refuses them); `update` as the operators work it out here, `wire` as it is sent
 * (src/drivers/mongodb/int64.ts).
 */
function serverUpdate(update: Update, stamp: ModifyOptions["stamp"]): { update: Doc; wire: Doc } {
  const operators: Doc = {};
  for (const [operator, fields] of Object.entries(update)) if (fields && Object.keys(fields).length > 0) operators[operator] = fields;
  if (stamp) operators.$set = { ...(operators.$set as Doc | undefined), [stamp.field]: freshEtag() };
  return { update: operators, wire: withInt64s(operators) };
}

/**
 * What the update made of `before`, worked out with the memory driver's operators (the same as
 * MongoDB's for the updates the core sends), the server's ETag value already in the update.
 */
function after(before: Doc, update: Doc): Doc {
  return modifiedCopies([before], update as Update, undefined)[0]!;
}

export async function findOneAndUpdate(collection: Collection<Doc>, filter: Filter, update: Update, options: ModifyOptions): Promise<Change | null> {
  const sent = serverUpdate(update, options.stamp);
  const require = options.require;
  const full = require ? { $and: [filter, require] } : filter;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const found = await run(() => collection.findOneAndUpdate(full, sent.wire, { returnDocument: "before" }));
    if (found) {
      const before = ownBson(found);
      return { before, after: after(before, sent.update) };
    }
    if (!require) return null;
    const current = await run(() => collection.findOne(filter));
    if (!current) return null;
    const document = ownBson(current);
    if (!requirement(require)!(document)) throw new UnmetRequirementError([document]);
  }
  throw new DatabaseUnavailableError("the document kept changing while it was being written");
}

async function findAll(collection: Collection<Doc>, filter: Filter, session?: ClientSession): Promise<Doc[]> {
  const raw = await run(() => collection.find(filter, { raw: true, ...(session ? { session } : {}) }).toArray());
  return raw.map((bytes) => deserialize(bytes as unknown as Uint8Array));
}

/** The documents matching, after the requirement is checked on each. */
async function matching(collection: Collection<Doc>, filter: Filter, options: ModifyManyOptions, session?: ClientSession): Promise<Doc[]> {
  const befores = await findAll(collection, filter, session);
  const meets = requirement(options.require);
  const unmet = meets ? befores.filter((doc) => !meets(doc)) : [];
  if (unmet.length > 0) throw new UnmetRequirementError(unmet);
  return befores;
}

export async function updateMany(client: MongoClient, collection: Collection<Doc>, transactions: boolean, filter: Filter, update: Update, options: ModifyManyOptions): Promise<Change[]> {
  const scoped = options.ids ? { $and: [filter, { _id: { $in: options.ids } }] } : filter;
  const sent = serverUpdate(update, options.stamp);
  if (transactions) {
    const session = client.startSession();
    try {
      return await session.withTransaction(async () => {
        const befores = await matching(collection, scoped, options, session);
        if (befores.length === 0) return [];
        const ids = befores.map((doc) => doc._id);
        const byIds: Filter = { _id: { $in: ids } };
        await run(() => collection.updateMany(byIds, sent.wire, { session }));
        return paired(befores, await findAll(collection, byIds, session));
      });
    } catch (error) {
      throw translateError(error);
    } finally {
      await session.endSession();
    }
  }
  // Without a transaction, one document at a time, each atomic: the server hands back the version
  // it changed, so each change is known exactly. One updateMany read back by its ETag stamp lost
  // the documents a concurrent write had changed again since (their answer, log, versions).
  const befores = await matching(collection, scoped, options);
  const require = options.require ? [options.require] : [];
  const changes: Change[] = [];
  for (const { _id } of befores) {
    let found: Doc | null;
    try {
      found = await run(() => collection.findOneAndUpdate({ $and: [scoped, { _id }, ...require] }, sent.wire, { returnDocument: "before" }));
    } catch (error) {
      throw new PartlyWritten(error, changes);
    }
    // Gone, moved out of the filter or past its requirement meanwhile: not this write's.
    if (!found) continue;
    const before = ownBson(found);
    changes.push({ before, after: after(before, sent.update) });
  }
  return changes;
}

/**
 * An updateMany without a transaction failed half way: the documents before the one refused
 * were changed, and stay so. `changes` are those (for the change log); `cause` is the failure.
 */
export class PartlyWritten extends Error {
  constructor(
    override readonly cause: unknown,
    readonly changes: Change[],
  ) {
    super(`an update of many documents failed after changing ${changes.length} of them`);
    this.name = "PartlyWritten";
  }
}

/** Each document before with its document after, for those there is one of. */
function paired(befores: Doc[], afters: Doc[]): Change[] {
  const byId = new Map(afters.map((doc) => [valueKey(doc._id), doc]));
  return befores.flatMap((before) => {
    const found = byId.get(valueKey(before._id));
    return found ? [{ before, after: found }] : [];
  });
}
