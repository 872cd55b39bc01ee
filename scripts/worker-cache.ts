// The modules `serve:workers` hands workerd for a JSON settings file, without bundling everest
// on every start. The runtime suite starts a server for each API a test makes, several hundred
// per run on workerd, and bundling took about half a second of each start's CPU. Everest's part
// of the bundle does not depend on the settings, so it is built once (scripts/build-worker.ts,
// with no settings), kept under node_modules/.cache and used again while every file esbuild read
// for it (its metafile lists them) still has the same content; the settings are an entry module
// of their own that calls it. A settings module (.mjs, .ts) imports code of its own and is still
// bundled whole, as before.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { version } from "esbuild";
import { loadSettingsFile } from "../adapters/settings-file.ts";
import { buildWorker, type WorkerModule } from "./build-worker.ts";

const CACHE = fileURLToPath(new URL("../node_modules/.cache/everest-worker/", import.meta.url));
const LIBRARY = "everest.js";
const BUILD_SCRIPT = fileURLToPath(new URL("./build-worker.ts", import.meta.url));
/** Builds older than this that the manifest no longer names are removed (a server reads its modules as it starts). */
const STALE_MS = 10 * 60_000;

interface Manifest {
  /** The directory under CACHE: a digest of esbuild's version and every input's content. */
  key: string;
  /** Absolute path of each input, and the digest of its content when built. */
  inputs: Record<string, string>;
  /** Names relative to the build's directory, the library first. */
  modules: Omit<WorkerModule, "path">[];
}

const digest = (bytes: Uint8Array | string) => createHash("sha1").update(bytes).digest("hex");

async function contentDigest(path: string): Promise<string | null> {
  return readFile(path).then(digest, () => null);
}

async function current(cache: string): Promise<Manifest | null> {
  const manifest = await readFile(join(cache, "manifest.json"), "utf8").then((text) => JSON.parse(text) as Manifest, () => null);
  if (!manifest) return null;
  const paths = Object.keys(manifest.inputs);
  const now = await Promise.all(paths.map(contentDigest));
  return paths.every((path, i) => now[i] === manifest.inputs[path]) ? manifest : null;
}

async function rebuild(cache: string): Promise<Manifest> {
  await mkdir(cache, { recursive: true });
  const dir = await mkdtemp(join(cache, "build-"));
  const { result, modules } = await buildWorker({ outfile: join(dir, LIBRARY), minify: false });
  // Metafile paths are relative to the working directory; stdin's entry is no file. The build's
  // options are an input too.
  const paths = [...Object.keys(result.metafile.inputs).filter((input) => input !== "<stdin>").map((input) => resolve(input)), BUILD_SCRIPT];
  const inputs = Object.fromEntries(await Promise.all(paths.map(async (path) => [path, (await contentDigest(path))!] as const)));
  const key = digest([version, ...Object.entries(inputs).sort().map((entry) => entry.join(" "))].join("\n"));
  // Another server may have built the same files at the same time: either copy will do.
  await rename(dir, join(cache, key)).catch(() => rm(dir, { recursive: true, force: true }));
  const manifest: Manifest = { key, inputs, modules: modules.map(({ path: _path, ...module }) => module) };
  const written = join(cache, `manifest-${process.pid}.json`);
  await writeFile(written, JSON.stringify(manifest));
  await rename(written, join(cache, "manifest.json"));
  await removeStale(cache, key);
  return manifest;
}

async function removeStale(cache: string, key: string): Promise<void> {
  for (const name of await readdir(cache)) {
    if (name === key || name === "manifest.json") continue;
    const path = join(cache, name);
    const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
  }
}

/** The modules in `dir` (entry `worker.js` first) serving the settings of a JSON file. */
export async function workerForJsonSettings(settingsFile: string, dir: string, cache = CACHE): Promise<WorkerModule[]> {
  // Read as every other runtime reads it, so a mistake in the file is reported the same way.
  const settings = await loadSettingsFile(settingsFile);
  let manifest = await current(cache);
  try {
    await cp(join(cache, manifest?.key ?? "-"), dir, { recursive: true });
  } catch {
    // None yet, out of date, or removed under us by a newer build.
    manifest = await rebuild(cache);
    await cp(join(cache, manifest.key), dir, { recursive: true });
  }
  const entry = join(dir, "worker.js");
  // JSON.parse, not an object literal: a "__proto__" key stays a key, as in the settings file.
  await writeFile(entry, `import { createWorker } from "./${LIBRARY}";\nexport default createWorker(JSON.parse(${JSON.stringify(JSON.stringify(settings))}));\n`);
  return [
    { name: "worker.js", path: entry, imports: [LIBRARY], dynamicImports: [] },
    ...manifest!.modules.map((module) => ({ ...module, path: join(dir, module.name) })),
  ];
}
