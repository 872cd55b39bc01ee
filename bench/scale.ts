// Scale: does a lookup cost the same at 1M documents as at 1k? On the memory driver directly
// and through the handler in-process, with the indexes the bench settings declare (`lastname`
// unique in the schema, `team` in mongo_indexes). Each size runs in a child process of its own,
// so its peak RSS is its own; `examined/op` (the driver's count of documents a filter was
// tested against) shows whether a query, and its count, used an index or scanned.
//   npx tsx bench/scale.ts [--quick] [--db memory|file|sqlite]
// --db puts the data in the journal (file:) or a SQLite file (sqlite:, a Node with node:sqlite)
// instead; only the memory driver counts examined/op. On a durable store each size also
// measures start-up: a fresh process opening the store with the documents already in it.
import { spawnSync } from "node:child_process";
import { EJSON, ObjectId } from "bson";
import { createHandler } from "../src/handler.ts";
import { NodeFileAccess } from "../adapters/node-files.ts";
import { MemoryDriver } from "../src/drivers/memory/index.ts";
import { createDriver } from "../src/drivers/registry.ts";
import { databaseSettings } from "../src/data/pool.ts";
import type { Doc, Driver, Filter, Target } from "../src/drivers/types.ts";
import { person, settings } from "./lib/people.ts";
import { currentRss, peakRss, pinning, resetPeak, ROOT } from "./lib/proc.ts";
import { freshStore } from "./lib/stores.ts";
import { fmt, table } from "./lib/table.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const store = argv.includes("--db") ? argv[argv.indexOf("--db") + 1]! : "memory";
const SIZES = quick ? [1_000, 10_000, 100_000] : [1_000, 100_000, 1_000_000];
/** Allowed growth of the time per request from the smallest to the largest size. */
const TARGET = 1.5;
const SAMPLE = 1000;
const ROUNDS = 5;

interface Case {
  name: string;
  /** The driver calls a GET makes for it (find, and count for collection reads). */
  driver: (driver: Driver, target: Target, key: Key) => Promise<unknown>;
  /** The same read as an HTTP request path. */
  path: (key: Key) => string;
}

interface Key {
  id: string;
  lastname: string;
  team: number;
}

interface CaseResult {
  name: string;
  layer: "driver" | "handler";
  microseconds: number;
  /** Null on drivers that keep no such count. */
  examined: number | null;
  fullScans: number;
  /**
   * Distinct requests among the sampled ones. Where a small collection has fewer (a thousand
   * documents hold 100 teams), the handler answers most of them from its kept pages
   * (src/render/kept-json.ts), and its time at that size is not the same work as at the others.
   */
  distinct: number;
}

interface SizeResult {
  size: number;
  seedSeconds: number;
  /** RSS with the documents loaded, less RSS before; and the process's peak. */
  dataRss: number;
  peakRss: number | null;
  /** The same for the V8 heap in use. */
  dataHeap: number;
  /** The documents as canonical Extended JSON, the yardstick of the store's memory (issue: at most 2× plus indexes). */
  jsonBytes: number;
  /** On a journaled store: its size after the load, the time of a compaction, and its size after. */
  journal?: { bytes: number; compactionMs: number; compactedBytes: number };
  cases: CaseResult[];
  /** A durable store reopened by a fresh process. */
  startup?: Startup;
}

interface Startup {
  /** From opening the store to the answer of the first request (which creates the indexes). */
  milliseconds: number;
  /** RSS then, and the peak on the way. */
  rss: number | null;
  peakRss: number | null;
}

const where = (filter: unknown) => `/people?where=${encodeURIComponent(JSON.stringify(filter))}`;

/** What GET on a collection asks of the driver: a page of 25 and the total. */
const page = (driver: Driver, target: Target, filter: Filter) =>
  Promise.all([driver.find(target, { filter, limit: 25 }), driver.count(target, filter)]);

const CASES: Case[] = [
  {
    name: "GET item by _id",
    driver: (driver, target, key) => driver.find(target, { filter: { _id: new ObjectId(key.id) }, limit: 1 }),
    path: (key) => `/people/${key.id}`,
  },
  { name: "where unique field", driver: (d, t, key) => page(d, t, { lastname: key.lastname }), path: (key) => where({ lastname: key.lastname }) },
  { name: "where indexed field", driver: (d, t, key) => page(d, t, { team: key.team }), path: (key) => where({ team: key.team }) },
  {
    name: "$in on indexed field",
    driver: (d, t, key) => page(d, t, { team: { $in: [key.team, key.team + 1] } }),
    path: (key) => where({ team: { $in: [key.team, key.team + 1] } }),
  },
  {
    name: "range on indexed field",
    driver: (d, t, key) => page(d, t, { team: { $gte: key.team, $lt: key.team + 2 } }),
    path: (key) => where({ team: { $gte: key.team, $lt: key.team + 2 } }),
  },
];

/**
 * Times `run` over the keys in bounded loops: a warm-up, then five rounds, reporting the median
 * round in µs per call, which a busy machine's pauses disturb less than one long mean.
 */
async function time(keys: Key[], iterations: number, run: (key: Key) => Promise<unknown>): Promise<number> {
  const round = Math.ceil(iterations / ROUNDS);
  for (let i = 0; i < iterations / 4; i++) await run(keys[i % keys.length]!);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < round; i++) await run(keys[(r * round + i) % keys.length]!);
    rounds.push(((performance.now() - start) * 1000) / round);
  }
  return rounds.sort((a, b) => a - b)[ROUNDS >> 1]!;
}

/**
 * Full collections, with pauses in which V8 can hand freed pages back, until the RSS stops
 * falling: what the data holds once the garbage of loading it is gone. A single collection left
 * most of that garbage's pages committed (on a pinned core V8's background threads release
 * them over seconds), nearly doubling the RSS figure.
 */
async function settle(): Promise<void> {
  let last = Infinity;
  for (let round = 0; round < 20; round++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const rss = process.memoryUsage().rss;
    if (round >= 3 && rss > last * 0.99) return;
    last = Math.min(last, rss);
  }
}

const open = (uri: string) => createDriver(uri, { databaseName: "everest", settings: {}, services: { files: new NodeFileAccess() } });

async function measureSize(size: number, uri: string): Promise<SizeResult> {
  const driver = await open(uri);
  const stats = driver instanceof MemoryDriver ? driver.stats : null;
  const handler = createHandler(settings, { driver });
  const target: Target = { database: databaseSettings(handler.app.config, null).database, collection: "people" };
  // The first request makes the handler create the indexes its settings declare.
  const first = await handler(new Request("http://bench.local/people"));
  if (first.status !== 200) throw new Error(`GET /people answered ${first.status}: ${await first.text()}`);

  await settle();
  const before = process.memoryUsage();
  let seedMs = 0;
  let jsonBytes = 0;
  const keys: Key[] = [];
  const stride = Math.max(1, Math.floor(size / SAMPLE));
  const stamp = new Date(Math.floor(Date.now() / 1000) * 1000);
  // Batches of a bulk POST's size: 10,000-document batches outlived the young generation and
  // left their garbage in the old one, which held a quarter of the heap free after the load.
  const batch = 500;
  for (let start = 0; start < size; start += batch) {
    const docs: Doc[] = [];
    for (let i = start; i < Math.min(size, start + batch); i++) {
      const doc: Doc = { ...person(i), _id: new ObjectId(), _created: stamp, _updated: stamp, _etag: i.toString(16).padStart(40, "0") };
      doc.born = new Date(doc.born as string);
      if (i % stride === 0) keys.push({ id: (doc._id as ObjectId).toHexString(), lastname: doc.lastname as string, team: doc.team as number });
      jsonBytes += Buffer.byteLength(EJSON.stringify(doc, { relaxed: false }));
      docs.push(doc);
    }
    const started = performance.now();
    await driver.insertMany(target, docs);
    seedMs += performance.now() - started;
  }
  const seedSeconds = seedMs / 1000;
  await settle();
  const after = process.memoryUsage();
  const dataRss = after.rss - before.rss;
  const dataHeap = after.heapUsed - before.heapUsed;
  // Spread the picks over the whole collection, in an order that is not insertion order.
  for (let i = keys.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }

  const cases: CaseResult[] = [];
  const layers = [
    { layer: "driver" as const, iterations: quick ? 2_000 : 5_000, call: (c: Case) => (key: Key) => c.driver(driver, target, key) },
    {
      layer: "handler" as const,
      iterations: quick ? 500 : 1_500,
      call: (c: Case) => async (key: Key) => {
        const response = await handler(new Request(`http://bench.local${c.path(key)}`));
        if (response.status !== 200) throw new Error(`${c.name}: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      },
    },
  ];
  for (const { layer, iterations, call } of layers) {
    for (const c of CASES) {
      const before = stats && { ...stats };
      const calls = iterations / 4 + Math.ceil(iterations / ROUNDS) * ROUNDS;
      const microseconds = await time(keys, iterations, call(c));
      cases.push({
        name: c.name,
        layer,
        microseconds,
        examined: stats && before ? (stats.documentsExamined - before.documentsExamined) / calls : null,
        fullScans: stats && before ? stats.fullScans - before.fullScans : 0,
        distinct: new Set(keys.map(c.path)).size,
      });
    }
  }
  const journal = driver instanceof MemoryDriver && driver.journalSize > 0 ? await compaction(driver) : undefined;
  await handler.app.close();
  return { size, seedSeconds, dataRss, dataHeap, jsonBytes, journal, peakRss: peakRss(process.pid), cases };
}

async function compaction(driver: MemoryDriver): Promise<SizeResult["journal"]> {
  const bytes = driver.journalSize;
  const started = performance.now();
  await driver.compact();
  return { bytes, compactionMs: performance.now() - started, compactedBytes: driver.journalSize };
}

/** Opens a store that already holds the documents and answers one read, as a restarted server would. */
async function startUp(uri: string): Promise<Startup> {
  const started = performance.now();
  const handler = createHandler(settings, { driver: await open(uri) });
  const response = await handler(new Request(`http://bench.local${where({ team: 1 })}`));
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`the first GET answered ${response.status}`);
  const milliseconds = performance.now() - started;
  const result = { milliseconds, rss: currentRss(process.pid), peakRss: peakRss(process.pid) };
  await handler.app.close();
  return result;
}

function report(results: SizeResult[]): boolean {
  const smallest = results[0]!;
  const largest = results[results.length - 1]!;
  const label = (size: number) => (size >= 1e6 ? `${size / 1e6}M` : `${size / 1e3}k`);
  let held = true;
  const rows = smallest.cases.map((c, i) => {
    const times = results.map((r) => r.cases[i]!);
    const growth = times[times.length - 1]!.microseconds / times[0]!.microseconds;
    const scanned = times.some((t) => t.fullScans > 0);
    const ok = growth <= TARGET && !scanned;
    held &&= ok;
    return [
      `${c.layer}: ${c.name}`,
      ...times.map((t) => fmt.us(t.microseconds / 1000)),
      ...times.map((t) => t.examined?.toFixed(1) ?? "–"),
      times.map((t) => t.distinct.toLocaleString("en-US")).join(" / "),
      `${fmt.ratio(growth)} ${ok ? "✓" : "✗"}${scanned ? " (full scans)" : ""}`,
    ];
  });
  console.log(
    table(
      ["request", ...results.map((r) => `${label(r.size)} time`), ...results.map((r) => `${label(r.size)} examined/op`), "distinct requests", `${label(largest.size)} ÷ ${label(smallest.size)}`],
      rows,
    ),
  );
  console.log();
  console.log(
    table(
      ["documents", "seed s", "data RSS MB", "peak RSS MB", "MB per 100k documents", "start-up ms", "RSS after start-up MB", "peak RSS in start-up MB"],
      results.map((r) => [
        label(r.size),
        r.seedSeconds.toFixed(1),
        fmt.mb(r.dataRss),
        fmt.mb(r.peakRss),
        r.size >= 100_000 ? ((r.dataRss / 2 ** 20) * (100_000 / r.size)).toFixed(0) : "–",
        r.startup ? fmt.ms(r.startup.milliseconds) : "–",
        r.startup ? fmt.mb(r.startup.rss) : "–",
        r.startup ? fmt.mb(r.startup.peakRss) : "–",
      ]),
    ),
  );
  console.log();
  const per100k = (bytes: number, size: number) => (bytes / 2 ** 20) * (100_000 / size);
  console.log(
    table(
      ["documents", "canonical JSON MB per 100k", "heap MB per 100k", "RSS MB per 100k", "RSS ÷ JSON", "journal MB", "compaction s", "journal after MB", "recovery s"],
      // Below 100k documents the process's own start-up allocations outweigh the data.
      results.filter((r) => r.size >= 100_000).map((r) => [
        label(r.size),
        per100k(r.jsonBytes, r.size).toFixed(1),
        per100k(r.dataHeap, r.size).toFixed(1),
        per100k(r.dataRss, r.size).toFixed(1),
        fmt.ratio(r.dataRss / r.jsonBytes),
        r.journal ? fmt.mb(r.journal.bytes) : "–",
        r.journal ? (r.journal.compactionMs / 1000).toFixed(1) : "–",
        r.journal ? fmt.mb(r.journal.compactedBytes) : "–",
        r.startup ? (r.startup.milliseconds / 1000).toFixed(1) : "–",
      ]),
    ),
  );
  return held;
}

/** Runs this script as `--child <args>` in a process of its own (pinned when it can be), for its RESULT line. */
function inChild(cores: ReturnType<typeof pinning>, args: string[]): unknown {
  const command = [...(cores ? ["taskset", "-c", String(cores.server)] : []), process.execPath, "--expose-gc", "--import", "tsx", "bench/scale.ts", "--child", ...args];
  const child = spawnSync(command[0]!, command.slice(1), { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 24 });
  const line = child.stdout.split("\n").find((l) => l.startsWith("RESULT "));
  if (!line) throw new Error(child.stderr.trim().split("\n").slice(0, 5).join(" / "));
  return JSON.parse(line.slice("RESULT ".length));
}

if (argv[0] === "--child") {
  const [, job, uri, size] = argv;
  resetPeak(process.pid);
  const result = job === "measure" ? await measureSize(Number(size), uri!) : await startUp(uri!);
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
} else {
  console.log(`## Scale: ${store} store, driver and handler in-process, time per request (median of ${ROUNDS} rounds), at ${SIZES.join(", ")} documents`);
  const cores = pinning();
  const results: SizeResult[] = [];
  for (const size of SIZES) {
    const uri = freshStore(store);
    try {
      const result = inChild(cores, ["measure", uri, String(size)]) as SizeResult;
      if (uri !== "memory") result.startup = inChild(cores, ["start", uri]) as Startup;
      results.push(result);
    } catch (error) {
      console.log(`n/a at ${size} documents: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
      break;
    }
  }
  if (results.length === SIZES.length) {
    const held = report(results);
    console.log(`\ntarget (time per request at ${SIZES.at(-1)!.toLocaleString("en-US")} within ${TARGET}× of ${SIZES[0]!.toLocaleString("en-US")}, no full scans): ${held ? "holds" : "NOT held"}`);
  }
}
