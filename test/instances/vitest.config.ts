// npm run test:instances: several server processes over one database (test/instances/), apart
// from `npm test` because they start servers: the sqlite ones need node:sqlite (SQLITE_NODE,
// .ci/run), the MongoDB ones MONGODB_URI, the Redis ones redis-server.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../../", import.meta.url).pathname,
    include: ["test/instances/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One file at a time: each starts servers that need the cores.
    fileParallelism: false,
  },
});
