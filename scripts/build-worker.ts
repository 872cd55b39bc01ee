// Builds the Cloudflare Workers bundle for a settings file: one ES module holding the settings,
// everest and the memory and data-api drivers. The native mongodb driver is replaced by a
// module that explains itself, since it needs TCP sockets and would add megabytes.
//   node --import tsx scripts/build-worker.ts <settings.json|settings.mjs> <outfile> [--no-minify]
// wrangler.toml runs this as its build command; serve:workers and bench/bundle.ts call buildWorker.
import { build, type BuildResult, type Plugin } from "esbuild";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WORKERS_ADAPTER = resolve(ROOT, "adapters/workers.ts");
const REGISTRY = resolve(ROOT, "src/drivers/registry.ts");

const WITHOUT_MONGODB = `export const createMongoDriver = () => {
  throw new Error("the mongodb driver needs TCP sockets, which Workers do not offer; use the data-api driver (DB_URI=https://…/endpoint/data/v1 and DATA_API_KEY)");
};`;

const withoutMongodb: Plugin = {
  name: "everest-without-mongodb",
  setup(build) {
    build.onResolve({ filter: /\/mongodb\/index\.ts$/ }, (args) =>
      resolve(args.resolveDir, args.path) === resolve(dirname(REGISTRY), "mongodb/index.ts") && args.importer === REGISTRY
        ? { path: "mongodb-driver", namespace: "everest-unavailable" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "everest-unavailable" }, () => ({ contents: WITHOUT_MONGODB, loader: "js" }));
  },
};

export interface WorkerBuildOptions {
  /** A JSON settings file, or an ES module that default-exports the settings. */
  settingsFile: string;
  outfile: string;
  /** Default true: what gets deployed. Off, stack traces stay readable. */
  minify?: boolean;
}

export function buildWorker(options: WorkerBuildOptions): Promise<BuildResult<{ metafile: true }>> {
  return build({
    stdin: {
      contents: [
        `import settings from ${JSON.stringify(resolve(options.settingsFile))};`,
        `import { createWorker } from ${JSON.stringify(WORKERS_ADAPTER)};`,
        "export default createWorker(settings);",
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "worker-entry.js",
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    // What wrangler resolves package exports with.
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    minify: options.minify ?? true,
    outfile: options.outfile,
    metafile: true,
    logLevel: "warning",
    plugins: [withoutMongodb],
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [settingsFile, outfile] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
  if (!settingsFile || !outfile) {
    console.error("usage: build-worker.ts <settings.json|settings.mjs> <outfile> [--no-minify]");
    process.exit(2);
  }
  await buildWorker({ settingsFile, outfile, minify: !process.argv.includes("--no-minify") });
}
