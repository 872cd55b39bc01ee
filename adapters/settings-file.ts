// Loads settings from a JSON file or an ES module whose default export is the settings object
// (.mjs, .js, or .ts/.mts where the runtime strips types: Node ≥ 22.6, Deno, Bun). Every way a
// file can fail to load ends in a message that names the file and what to change.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Settings } from "../src/settings/types.ts";

const TYPESCRIPT = /\.[mc]?ts$/i;

/** `file:line:column: problem` for the first syntax error of a JSON text that JSON.parse refused. */
async function jsonSyntaxError(path: string, text: string): Promise<Error> {
  const { parse, printParseErrorCode } = await import("jsonc-parser");
  const errors: import("jsonc-parser").ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return new Error(`${path}: not valid JSON`);
  const before = text.slice(0, first.offset).split("\n");
  const line = before.length;
  const column = before[before.length - 1]!.length + 1;
  return new Error(`${path}:${line}:${column}: not valid JSON (${printParseErrorCode(first.error)})`);
}

function typeStrippingHelp(path: string): string {
  return (
    `${path}: this runtime cannot load TypeScript settings. Run with Node ≥ 22.6 ` +
    "(before 23.6 with NODE_OPTIONS=--experimental-strip-types), Deno or Bun, " +
    "or write the settings as settings.json or settings.mjs"
  );
}

export async function loadSettingsFile(path: string): Promise<Settings> {
  const absolute = resolve(path);
  if (/\.json$/i.test(absolute)) {
    const text = await readFile(absolute, "utf8");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw await jsonSyntaxError(path, text);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error(`${path}: the settings must be a JSON object ({"DOMAIN": {…}, …}), not ${Array.isArray(parsed) ? "a list" : JSON.stringify(parsed)}`);
    }
    return parsed as Settings;
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (TYPESCRIPT.test(absolute) && code === "ERR_UNKNOWN_FILE_EXTENSION") throw new Error(typeStrippingHelp(path), { cause: error });
    // Node strips types, but never from a file under node_modules (a package's own examples).
    if (TYPESCRIPT.test(absolute) && code === "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING") {
      throw new Error(`${path}: Node does not load TypeScript from under node_modules; copy the settings file into your project and serve the copy`, { cause: error });
    }
    // A syntax error or a throw while the module runs: say which file, and how to see where.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const commonJs = error instanceof SyntaxError && /\bexport\b|\bimport\b/.test(error.message) && /\.[jt]s$/i.test(absolute);
    const hint = commonJs ? ' (in a project whose package.json does not say "type": "module", name it .mjs or .mts)' : "";
    throw new Error(`${path}: the settings module failed to load: ${reason}${hint}`, { cause: error });
  }
  const settings = module.default;
  if (!settings || typeof settings !== "object") {
    const named = Object.keys(module).filter((key) => key !== "default");
    const hint = named.length > 0 ? ` (it exports ${named.map((n) => `'${n}'`).join(", ")}; e.g. \`export default ${named[0]};\`)` : "";
    throw new Error(`${path}: a settings module must default-export the settings object${hint}`);
  }
  return settings as Settings;
}
