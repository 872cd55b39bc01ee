// One directory per run for the servers' settings files and process ids; at the end every
// server still recorded there (a test file that crashed or timed out) is stopped.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { signalGroup } from "../support/runtime.ts";

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "everest-runtime-"));
  mkdirSync(join(dir, "pids"));
  project.provide("runtimeServersDir", dir);
  return () => {
    for (const name of readdirSync(join(dir, "pids"))) signalGroup(Number(readFileSync(join(dir, "pids", name), "utf8")), "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
}
