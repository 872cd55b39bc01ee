// Bundle size: the production Workers bundle of the example (examples/settings.json with the
// memory and data-api drivers, no native mongodb driver), minified, raw and gzip. The bundle is
// an entry module and chunks it imports on demand (scripts/build-worker.ts), so it prints each
// module, then what a deployment loads: at start (the entry and what it imports), the example
// as deployed (start plus the memory driver, loaded by the first request), which is what the
// 100 KB gzip target is checked against, and for comparison the data-api deployment and the
// whole upload. Then what takes the room in the example deployment, by package and src/ directory.
//   npx tsx bench/bundle.ts
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { buildWorker, loadedWith, type WorkerModule } from "../scripts/build-worker.ts";
import { ROOT } from "./lib/proc.ts";
import { table } from "./lib/table.ts";

const TARGET_GZIP = 100 * 1024;
const SHOWN = 12;

/** What each lazily loaded module is for, by the source module it stands for. */
const ON_DEMAND: Record<string, string> = {
  "src/drivers/memory/index.ts": "memory driver (the example's; first request)",
  "src/drivers/data-api/index.ts": "data-api driver (DB_URI https://…)",
  "src/validation/jsonschema.ts": "validationEngine: \"jsonschema\"",
  "src/drivers/memory/aggregation.ts": "pipelines and $expr on the memory driver",
  "src/drivers/memory/turf.ts": "geo operators on the memory driver",
};

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** `node_modules/<package>` or `src/<directory>`, what an input counts towards. */
function owner(input: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (pkg) return pkg[1]!;
  const own = /(?:^|\/)(src\/[^/]+|adapters|examples)(?:\/|$)/.exec(input);
  return own ? own[1]! : input;
}

const dir = mkdtempSync(join(tmpdir(), "everest-bundle-"));
try {
  const { result, modules } = await buildWorker({ settingsFile: join(ROOT, "examples/settings.json"), outfile: join(dir, "worker.js") });
  const sizes = new Map(
    modules.map((module) => {
      const code = readFileSync(module.path);
      return [module.name, { raw: code.byteLength, gzip: gzipSync(code).byteLength }];
    }),
  );
  const entry = modules[0]!;
  const lazy = (source: string) => modules.find((module) => module.entryPoint === source);

  const loaded = (...roots: WorkerModule[]) => loadedWith(modules, ...roots);
  const total = (set: WorkerModule[]) =>
    set.reduce((sum, module) => ({ raw: sum.raw + sizes.get(module.name)!.raw, gzip: sum.gzip + sizes.get(module.name)!.gzip }), { raw: 0, gzip: 0 });

  const atStart = new Set(loaded(entry).map((module) => module.name));
  const importers = (module: WorkerModule) => modules.filter((other) => other.imports.includes(module.name)).map((other) => (other === entry ? "entry" : other.name.replace(/^.*\/|-[A-Z0-9]+\.js$/g, "")));
  const role = (module: WorkerModule) =>
    module === entry
      ? "entry, at start"
      : module.entryPoint
        ? `on demand: ${ON_DEMAND[module.entryPoint] ?? module.entryPoint}`
        : atStart.has(module.name)
          ? "at start (imported by the entry)"
          : `with ${importers(module).join(", ")}`;

  console.log("## Workers bundle (examples/settings.json; memory + data-api drivers; esbuild, minified, code-split)\n");
  console.log("Each module (gzip: the module compressed on its own):\n");
  console.log(table(["module", "loaded", "raw", "gzip"], modules.map((module) => [module.name, role(module), kb(sizes.get(module.name)!.raw), kb(sizes.get(module.name)!.gzip)])));

  const memory = lazy("src/drivers/memory/index.ts");
  const dataApi = lazy("src/drivers/data-api/index.ts");
  if (!memory || !dataApi) throw new Error("the build has no separate memory or data-api driver module");
  const example = loaded(entry, memory);
  const memoryExtras = ["src/drivers/memory/aggregation.ts", "src/drivers/memory/turf.ts"].map(lazy).filter((module) => module !== undefined);
  const deployments: Array<[string, WorkerModule[], boolean]> = [
    ["at start: the entry and its imports", loaded(entry), false],
    ["**example as deployed**: at start + memory driver", example, true],
    ["example once it has run a pipeline or $expr and a geo query", loaded(entry, memory, ...memoryExtras), false],
    ["data-api deployment: at start + data-api driver", loaded(entry, dataApi), false],
    ["whole upload: every module", modules, false],
  ];
  console.log("\nWhat a deployment loads (sums of the modules above):\n");
  console.log(
    table(
      ["loaded", "modules", "raw", "gzip", "target (gzip)"],
      deployments.map(([label, set, target]) => {
        const { raw, gzip } = total(set);
        return [label, String(set.length), kb(raw), kb(gzip), target ? `≤ ${kb(TARGET_GZIP)} ${gzip <= TARGET_GZIP ? "met" : "MISSED"}` : "–"];
      }),
    ),
  );

  const parts = new Map<string, number>();
  const exampleOutputs = new Set(example.map((module) => module.path));
  for (const [output, { inputs }] of Object.entries(result.metafile.outputs)) {
    // Output paths are relative to the working directory, as buildWorker resolves them.
    if (!exampleOutputs.has(resolve(output))) continue;
    for (const [input, { bytesInOutput }] of Object.entries(inputs)) parts.set(owner(input), (parts.get(owner(input)) ?? 0) + bytesInOutput);
  }
  const exampleRaw = total(example).raw;
  const largest = [...parts].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  console.log(`\nLargest parts of the example as deployed (minified bytes before gzip, ${SHOWN} of ${parts.size}):\n`);
  console.log(table(["part", "bytes", "share"], largest.map(([name, bytes]) => [name, kb(bytes), `${((bytes / exampleRaw) * 100).toFixed(0)}%`])));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
