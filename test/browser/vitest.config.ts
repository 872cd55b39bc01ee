// The headless-browser suite (npm run test:browser): real Chromium from Debian's `chromium`
// package, driven by playwright-core, against a live server. Kept out of `npm test`, which needs
// no browser.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../../", import.meta.url).pathname,
    include: ["test/browser/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
