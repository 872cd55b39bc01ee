// Loads settings from a JSON file or an ES module whose default export is the settings object.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Settings } from "../src/settings/types.ts";

export async function loadSettingsFile(path: string): Promise<Settings> {
  const absolute = resolve(path);
  if (/\.json$/i.test(absolute)) return JSON.parse(await readFile(absolute, "utf8")) as Settings;
  const module = (await import(pathToFileURL(absolute).href)) as { default?: Settings };
  if (!module.default || typeof module.default !== "object") {
    throw new Error(`${path}: an ES module settings file must default-export the settings object`);
  }
  return module.default;
}
