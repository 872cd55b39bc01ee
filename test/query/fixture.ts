// The reference settings (test/fixtures/reference/settings.json, which the recorded Eve exchanges
// were served with), normalised, optionally adjusted per test.
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { HttpError } from "../../src/errors.ts";
import { normalizeSettings, type Config, type Resource } from "../../src/settings/normalize.ts";
import type { Settings } from "../../src/settings/types.ts";
import { REFERENCE_DIR } from "../support/exchanges.ts";

export function referenceSettings(): Settings {
  return JSON.parse(readFileSync(REFERENCE_DIR + "settings.json", "utf8")) as Settings;
}

/** The reference config after `adjust` edited a copy of its settings. */
export function config(adjust: (settings: Settings) => void = () => {}): Config {
  const settings = referenceSettings();
  adjust(settings);
  return normalizeSettings(settings);
}

export function resource(cfg: Config, name: string): Resource {
  const found = cfg.DOMAIN[name];
  if (!found) throw new Error(`no resource ${name}`);
  return found;
}

/** Asserts that `run` fails with a 400 HttpError (never another exception) and returns it. */
export function expect400(run: () => unknown): HttpError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return error as HttpError;
  }
  throw new Error("expected a 400, got a result");
}

/** expect400 for a parse that may be a promise (`where` in the Python syntax). */
export async function rejects400(run: () => unknown): Promise<HttpError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return error as HttpError;
  }
  throw new Error("expected a 400, got a result");
}
