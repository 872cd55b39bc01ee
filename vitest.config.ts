import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // `everest-api` imports (examples/, as a consumer writes them) resolve to the sources, through
  // the package's own exports map (package.json, the everest-source condition).
  resolve: { conditions: ["everest-source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["everest-source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Need Chromium (npm run test:browser), and server processes over shared databases (npm run test:instances).
    exclude: ["test/browser/**", "test/instances/**", "**/node_modules/**"],
    testTimeout: 20_000,
  },
});
