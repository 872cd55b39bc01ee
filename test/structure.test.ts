// The module structure docs/architecture.md describes: no import cycle in src/ or adapters/
// (type-only imports count: they tie the modules' designs together just the same), and no
// source file over 400 lines.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseCircular, parseDependencyTree } from "dpdm";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const SOURCES = ["src/**/*.ts", "adapters/**/*.ts"];
const MAX_LINES = 400;

/** Import cycles among the files `patterns` match under `cwd`, as lists of paths relative to it. */
async function importCycles(cwd: string, patterns: string[]): Promise<string[][]> {
  // transform: false keeps `import type` edges, which a transpiled graph would drop.
  const tree = await parseDependencyTree(patterns, { cwd, context: cwd, transform: false, skipDynamicImports: false });
  return parseCircular(tree).map((cycle) => cycle.map((file) => relative(cwd, join(cwd, file))));
}

describe("module structure", () => {
  it("has no import cycle in src/ and adapters/", async () => {
    expect(await importCycles(ROOT, SOURCES)).toEqual([]);
  }, 60_000);

  it("has no source file over 400 lines", async () => {
    const tree = await parseDependencyTree(SOURCES, { cwd: ROOT, context: ROOT, transform: false });
    const files = Object.keys(tree).filter((file) => /^(src|adapters)\//.test(file));
    expect(files.length).toBeGreaterThan(50);
    const long: string[] = [];
    for (const file of files) {
      const lines = (await readFile(join(ROOT, file), "utf8")).split("\n").length - 1;
      if (lines > MAX_LINES) long.push(`${file}: ${lines} lines`);
    }
    expect(long).toEqual([]);
  }, 60_000);

  describe("the cycle check itself", () => {
    let dir: string;
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("finds a cycle closed by a type-only import", async () => {
      dir = await mkdtemp(join(tmpdir(), "everest-cycle-"));
      await writeFile(join(dir, "a.ts"), 'import { b } from "./b.ts";\nexport interface A { b: typeof b }\n');
      await writeFile(join(dir, "b.ts"), 'import type { A } from "./a.ts";\nexport const b = (a: A) => a;\n');
      await writeFile(join(dir, "c.ts"), 'import { b } from "./b.ts";\nexport const c = b;\n');
      const cycles = await importCycles(dir, ["*.ts"]);
      expect(cycles.map((cycle) => [...cycle].sort())).toEqual([["a.ts", "b.ts"]]);
    });
  });
});
