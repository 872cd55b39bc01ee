// Paging at depth (issue 32, docs/paging.md): the cost of the first page and of the page at
// depth 40,000 of 25 documents, by cursor and by page number, and of each count strategy with
// and without a filter, through the handler in-process, on the memory store and on SQLite.
//   npx tsx bench/paging.ts [--quick] [--size N] [--db memory|sqlite|file]
// One child process per store loads the documents straight into the driver (1M; --quick 20k,
// the depth scaled down to fit), then times each request: the median of five rounds, each
// round at least a fifth of a second or a few calls, whichever ends first, so the slow reads
// (a deep page by number) are timed too without taking minutes. `examined/op` is the memory
// driver's count of documents a filter was tested against per request.
// Targets: by cursor, the deep page costs at most 1.5× the first; with count=none, a filtered
// page costs what reading its documents does, no count (the filter, one city in eight, is
// not the sort's, so the read passes about eight documents per one it keeps).
import { spawnSync } from "node:child_process";
import { ObjectId } from "bson";
import { NodeFileAccess } from "../adapters/node-files.ts";
import { databaseSettings } from "../src/data/pool.ts";
import { MemoryDriver } from "../src/drivers/memory/index.ts";
import { createDriver } from "../src/drivers/registry.ts";
import type { Doc, Target } from "../src/drivers/types.ts";
import { createHandler } from "../src/handler.ts";
import type { Settings } from "../src/settings/types.ts";
import { person, settings as people } from "./lib/people.ts";
import { pinning, ROOT } from "./lib/proc.ts";
import { freshStore, isStore, type Store } from "./lib/stores.ts";
import { fmt, table } from "./lib/table.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const SIZE = Number(option("--size") ?? (quick ? 20_000 : 1_000_000));
const PAGE = 25;
/** The page the issue names, or the last but one where the collection is smaller. */
const DEPTH = Math.min(40_000, Math.floor(SIZE / PAGE) - 1);
const ROUNDS = 5;
const TARGET = 1.5;
const STORES: Store[] = option("--db") ? [option("--db") as Store] : ["memory", "sqlite"];

const schema = people.DOMAIN!.people!.schema!;
const source = { source: "people", default_sort: [["team", 1]] as Array<[string, 1 | -1]> };
/** The same documents as Eve pages them (with count strategies) and by cursor, in the order of `team` then `_id`. */
const settings: Settings = {
  ...people,
  DOMAIN: {
    people: { ...people.DOMAIN!.people!, pagination_count: "exact", datasource: source },
    cursors: { schema, pagination_cursor: true, pagination_count: "exact", datasource: source, mongo_indexes: people.DOMAIN!.people!.mongo_indexes },
  },
};

interface Row {
  name: string;
  microseconds: number;
  examined: number | null;
}

const open = (uri: string) => createDriver(uri, { databaseName: "everest", settings: {}, services: { files: new NodeFileAccess() } });

/** The median of five rounds (three of one call each for a read slower than half a second), in µs per call. */
async function time(run: () => Promise<void>): Promise<{ microseconds: number; calls: number }> {
  const warm = performance.now();
  await run();
  if (performance.now() - warm > 500) {
    const slow: number[] = [];
    for (let r = 0; r < 3; r++) {
      const start = performance.now();
      await run();
      slow.push((performance.now() - start) * 1000);
    }
    return { microseconds: slow.sort((a, b) => a - b)[1]!, calls: 4 };
  }
  const rounds: number[] = [];
  let calls = 1;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    let n = 0;
    do {
      await run();
      n++;
    } while (performance.now() - start < 200 && n < (quick ? 50 : 200));
    calls += n;
    rounds.push(((performance.now() - start) * 1000) / n);
  }
  return { microseconds: rounds.sort((a, b) => a - b)[ROUNDS >> 1]!, calls };
}

async function measure(uri: string): Promise<Row[]> {
  const driver = await open(uri);
  const stats = driver instanceof MemoryDriver ? driver.stats : null;
  const handler = createHandler(settings, { driver });
  const target: Target = { database: databaseSettings(handler.app.config, null).database, collection: "people" };
  const stamp = new Date(Math.floor(Date.now() / 1000) * 1000);
  for (let start = 0; start < SIZE; start += 500) {
    const docs: Doc[] = [];
    for (let i = start; i < Math.min(SIZE, start + 500); i++) {
      const doc: Doc = { ...person(i), _id: new ObjectId(), _created: stamp, _updated: stamp, _etag: i.toString(16).padStart(40, "0") };
      doc.born = new Date(doc.born as string);
      docs.push(doc);
    }
    await driver.insertMany(target, docs);
  }
  const get = async (path: string) => {
    const response = await handler(new Request(`http://bench.local${path}`));
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${(await response.text()).slice(0, 200)}`);
    return response;
  };
  // The first requests create the indexes the settings imply (the memory store builds its sort index on the first cursor read).
  await get("/people?max_results=1");
  await get("/cursors?max_results=1");
  const deepCursor = ((await (await get(`/cursors?max_results=${PAGE}&count=none&page=${DEPTH}`)).json()) as { _links: { next: { href: string } } })._links.next.href;
  // One document in eight, spread evenly over the order: a walk passes about eight per one it keeps.
  const filtered = `where=${encodeURIComponent(JSON.stringify({ "location.city": "Turin" }))}`;
  const cases: Array<[string, string]> = [
    ["cursor: page 1", `/cursors?max_results=${PAGE}&count=none`],
    [`cursor: page ${DEPTH + 1}`, `/${deepCursor}`],
    ["page number: page 1", `/people?max_results=${PAGE}&count=none`],
    [`page number: page ${DEPTH + 1}`, `/people?max_results=${PAGE}&count=none&page=${DEPTH + 1}`],
    ...(["exact", "estimated", "none"] as const).flatMap((count): Array<[string, string]> => [
      [`count=${count}`, `/cursors?max_results=${PAGE}&count=${count}`],
      [`count=${count}, filtered`, `/cursors?max_results=${PAGE}&count=${count}&${filtered}`],
    ]),
  ];
  // Every request once before any is timed: the first reads of a store warm what all share.
  for (const [, path] of cases) await (await get(path)).arrayBuffer();
  const rows: Row[] = [];
  for (const [name, path] of cases) {
    const before = stats?.documentsExamined ?? 0;
    const { microseconds, calls } = await time(async () => void (await (await get(path)).arrayBuffer()));
    rows.push({ name, microseconds, examined: stats ? (stats.documentsExamined - before) / calls : null });
  }
  await handler.app.close();
  return rows;
}

function report(store: Store, rows: Row[]): boolean {
  const by = (name: string) => rows.find((row) => row.name === name)!.microseconds;
  console.log(table(["request", "time", "examined/op"], rows.map((row) => [row.name, fmt.us(row.microseconds / 1000), row.examined?.toFixed(1) ?? "–"])));
  const deep = by(`cursor: page ${DEPTH + 1}`) / by("cursor: page 1");
  const filtered = by("count=none, filtered") / by("count=none");
  console.log(`\n${store}: deep cursor page ÷ first page ${fmt.ratio(deep)} (target ≤ ${TARGET}×); filtered page with count=none ÷ unfiltered ${fmt.ratio(filtered)}`);
  return deep <= TARGET;
}

if (argv[0] === "--child") {
  process.stdout.write(`RESULT ${JSON.stringify(await measure(argv[1]!))}\n`);
} else {
  console.log(`## Paging: ${SIZE.toLocaleString("en-US")} documents, pages of ${PAGE}, through the handler in-process (median of ${ROUNDS} rounds; sqlite needs node:sqlite, Node ≥ 22.5, or SQLITE_NODE naming one)`);
  const cores = pinning();
  let held = true;
  for (const store of STORES) {
    if (!isStore(store)) throw new Error(`--db ${store}: expected memory, file or sqlite`);
    console.log(`\n### ${store}\n`);
    // SQLITE_NODE, as in test:drivers: a Node with node:sqlite where this one has none.
    const node = store === "sqlite" && process.env.SQLITE_NODE ? process.env.SQLITE_NODE : process.execPath;
    const command = [...(cores ? ["taskset", "-c", String(cores.server)] : []), node, "--import", "tsx", "bench/paging.ts", "--child", freshStore(store), ...argv];
    const child = spawnSync(command[0]!, command.slice(1), { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 24 });
    const line = child.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    if (!line) {
      console.log(`n/a: ${child.stderr.trim().split("\n").slice(-3).join(" / ")}`);
      continue;
    }
    held = report(store, JSON.parse(line.slice("RESULT ".length)) as Row[]) && held;
  }
  console.log(`\ntarget (by cursor, the page at depth ${DEPTH.toLocaleString("en-US")} within ${TARGET}× of the first): ${held ? "holds" : "NOT held"}`);
}
