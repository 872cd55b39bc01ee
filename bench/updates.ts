// Update operators and writes by filter (docs/updates.md), through the handler in-process:
// - a counter: one `$inc` per increment, against what a client does without operators (GET the
//   ETag and value, PATCH value + 1 with If-Match, again from the GET on 412), from 1 client
//   and from 20 concurrent clients on one document: CPU µs and requests per increment;
// - writes by filter: PATCH (`$inc`, and a plain field) and DELETE of 10,000 of 1,000,000
//   documents by a `where` on an indexed field (quick: 1,000 of 100,000), milliseconds and CPU.
//   npx tsx bench/updates.ts [--quick] [--db memory|file|sqlite]   (sqlite: a Node with node:sqlite)
import { ObjectId } from "bson";
import { NodeFileAccess } from "../adapters/node-files.ts";
import { databaseSettings } from "../src/data/pool.ts";
import { createDriver } from "../src/drivers/registry.ts";
import type { Doc, Target } from "../src/drivers/types.ts";
import { createHandler, type Handler } from "../src/handler.ts";
import type { Settings } from "../src/settings/types.ts";
import { person, settings as people } from "./lib/people.ts";
import { freshStore } from "./lib/stores.ts";
import { fmt, table } from "./lib/table.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const store = argv.includes("--db") ? argv[argv.indexOf("--db") + 1]! : "memory";
const ORIGIN = "http://bench.local";
const SIZE = quick ? 100_000 : 1_000_000;
const AFFECTED = quick ? 1_000 : 10_000;
const INCREMENTS = quick ? 400 : 2_000;
/** people.ts puts ten documents in a team: a range of teams selects a known number of them. */
const TEAM_SIZE = 10;

const base = people.DOMAIN!.people!;
const settings: Settings = {
  ...people,
  UPDATE_OPERATORS: ["$inc"],
  UPDATE_OPERATORS_ENFORCE_IF_MATCH: false,
  PATCH_BY_FILTER: true,
  DELETE_BY_FILTER: true,
  BY_FILTER_MAX_AFFECTED: null,
  DOMAIN: {
    people: {
      ...base,
      resource_methods: ["GET", "POST", "PATCH", "DELETE"],
      item_methods: ["GET", "PATCH"],
      // No item list in the answers of writes by filter: the bench measures the writes.
      pagination_limit: 1,
      schema: { ...base.schema, visits: { type: "integer", min: 0 } },
    },
  },
};

const json = { "Content-Type": "application/json" };

async function send(handler: Handler, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return handler(new Request(ORIGIN + path, { method, headers: { ...json, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) }));
}

/** CPU µs of this process and wall ms over `run`. */
async function measure(run: () => Promise<void>): Promise<{ cpuMicros: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { cpuMicros: used.user + used.system, wallMs: performance.now() - start };
}

let counters = 0;

/** `increments` increments of one counter by `clients` concurrent clients, each one way. */
async function counter(handler: Handler, clients: number, increments: number, how: "$inc" | "If-Match"): Promise<string[]> {
  const posted = await send(handler, "POST", "/people", { lastname: `counter${++counters}`, visits: 0 });
  if (posted.status !== 201) throw new Error(`the counter was not created: ${posted.status} ${await posted.text()}`);
  const created = await posted.json();
  const item = `/people/${created._id}`;
  let requests = 0;
  const once = async () => {
    if (how === "$inc") {
      requests++;
      const response = await send(handler, "PATCH", item, { $inc: { visits: 1 } });
      if (response.status !== 200) throw new Error(`$inc answered ${response.status}`);
      await response.arrayBuffer();
      return;
    }
    for (;;) {
      requests += 2;
      const current = await (await send(handler, "GET", item)).json();
      const response = await send(handler, "PATCH", item, { visits: current.visits + 1 }, { "If-Match": current._etag });
      await response.arrayBuffer();
      if (response.status === 200) return;
      if (response.status !== 412) throw new Error(`PATCH answered ${response.status}`);
    }
  };
  const each = Math.ceil(increments / clients);
  const { cpuMicros, wallMs } = await measure(() => Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < each; i++) await once();
  })).then(() => undefined));
  const total = each * clients;
  const final = (await (await send(handler, "GET", item)).json()).visits;
  if (final !== total) throw new Error(`${how} with ${clients} clients left ${final}, not ${total}`);
  return [`${how}, ${clients} client${clients > 1 ? "s" : ""}`, (cpuMicros / total).toFixed(1), (requests / total).toFixed(2), fmt.rps((total / wallMs) * 1000)];
}

/** Loads SIZE documents straight through the driver (as bench/scale.ts does), meta fields included. */
async function load(handler: Handler, target: Target): Promise<void> {
  const { driver } = await handler.app.data.bind(null, handler.app.config.DOMAIN.people!);
  const stamp = new Date(Math.floor(Date.now() / 1000) * 1000);
  for (let start = 0; start < SIZE; start += 1000) {
    const docs: Doc[] = [];
    for (let i = start; i < Math.min(SIZE, start + 1000); i++) {
      const doc: Doc = { ...person(i), visits: 0, _id: new ObjectId(), _created: stamp, _updated: stamp, _etag: i.toString(16).padStart(40, "0") };
      doc.born = new Date(doc.born as string);
      docs.push(doc);
    }
    await driver.insertMany(target, docs);
  }
}

/** A write by filter of AFFECTED documents: teams [from, from + AFFECTED / TEAM_SIZE). */
async function byFilter(handler: Handler, method: string, from: number, body?: unknown): Promise<string[]> {
  const where = encodeURIComponent(JSON.stringify({ team: { $gte: from, $lt: from + AFFECTED / TEAM_SIZE } }));
  let answer: { _meta?: Record<string, number> } = {};
  const { cpuMicros, wallMs } = await measure(async () => {
    const response = await send(handler, method, `/people?where=${where}`, body);
    answer = await response.json();
    if (response.status !== 200) throw new Error(`${method} by filter answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  });
  const changed = answer._meta?.updated ?? answer._meta?.deleted;
  if (changed !== AFFECTED) throw new Error(`${method} by filter changed ${changed} documents, not ${AFFECTED}`);
  return [`${method} ${body ? JSON.stringify(body) : ""} by filter`.replace("  ", " "), fmt.ms(wallMs), fmt.ms(cpuMicros / 1000), (cpuMicros / AFFECTED).toFixed(1)];
}

const driver = await createDriver(freshStore(store), { databaseName: "everest", settings: {}, services: { files: new NodeFileAccess() } });
const handler = createHandler(settings, { driver });
const target: Target = { database: databaseSettings(handler.app.config, null).database, collection: "people" };
await send(handler, "GET", "/people");

console.log(`## updates.ts: update operators and writes by filter (${store}${quick ? ", quick" : ""})\n`);
// A first round of each, not counted: the modules and the code paths each way takes are ready then.
for (const how of ["If-Match", "$inc"] as const) await counter(handler, 4, 100, how);
const ways: string[][] = [];
for (const clients of [1, 20]) for (const how of ["If-Match", "$inc"] as const) ways.push(await counter(handler, clients, INCREMENTS, how));
console.log(`A counter incremented ${INCREMENTS} times:\n`);
console.log(table(["way", "CPU µs / increment", "requests / increment", "increments / s"], ways));

const started = performance.now();
await load(handler, target);
console.log(`\n${SIZE.toLocaleString("en")} documents loaded in ${((performance.now() - started) / 1000).toFixed(1)} s; writes by filter of ${AFFECTED.toLocaleString("en")} of them:\n`);
const teams = SIZE / TEAM_SIZE;
const span = AFFECTED / TEAM_SIZE;
// Each write once on ranges of their own first, not counted: the first loads the opt-in module and compiles the operators.
await byFilter(handler, "PATCH", teams - 2 * span, { $inc: { visits: 1 } });
await byFilter(handler, "PATCH", teams - 2 * span, { firstname: "Warm" });
await byFilter(handler, "DELETE", teams - span);
const rows = [
  await byFilter(handler, "PATCH", 0, { $inc: { visits: 1 } }),
  await byFilter(handler, "PATCH", teams / 4, { firstname: "Bulk" }),
  await byFilter(handler, "DELETE", teams / 2),
];
console.log(table(["write", "ms", "CPU ms", "CPU µs / document"], rows));
await handler.app.close();
