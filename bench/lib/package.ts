// everest as a user runs it: the package's built JavaScript (dist/, `npm run build`, which is
// tsc), not the sources through tsx. tsx transforms with esbuild's keepNames, which wraps every
// function a request creates in a defineProperty of its name; on Node that made everest's
// handler 25-30% dearer on GET item and PATCH than the package it ships (bench/README.md,
// "What each optimisation bought"). Bun and Deno would run the sources without that cost, but
// serve the same build, so every runtime measures what `npm install everest-api` gives.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The built package's directory, for a bench that imports more of it than builtEverest() gives. */
export const DIST = `${ROOT}dist/`;
let built = false;

/** Builds dist/ from the sources as they are now, once per harness process. */
export function buildPackage(): void {
  if (built) return;
  const run = spawnSync("npm", ["run", "--silent", "build"], { cwd: ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`npm run build failed:\n${run.stdout}${run.stderr}`);
  built = true;
}

/**
 * What the bench servers import from the built package (buildPackage() must have run), or from
 * another build of it (`dist`: a dist/ directory, to set one version against another).
 */
export async function builtEverest(dist = DIST): Promise<{
  createHandler: (typeof import("../../src/handler.ts"))["createHandler"];
  serve: (typeof import("../../adapters/node.ts"))["serve"];
  NodeFileAccess: (typeof import("../../adapters/node-files.ts"))["NodeFileAccess"];
}> {
  if (!existsSync(`${dist}src/handler.js`)) throw new Error("dist/ is missing: the bench harness builds it (npm run build)");
  const [handler, node, files] = await Promise.all([
    import(`${dist}src/handler.js`) as Promise<typeof import("../../src/handler.ts")>,
    import(`${dist}adapters/node.js`) as Promise<typeof import("../../adapters/node.ts")>,
    import(`${dist}adapters/node-files.js`) as Promise<typeof import("../../adapters/node-files.ts")>,
  ]);
  return { createHandler: handler.createHandler, serve: node.serve, NodeFileAccess: files.NodeFileAccess };
}
