// Builds the Cloudflare Workers bundle for a settings file: an entry module holding the
// settings and everest, and beside it, in `<name>-chunks/`, the ES modules it imports only when
// a deployment needs them (the memory and data-api drivers, the jsonschema validation engine,
// the geometry behind the memory driver's geo operators). Workers load several ES modules;
// wrangler.toml uploads them all (its module rules) and serve-workers lists them in the workerd
// config. The native mongodb driver is not among them: the registry imports it in a way
// bundlers leave out (src/drivers/registry.ts).
//   node --import tsx scripts/build-worker.ts <settings.json|settings.mjs> <outfile> [--no-minify]
// wrangler.toml runs this as its build command; serve:workers and bench/bundle.ts call buildWorker.
import { build, type BuildResult, type Metafile } from "esbuild";
import { rm } from "node:fs/promises";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WORKERS_ADAPTER = resolve(ROOT, "adapters/workers.ts");
export interface WorkerBuildOptions {
  /**
   * A JSON settings file, or an ES module that default-exports the settings. Without one, the
   * entry exports createWorker for an entry of its own to call (scripts/worker-cache.ts).
   */
  settingsFile?: string;
  /** The entry module; the chunks go to `<its name without .js>-chunks/` beside it. */
  outfile: string;
  /** Default true: what gets deployed. Off, stack traces stay readable. */
  minify?: boolean;
}

export interface WorkerModule {
  /** Path relative to the entry's directory, which is also its module name on Workers. */
  name: string;
  /** Absolute path of the file written. */
  path: string;
  /** Modules it imports as it loads, and those it imports on demand (names as above). */
  imports: string[];
  dynamicImports: string[];
  /** The source module a lazily loaded chunk stands for (`src/drivers/memory/index.ts`), if any. */
  entryPoint?: string;
}

export interface WorkerBuild {
  result: BuildResult<{ metafile: true }>;
  /** The entry first, then every chunk. */
  modules: WorkerModule[];
}

/** The directory of an entry's chunks, a name no other file of a deployment is likely to have. */
export const chunkDirectory = (outfile: string) => `${basename(outfile, extname(outfile))}-chunks`;

export async function buildWorker(options: WorkerBuildOptions): Promise<WorkerBuild> {
  const outfile = resolve(options.outfile);
  const outdir = dirname(outfile);
  const chunks = chunkDirectory(outfile);
  // Chunk names carry content hashes; those of an earlier build would otherwise be uploaded too.
  await rm(join(outdir, chunks), { recursive: true, force: true });
  const result = await build({
    stdin: {
      contents: options.settingsFile
        ? [
            `import settings from ${JSON.stringify(resolve(options.settingsFile))};`,
            `import { createWorker } from ${JSON.stringify(WORKERS_ADAPTER)};`,
            "export default createWorker(settings);",
          ].join("\n")
        : `export { createWorker } from ${JSON.stringify(WORKERS_ADAPTER)};`,
      resolveDir: ROOT,
      sourcefile: "worker-entry.js",
      loader: "js",
    },
    bundle: true,
    format: "esm",
    // Dynamic imports become modules of their own, loaded when first needed.
    splitting: true,
    platform: "browser",
    // What wrangler resolves package exports with.
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    minify: options.minify ?? true,
    outdir,
    entryNames: basename(outfile, extname(outfile)),
    chunkNames: `${chunks}/[name]-[hash]`,
    metafile: true,
    // Paths as the project sees them, not where a linked node_modules really lives: those order
    // the modules in the chunks, and a copy with node_modules linked in otherwise bundled 16 bytes
    // more (gzip) than the clone it was copied from.
    preserveSymlinks: true,
    logLevel: "warning",
  });
  return { result, modules: workerModules(result.metafile, outdir, outfile) };
}

/** The modules loaded with `roots`: each, and what it imports as it loads, transitively. */
export function loadedWith(modules: WorkerModule[], ...roots: WorkerModule[]): WorkerModule[] {
  const byName = new Map(modules.map((module) => [module.name, module]));
  const seen = new Set<string>();
  const visit = (module: WorkerModule) => {
    if (seen.has(module.name)) return;
    seen.add(module.name);
    for (const name of module.imports) visit(byName.get(name)!);
  };
  roots.forEach(visit);
  return modules.filter((module) => seen.has(module.name));
}

function workerModules(metafile: Metafile, outdir: string, outfile: string): WorkerModule[] {
  const name = (output: string) => relative(outdir, resolve(output)).split("\\").join("/");
  const modules = Object.entries(metafile.outputs)
    .filter(([output]) => output.endsWith(".js"))
    .map(([output, meta]): WorkerModule => ({
      name: name(output),
      path: resolve(output),
      imports: meta.imports.filter((i) => i.kind === "import-statement" && !i.external).map((i) => name(i.path)),
      dynamicImports: meta.imports.filter((i) => i.kind === "dynamic-import" && !i.external).map((i) => name(i.path)),
      ...(meta.entryPoint && resolve(output) !== outfile ? { entryPoint: meta.entryPoint } : {}),
    }));
  return modules.sort((a, b) => Number(b.path === outfile) - Number(a.path === outfile) || a.name.localeCompare(b.name));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [settingsFile, outfile] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
  if (!settingsFile || !outfile) {
    console.error("usage: build-worker.ts <settings.json|settings.mjs> <outfile> [--no-minify]");
    process.exit(2);
  }
  await buildWorker({ settingsFile, outfile, minify: !process.argv.includes("--no-minify") });
}
