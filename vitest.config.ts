import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // `everest-api` imports (examples/, as a consumer writes them) resolve to the sources, through
  // the package's own exports map (package.json, the everest-source condition).
  resolve: { conditions: ["everest-source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["everest-source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Needs Chromium: npm run test:browser.
    exclude: ["test/browser/**", "**/node_modules/**"],
    testTimeout: 20_000,
  },
});
