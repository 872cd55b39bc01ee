// Servers side by side on one runtime, in short windows taken in turn, many rounds: each server's
// CPU time per request, the median of its rounds, and its ratio to the first server's in the same
// round (whose median is the figure to read on a machine that other work loads unevenly: a burst
// falls on neighbouring windows alike). What the rows of bench/README.md's issue 36 section were
// measured with, a change against the commit before it:
//   npx tsx bench/lib/side-by-side.ts --workload "GET item" --servers everest,lean
//   npx tsx bench/lib/side-by-side.ts --workload "POST one" --servers everest,everest:/tmp/old/dist --runtime deno
// A server is `everest`, `hand`, `lean` or `everest:<dist dir>` (another build of the package:
// `git worktree add /tmp/old <commit> && cd /tmp/old && npm ci && npm run build`).
import { load, probe } from "./load.ts";
import { pinning, pinSelf, runtimes, startServer, type Server } from "./proc.ts";
import { sampleDocs, WORKLOADS } from "./workloads.ts";
import type { Traffic } from "./load.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : fallback);
const workload = WORKLOADS.find((w) => w.name.startsWith(option("workload", "GET item")));
if (!workload) throw new Error(`no workload named ${option("workload", "")}…; choose from ${WORKLOADS.map((w) => w.name).join(", ")}`);
const runtime = runtimes().find((r) => r.name === option("runtime", "node"));
if (!runtime) throw new Error(`runtime ${option("runtime", "")} is not installed`);
const rounds = Number(option("rounds", "12"));
/** Seconds per window; a bulk workload's are twice as long. */
const window = Number(option("window", "0.6")) * (workload.batch ? 2 : 1);
const warmup = Number(option("warmup", "3"));

const cores = pinning();
if (cores) pinSelf(cores.generator);

interface Contender {
  name: string;
  server: Server;
  traffic: Traffic;
  cpu: number[];
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[(values.length - 1) >> 1]!;

const contenders: Contender[] = [];
try {
  for (const name of option("servers", "everest,lean").split(",")) {
    const [kind, dist] = name.split(":");
    const server = await startServer(runtime, [kind!, "--documents", "10000", ...(dist ? ["--dist", dist] : [])], cores?.server ?? null);
    contenders.push({ name, server, traffic: workload.traffic(await sampleDocs(server.url)), cpu: [] });
  }
  for (const { name, server, traffic } of contenders) {
    const answer = await probe(server.url, traffic);
    if (answer.status >= 300) throw new Error(`${name} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    await load(server.url, traffic, { connections: 10, duration: warmup });
  }
  for (let round = 0; round < rounds; round++) {
    for (const contender of contenders) {
      const before = contender.server.cpuSeconds();
      const measured = await load(contender.server.url, contender.traffic, { connections: 10, duration: window });
      const after = contender.server.cpuSeconds();
      if (before !== null && after !== null && measured.requests > 0) contender.cpu.push(((after - before) * 1e6) / measured.requests);
    }
  }
} finally {
  await Promise.all(contenders.map(({ server }) => server.stop()));
}
console.log(`${runtime.name}, ${workload.name}: server CPU µs per request, ${rounds} rounds of ${window} s in turn after ${warmup} s each`);
for (const { name, cpu } of contenders) {
  const ratios = cpu.map((value, i) => value / contenders[0]!.cpu[i]!);
  console.log(`${name.padEnd(28)} median ${median(cpu).toFixed(1).padStart(7)}  ÷ first, median of rounds ${median(ratios).toFixed(3)}  rounds ${cpu.map((v) => v.toFixed(0)).join(" ")}`);
}
