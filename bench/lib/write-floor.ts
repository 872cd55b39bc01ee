// What a POST of one document and a PATCH cost in everest's own parts called one after another,
// without the framework around them (routing, context, rate limit, pipeline, hooks, data layer,
// reply rendering): the least a write path with fewer layers could cost while doing the same
// work (bench/README.md, issue 36, "A sixth pass"). Run beside lib/handler-alone.ts post|patch,
// alternating; `--steps N` stops after the Nth step, so the differences between runs give each
// step's share:
//   node --import tsx bench/lib/write-floor.ts post|patch [--steps N] [--rounds 8]
// POST: 1 the body decoded, parsed and its shape checked; 2 validated (defaults, coercions,
// rules; the unique field left to the store's index, as postInternal leaves it); 3 stamped,
// hashed (Eve's ETag) and given its id; 4 inserted into the memory store; 5 answered (the meta
// fields and self link, as compact JSON bytes).
// PATCH: 1 the original read (the stored version, as onlyReadHere lets src/methods/patch.ts)
// and If-Match checked; 2 the body as POST's 1; 3 validated against the original; 4 merged,
// stamped and hashed; 5 written by the store under the ETag condition; 6 answered.
import process from "node:process";
import { buildPackage, builtEverest, DIST } from "./package.ts";
import { person, seed, settings } from "./people.ts";
import type { Doc } from "../../src/drivers/types.ts";
import type { ValidationEnv } from "../../src/validation/types.ts";

const PER_ROUND = 20_000;
const option = (name: string): string | undefined => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const workload = process.argv[2] ?? "post";
if (workload !== "post" && workload !== "patch") throw new Error(`unknown workload '${workload}' (post, patch)`);
const steps = Number(option("steps") ?? 6);
const rounds = Number(option("rounds") ?? 8);

buildPackage();
const { createHandler } = await builtEverest();
const { documentEtag } = (await import(`${DIST}src/render/etag.js`)) as typeof import("../../src/render/etag.ts");
const { parseJsonBody } = (await import(`${DIST}src/request/payload.js`)) as typeof import("../../src/request/payload.ts");
const { compactJson } = (await import(`${DIST}src/render/respond.js`)) as typeof import("../../src/render/respond.ts");
const { now } = (await import(`${DIST}src/util/clock.js`)) as typeof import("../../src/util/clock.ts");
const { ObjectId } = await import("bson");

const handler = createHandler(settings);
await seed(handler, "http://bench.local", 10_000);
const { config, data, validators } = handler.app;
const resource = config.DOMAIN.people!;
const validator = validators.get("people")!;
const { driver, target, uniqueIndexed } = await data.bind(null, resource);
const env: ValidationEnv = {
  config,
  resource,
  uniqueByIndex: uniqueIndexed,
  requestAuthValue: undefined,
  findOne: () => Promise.reject(new Error("the bench's writes need no lookup: the store's index checks lastname")),
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function parsed(body: Uint8Array): Doc {
  return parseJsonBody(decoder.decode(body), config.MAX_JSON_DEPTH) as Doc;
}

async function validated(document: Doc, mode: "POST" | "PATCH", original?: Doc): Promise<Doc> {
  const validating = validator.validate(document, mode, { ...env, original });
  const result = validating instanceof Promise ? await validating : validating;
  if (!result.valid) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result.document;
}

/** The answer of a write: its meta fields and self link, as compact JSON bytes. */
function answer(document: Doc): Uint8Array {
  const id = document._id as InstanceType<typeof ObjectId>;
  const links = { self: { title: resource.item_title, href: `people/${id.toHexString()}` } };
  const meta = { [config.LAST_UPDATED]: document[config.LAST_UPDATED], [config.DATE_CREATED]: document[config.DATE_CREATED], [config.ETAG]: document[config.ETAG], _id: id, [config.LINKS]: links, [config.STATUS]: config.STATUS_OK };
  return encoder.encode(compactJson(config, meta));
}

async function post(body: Uint8Array): Promise<unknown> {
  const payload = parsed(body);
  if (steps < 2) return payload;
  const document = await validated(payload, "POST");
  if (steps < 3) return document;
  const stamp = now();
  document[config.LAST_UPDATED] = stamp;
  document[config.DATE_CREATED] = stamp;
  document[config.ETAG] = documentEtag(document, resource.etag_ignore_fields);
  document._id = new ObjectId();
  if (steps < 4) return document;
  await driver.insertMany(target, [document]);
  if (steps < 5) return document;
  return answer(document);
}

/** The documents PATCH cycles over, with the ETag each was last given (as handler-alone.ts follows them). */
const sample = (await driver.find(target, { filter: {}, limit: 50 })).map((doc) => ({ id: doc._id, etag: doc[config.ETAG] as string }));

async function patch(i: number, body: Uint8Array): Promise<unknown> {
  const held = sample[i % sample.length]!;
  const original = (await driver.find(target, { filter: { _id: held.id }, limit: 1, shared: true }))[0]!;
  if (original[config.ETAG] !== held.etag) throw new Error("If-Match would fail");
  if (steps < 2) return original;
  const payload = parsed(body);
  if (steps < 3) return payload;
  const updates = await validated(payload, "PATCH", original);
  if (steps < 4) return updates;
  updates[config.LAST_UPDATED] = now();
  const updated = { ...original, ...updates };
  updates[config.ETAG] = updated[config.ETAG] = documentEtag(updated, resource.etag_ignore_fields);
  if (steps < 5) return updated;
  const $set: Doc = {};
  for (const key of Object.keys(updates)) $set[key] = updated[key];
  if (!(await driver.updateOne(target, { [config.ETAG]: held.etag, _id: held.id }, { $set }))) throw new Error("the write matched nothing");
  held.etag = updated[config.ETAG] as string;
  if (steps < 6) return updated;
  return answer(updated);
}

let written = 0;
for (let round = 0; round < rounds; round++) {
  // Bodies made before the clock starts, as handler-alone.ts makes them: the client's work.
  const bodies = Array.from({ length: PER_ROUND }, (_, i) => encoder.encode(JSON.stringify(workload === "post" ? person(written++, "f") : { firstname: `n${i % 100}` })));
  const start = process.cpuUsage();
  if (workload === "post") for (const body of bodies) await post(body);
  else for (let i = 0; i < PER_ROUND; i++) await patch(i, bodies[i]!);
  const used = process.cpuUsage(start);
  console.log(`${workload} floor, ${steps} step(s): ${((used.user + used.system) / PER_ROUND).toFixed(1)} µs CPU per request`);
}
process.exit(0);
