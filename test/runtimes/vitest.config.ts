// The HTTP-level conformance suite (test/http, and the journal lock across processes) against a real server on the runtime
// EVEREST_TEST_RUNTIME names; test/runtimes/run.ts runs it once per runtime.
import { defineConfig } from "vitest/config";
import { WHOLE_FILES } from "./in-process-only.ts";

/** Files that start and kill servers of their own, timed: a module graph each, as in vitest.config.ts. */
const OWN_PROCESSES = ["test/runtimes/journal-lock.test.ts", "test/runtimes/shutdown.test.ts", "test/runtimes/hosts.test.ts"];

export default defineConfig({
  test: {
    root: new URL("../../", import.meta.url).pathname,
    exclude: WHOLE_FILES,
    globalSetup: ["test/runtimes/global-setup.ts"],
    setupFiles: ["test/runtimes/setup.ts"],
    // A test's first request waits for its server to start (bounded in test/support/runtime.ts).
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two files at a time: their servers need the cores too.
    maxWorkers: 2,
    projects: [
      // The files of a worker share its modules, as in vitest.config.ts: here they hold no sources'
      // state, only clients of servers, so each file's import of them was time for nothing.
      { extends: true, test: { name: "shared", include: ["test/http/**/*.test.ts"], isolate: false } },
      { extends: true, test: { name: "own processes", include: OWN_PROCESSES } },
    ],
  },
});
