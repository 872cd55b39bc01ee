// The Node adapter against @hono/node-server, each serving the same two handlers (everest's and
// the hand-written equivalent's): server CPU time per request, which is what decides whether
// everest's adapter is worth keeping. Servers and pinning as in http.ts; the servers take turns.
// Each workload is measured in rounds that alternate between the servers; the least CPU of a
// server's rounds is its figure (the one least disturbed by the machine's other work).
//   npx tsx bench/adapters.ts [--quick] [--workloads "GET item,POST one"] [--rounds 3]
import { load, probe } from "./lib/load.ts";
import { pinning, pinSelf, runtimes, startServer, type Server } from "./lib/proc.ts";
import { fmt, table } from "./lib/table.ts";
import { sampleDocs, WORKLOADS, type SampleDoc } from "./lib/workloads.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const chosen = argv.includes("--workloads") ? argv[argv.indexOf("--workloads") + 1]!.split(",") : ["GET item", "POST one", "PATCH"];
const workloads = WORKLOADS.filter((w) => chosen.some((prefix) => w.name.startsWith(prefix)));
const PLAN = quick ? { warmup: 0.5, duration: 1 } : { warmup: 1, duration: 2 };
const DOCUMENTS = 10_000;
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : quick ? 1 : 3;

const cores = pinning();
if (cores) pinSelf(cores.generator);

const CONTENDERS = [
  { handler: "everest", adapter: "everest" },
  { handler: "everest", adapter: "hono" },
  { handler: "hand", adapter: "everest" },
  { handler: "hand", adapter: "hono" },
] as const;

const node = runtimes().find((r) => r.name === "node")!;
const servers: Array<{ server: Server; sample: SampleDoc[] }> = [];
try {
  for (const { handler, adapter } of CONTENDERS) {
    const server = await startServer(node, [handler, "--documents", String(DOCUMENTS), "--adapter", adapter], cores?.server ?? null);
    servers.push({ server, sample: await sampleDocs(server.url) });
  }
  const rows: string[][] = [];
  for (const workload of workloads) {
    const cpu: Array<number | null> = servers.map(() => null);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { server, sample }] of servers.entries()) {
        const traffic = workload.traffic(sample);
        const answer = await probe(server.url, traffic);
        if (answer.status >= 300) continue;
        await load(server.url, traffic, { connections: 10, duration: PLAN.warmup });
        const before = server.cpuSeconds();
        const m = await load(server.url, traffic, { connections: 10, duration: PLAN.duration });
        const after = server.cpuSeconds();
        if (before === null || after === null || m.requests === 0) continue;
        const us = ((after - before) * 1e6) / m.requests;
        cpu[i] = Math.min(cpu[i] ?? Infinity, us);
      }
    }
    const us = (v: number | null) => (v === null ? "n/a" : fmt.rps(v));
    const ratio = (a: number | null, b: number | null) => (a && b ? fmt.ratio(a / b) : "n/a");
    rows.push([workload.name, us(cpu[0]!), us(cpu[1]!), ratio(cpu[1]!, cpu[0]!), us(cpu[2]!), us(cpu[3]!), ratio(cpu[3]!, cpu[2]!)]);
  }
  console.log(`## Node adapters: server CPU µs per request (least of ${ROUNDS} alternating rounds of ${PLAN.warmup}s warm-up + ${PLAN.duration}s, 10 connections, ${DOCUMENTS.toLocaleString("en-US")} documents)\n`);
  console.log(
    table(["workload", "everest on everest's adapter", "everest on @hono/node-server", "hono ÷ ours", "hand on everest's adapter", "hand on @hono/node-server", "hono ÷ ours"], rows),
  );
} finally {
  await Promise.all(servers.map(({ server }) => server.stop()));
}
