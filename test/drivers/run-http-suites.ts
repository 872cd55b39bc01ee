// Runs the HTTP-level suite once per further driver (the plain `npm test` run covers memory):
// data-api through the in-process gateway always, mongodb and data-api over mongodb when
// MONGODB_URI is set. A driver that cannot run here is reported as skipped, never as passed.
import { spawnSync } from "node:child_process";

const SUITES = ["test/http", "test/auth"];
const drivers = ["data-api", "mongodb", "data-api+mongodb"];
let failed = false;
for (const driver of drivers) {
  if (driver.includes("mongodb") && !process.env.MONGODB_URI) {
    console.log(`skipped: HTTP suite on ${driver} (MONGODB_URI is not set)`);
    continue;
  }
  console.log(`HTTP suite on ${driver}`);
  const run = spawnSync("npx", ["vitest", "run", ...SUITES], { stdio: "inherit", env: { ...process.env, EVEREST_TEST_DB: driver } });
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
