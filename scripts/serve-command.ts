// The command line behind `npm run serve:<runtime>`, read from package.json and ready to spawn
// without npm in between (npm would sit between the caller and the server, and signals sent to
// it do not reach the server). The test harness and the cold-start bench run servers with it, so
// they run exactly what users run.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const RUNTIMES = ["node", "deno", "bun", "workers"] as const;
export type Runtime = (typeof RUNTIMES)[number];

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Program and arguments of `serve:<runtime>`; append `<settings file> --port N`. */
export function serveCommand(runtime: Runtime): string[] {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const script = scripts[`serve:${runtime}`];
  if (!script) throw new Error(`package.json has no serve:${runtime} script`);
  const [program, ...args] = script.trim().split(/\s+/);
  const local = join(ROOT, "node_modules/.bin", program!);
  return [program === "node" ? process.execPath : existsSync(local) ? local : program!, ...args];
}

/** The line every serve command prints once it listens; group 1 is the base URL. */
export const READY_LINE = /^everest serving .*? at (http:\/\/\S+?)\/?(?: from .*)?$/m;
