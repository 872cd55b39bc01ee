// Bundle size: the production Workers bundle of the example (examples/settings.json with the
// memory and data-api drivers, no native mongodb driver), minified, raw and gzip, against the
// 100 KB gzip target; then what takes the room, by package and by src/ directory.
//   npx tsx bench/bundle.ts
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { buildWorker } from "../scripts/build-worker.ts";
import { ROOT } from "./lib/proc.ts";
import { table } from "./lib/table.ts";

const TARGET_GZIP = 100 * 1024;
const SHOWN = 12;

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
  const outfile = join(dir, "worker.js");
  const { metafile } = await buildWorker({ settingsFile: join(ROOT, "examples/settings.json"), outfile });
  const code = readFileSync(outfile);
  const gzip = gzipSync(code).byteLength;
  console.log("## Workers bundle (examples/settings.json; memory + data-api drivers; esbuild, minified)\n");
  console.log(table(["bundle", "raw", "gzip", "target (gzip)"], [["worker.js", kb(code.byteLength), kb(gzip), `≤ ${kb(TARGET_GZIP)} ${gzip <= TARGET_GZIP ? "met" : "MISSED"}`]]));

  const sizes = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(Object.values(metafile.outputs)[0]!.inputs)) {
    sizes.set(owner(input), (sizes.get(owner(input)) ?? 0) + bytesInOutput);
  }
  const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  console.log(`\nLargest parts (minified bytes before gzip, ${SHOWN} of ${sizes.size}):\n`);
  console.log(table(["part", "bytes", "share"], largest.map(([name, bytes]) => [name, kb(bytes), `${((bytes / code.byteLength) * 100).toFixed(0)}%`])));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
