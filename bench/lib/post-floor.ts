// What a POST of one document costs in everest's own parts called one after another, without
// the framework around them (routing, context, rate limit, pipeline, hooks, data layer, reply
// rendering): the least a write path with fewer layers could cost while doing the same work
// (bench/README.md, issue 36, "A sixth pass"). Run beside lib/handler-alone.ts post, alternating;
// `--steps N` stops after the Nth step, so the differences between runs give each step's share:
//   node --import tsx bench/lib/post-floor.ts [--steps 1-5] [--rounds 8]
//   1 the body decoded, parsed and its shape checked; 2 validated (defaults, coercions, rules;
//   the unique field left to the store's index, as postInternal leaves it); 3 stamped, hashed
//   (Eve's ETag) and given its id; 4 inserted into the memory store; 5 answered (the meta
//   fields and self link, as compact JSON bytes).
import process from "node:process";
import { buildPackage, builtEverest, DIST } from "./package.ts";
import { person, seed, settings } from "./people.ts";
import type { ValidationEnv } from "../../src/validation/types.ts";

const PER_ROUND = 20_000;
const option = (name: string): string | undefined => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const steps = Number(option("steps") ?? 5);
const rounds = Number(option("rounds") ?? 8);

buildPackage();
const { createHandler } = await builtEverest();
const { documentEtag } = (await import(`${DIST}src/render/etag.js`)) as typeof import("../../src/render/etag.ts");
const { checkJsonShape } = (await import(`${DIST}src/http/json-shape.js`)) as typeof import("../../src/http/json-shape.ts");
const { compactJson } = (await import(`${DIST}src/render/respond.js`)) as typeof import("../../src/render/respond.ts");
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
  findOne: () => Promise.reject(new Error("a people POST needs no lookup when the index checks lastname")),
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function post(body: Uint8Array): Promise<unknown> {
  const payload: unknown = JSON.parse(decoder.decode(body));
  checkJsonShape(payload, config.MAX_JSON_DEPTH);
  if (steps < 2) return payload;
  const validating = validator.validate(payload as Record<string, unknown>, "POST", env);
  const result = validating instanceof Promise ? await validating : validating;
  if (!result.valid) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  const document = result.document;
  if (steps < 3) return document;
  const stamp = new Date(Math.floor(Date.now() / 1000) * 1000);
  document[config.LAST_UPDATED] = stamp;
  document[config.DATE_CREATED] = stamp;
  document[config.ETAG] = documentEtag(document, resource.etag_ignore_fields);
  const id = new ObjectId();
  document._id = id;
  if (steps < 4) return document;
  await driver.insertMany(target, [document]);
  if (steps < 5) return document;
  const links = { self: { title: resource.item_title, href: `people/${id.toHexString()}` } };
  const answer = { [config.LAST_UPDATED]: stamp, [config.DATE_CREATED]: stamp, [config.ETAG]: document[config.ETAG], _id: id, [config.LINKS]: links, [config.STATUS]: config.STATUS_OK };
  return encoder.encode(compactJson(config, answer));
}

let written = 0;
for (let round = 0; round < rounds; round++) {
  // Bodies made before the clock starts, as handler-alone.ts makes them: the client's work.
  const bodies = Array.from({ length: PER_ROUND }, () => encoder.encode(JSON.stringify(person(written++, "f"))));
  const start = process.cpuUsage();
  for (const body of bodies) await post(body);
  const used = process.cpuUsage(start);
  console.log(`post floor, ${steps} step(s): ${((used.user + used.system) / PER_ROUND).toFixed(1)} µs CPU per request`);
}
process.exit(0);
