import { buildWorker, loadedWith } from "./scripts/build-worker.ts";
import { mkdtemp, readFile } from "node:fs/promises"; import { tmpdir } from "node:os"; import { join } from "node:path"; import { gzipSync } from "node:zlib";
const dir = await mkdtemp(join(tmpdir(), "bs-"));
const build = await buildWorker({ settingsFile: "examples/settings.json", outfile: join(dir, "worker.js") });
const lazy = build.modules.find((m: any) => m.entryPoint === "src/drivers/memory/index.ts")!;
const ex = loadedWith(build.modules, build.modules[0]!, lazy);
const sizes = await Promise.all(ex.map(async (m: any) => gzipSync(await readFile(m.path)).byteLength));
console.log(sizes.reduce((a, b) => a + b, 0));
