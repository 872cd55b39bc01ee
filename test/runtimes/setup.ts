// Runs in every conformance test file on a runtime: skips the tests in-process-only.ts lists
// (with its reason), and after the file stops the servers it started, closed by its tests or not.
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeEach } from "vitest";
import { stopRuntimeServers } from "../support/runtime.ts";
import { IN_PROCESS_ONLY, isInProcessOnly } from "./in-process-only.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

beforeEach((context) => {
  const { task } = context;
  const names = [task.name];
  for (let suite = task.suite; suite && suite !== task.file; suite = suite.suite) names.unshift(suite.name);
  const file = relative(ROOT, task.file.filepath).split("\\").join("/");
  if (isInProcessOnly(file, names.join(" > "))) context.skip(`in-process only: ${IN_PROCESS_ONLY[file]!.why}`);
});

afterAll(stopRuntimeServers);
