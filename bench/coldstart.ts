// Cold start: from spawning `npm run serve:<runtime>`'s command (examples/settings.json on the
// memory driver) to the first 200, for GET /people, on Node, Deno and Bun; the median of a few
// runs and their range. Node's figure includes tsx compiling the TypeScript on the way in.
//   npx tsx bench/coldstart.ts [--quick]
import { spawn } from "node:child_process";
import { READY_LINE, serveCommand, type Runtime } from "../scripts/serve-command.ts";
import { ROOT } from "./lib/proc.ts";
import { fmt, table } from "./lib/table.ts";

const RUNS = process.argv.includes("--quick") ? 3 : 7;
const LIMIT_MS = 60_000;
const MEASURED: Runtime[] = ["node", "deno", "bun"];

/** Milliseconds from spawn to the first 200. */
async function coldStart(runtime: Runtime): Promise<number> {
  const [program, ...args] = serveCommand(runtime);
  const started = performance.now();
  const child = spawn(program!, [...args, "examples/settings.json", "--port", "0"], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line within ${LIMIT_MS / 1000}s\n${output}`)), LIMIT_MS);
      const read = (chunk: Buffer) => {
        output += chunk;
        const url = READY_LINE.exec(output)?.[1];
        if (url) {
          clearTimeout(timer);
          resolve(url);
        }
      };
      child.stdout!.on("data", read);
      child.stderr!.on("data", read);
      child.once("exit", (code) => reject(new Error(`exited (${code}) before it was ready\n${output}`)));
    });
    const response = await fetch(`${base}/people`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET /people answered ${response.status}`);
    return performance.now() - started;
  } finally {
    child.removeAllListeners("exit");
    const exited = new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
    process.kill(-child.pid!, "SIGTERM");
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const rows: string[][] = [];
for (const runtime of MEASURED) {
  try {
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) times.push(await coldStart(runtime));
    rows.push([runtime, fmt.ms(median(times)), `${fmt.ms(Math.min(...times))}–${fmt.ms(Math.max(...times))}`]);
  } catch (error) {
    rows.push([runtime, "failed", (error instanceof Error ? error.message : String(error)).split("\n")[0]!]);
  }
}
console.log(`## Cold start: spawn to the first 200 (serve:<runtime> examples/settings.json, GET /people; median of ${RUNS})\n`);
console.log(table(["runtime", "median ms", "range ms"], rows));
