// npm run test:runtimes [-- node,deno,bun,workers]: the HTTP-level conformance suite once per
// runtime, one after the other (each run starts its own servers, which need the cores), then
// a line per runtime. Exits non-zero when any runtime failed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RUNTIMES, type Runtime } from "../../scripts/serve-command.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));

function chosen(): Runtime[] {
  const [list, ...rest] = process.argv.slice(2);
  if (rest.length > 0) throw new Error("usage: test:runtimes [node,deno,bun,workers]");
  if (!list) return [...RUNTIMES];
  const names = list.split(",");
  const unknown = names.filter((name) => !(RUNTIMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown runtime ${unknown.join(", ")}; choose from ${RUNTIMES.join(", ")}`);
  return names as Runtime[];
}

function suite(runtime: Runtime): Promise<number> {
  console.log(`\n── ${runtime} ──`);
  const child = spawn(process.execPath, [VITEST, "run", "--config", "test/runtimes/vitest.config.ts"], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, EVEREST_TEST_RUNTIME: runtime },
  });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ? 1 : (code ?? 1))));
}

const results: Array<{ runtime: Runtime; code: number; seconds: number }> = [];
for (const runtime of chosen()) {
  const start = performance.now();
  const code = await suite(runtime);
  results.push({ runtime, code, seconds: (performance.now() - start) / 1000 });
}
console.log("\nconformance suite by runtime:");
for (const { runtime, code, seconds } of results) console.log(`  ${runtime.padEnd(8)} ${code === 0 ? "passed" : "FAILED"}  ${seconds.toFixed(0)}s`);
process.exitCode = results.some(({ code }) => code !== 0) ? 1 : 0;
