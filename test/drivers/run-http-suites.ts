// Runs the HTTP-level suite once per further driver (the plain `npm test` run covers memory):
// data-api through the in-process gateway always, mongodb and data-api over mongodb when
// MONGODB_URI is set, sqlite on a Node with node:sqlite (this one, or the one SQLITE_NODE
// names when this Node is older than 22.5). A driver that cannot run here is reported as
// skipped, never as passed.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const SUITES = ["test/http", "test/auth"];
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));
const drivers = ["data-api", "mongodb", "data-api+mongodb", "sqlite"];

/** The Node that runs a driver's suite, or why none can. */
async function nodeFor(driver: string): Promise<string | { skipped: string }> {
  if (driver.includes("mongodb") && !process.env.MONGODB_URI) return { skipped: "MONGODB_URI is not set" };
  if (driver !== "sqlite") return process.execPath;
  const specifier = "node:sqlite";
  const here = await import(specifier).then(() => true, () => false);
  if (here) return process.execPath;
  return process.env.SQLITE_NODE || { skipped: `Node ${process.versions.node} has no node:sqlite and SQLITE_NODE names no newer Node` };
}

let failed = false;
for (const driver of drivers) {
  const node = await nodeFor(driver);
  if (typeof node !== "string") {
    console.log(`skipped: HTTP suite on ${driver} (${node.skipped})`);
    continue;
  }
  console.log(`HTTP suite on ${driver}`);
  const run = spawnSync(node, [VITEST, "run", ...SUITES], { stdio: "inherit", env: { ...process.env, EVEREST_TEST_DB: driver } });
  if (run.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
