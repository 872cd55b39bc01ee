import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Files that need a module graph of their own: they assert what happens before a module is loaded
// (no mongodb driver registered, src/drivers/registry.ts; the memory driver's lazily loaded parts),
// which another file's import would have done, or time processes and connections of their own
// (the mongodb driver's test of a client that never connects outlived its timeout after others).
const ISOLATED = ["test/runtimes/workers-startup.test.ts", "test/drivers/memory-lazy-load.test.ts", "test/runtimes/journal-lock.test.ts", "test/drivers/mongodb.test.ts"];

export default defineConfig({
  // `everest-api` imports (examples/, as a consumer writes them) resolve to the sources, through
  // the package's own exports map (package.json, the everest-source condition).
  resolve: { conditions: ["everest-source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["everest-source", ...defaultServerConditions] } },
  test: {
    // Need Chromium (npm run test:browser), and server processes over shared databases (npm run test:instances).
    exclude: ["test/browser/**", "test/instances/**", "**/node_modules/**"],
    testTimeout: 20_000,
    projects: [
      // The files of a worker share its modules: importing the sources anew for each of some 130
      // files was most of a run's time (the HTTP suites: 210 s isolated, 44 s shared). Every
      // test makes its own handler, so nothing a test relies on lives at module level.
      { extends: true, test: { name: "shared", include: ["test/**/*.test.ts"], exclude: [...ISOLATED, "test/browser/**", "test/instances/**", "**/node_modules/**"], isolate: false } },
      { extends: true, test: { name: "isolated", include: ISOLATED } },
    ],
  },
});
