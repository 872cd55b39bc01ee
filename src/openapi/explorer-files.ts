// The explorer's static files, read from the installed swagger-ui-dist package (Node, Deno and
// Bun all resolve packages and offer node:fs). Bundles leave this module out (src/openapi/
// explorer.ts imports it by a computed specifier): workerd has no node_modules to read.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

let directory: string | undefined;

export async function readExplorerFile(name: string): Promise<Uint8Array | null> {
  directory ??= dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  try {
    return new Uint8Array(await readFile(join(directory, name)));
  } catch {
    return null;
  }
}
