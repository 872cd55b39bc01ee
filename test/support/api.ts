// How the HTTP-level tests reach everest. Every test file asks for an API with its settings and
// speaks HTTP to it; where that API runs (in-process on the memory driver today, on other
// drivers and runtimes later) is decided here, so the suite itself is never forked.
import { createHandler, type Handler } from "../../src/handler.ts";
import type { HandlerOptions } from "../../src/app.ts";
import type { Settings } from "../../src/settings/types.ts";
import { testDriver } from "./drivers.ts";
import { fileURLToPath } from "node:url";
import { runtimeApi, type SettingsModule } from "./runtime.ts";

export interface TestApi {
  /** Sends a request to a path relative to the API root ("/people?where=…"). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  patch(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  put(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  delete(path: string, headers?: Record<string, string>): Promise<Response>;
  /** The in-process handler, when the API runs in-process (hooks, internal access). */
  handler: Handler;
  close(): Promise<void>;
}

const ORIGIN = "http://everest.test";

/**
 * A deep copy of the plain data, so a test's settings object is never changed under it; auth
 * classes and instances, hooks and other code are kept as they are (structuredClone refuses
 * functions and strips prototypes).
 */
function cloneSettings<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneSettings) as T;
  if (value && typeof value === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cloneSettings(v)])) as T;
  }
  return value;
}

/** Settings made by moduleSettings: the module they come from, and what the test changed. */
const fromModules = new WeakMap<Settings, SettingsModule>();

/**
 * Settings a module default-exports (auth classes, field_access hooks: code, which JSON cannot
 * carry), with plain overrides. In-process they are used as they are; a server on another
 * runtime loads the module itself, as a user's `everest serve settings.ts` does.
 */
export function moduleSettings(base: Settings, moduleUrl: URL, overrides: Settings = {}): Settings {
  const settings = { ...base, ...overrides };
  fromModules.set(settings, { path: fileURLToPath(moduleUrl), overrides });
  return settings;
}

export function testApi(given: Settings, options?: HandlerOptions): TestApi {
  // Eve's settings name their MongoDB database (the reference settings' DB_NAME), which selects
  // the mongodb driver; the suite runs where EVEREST_TEST_DB says, the embedded store by default.
  const settings: Settings = { DB_URI: "memory", ...given };
  // ── npm run test:runtimes: EVEREST_TEST_RUNTIME serves the API on node, deno, bun or
  // workers in a server process and speaks HTTP to it (runtime.ts). ──
  const runtime = process.env.EVEREST_TEST_RUNTIME;
  if (runtime) return withVerbs(runtimeApi(runtime, ORIGIN, settings, options, fromModules.get(given)));

  // A test that brings its own driver keeps it; otherwise EVEREST_TEST_DB picks one (drivers.ts).
  const driver = options?.driver ?? testDriver(settings);
  const handler = createHandler(cloneSettings(settings), driver ? { ...options, driver } : options);
  return withVerbs({
    fetch: (path, init) => handler(new Request(ORIGIN + path, init)),
    handler,
    close: () => handler.app.close(),
  });
}

/** get, post … over an API's fetch. */
function withVerbs(api: Pick<TestApi, "fetch" | "handler" | "close">): TestApi {
  const fetch = api.fetch;
  const send = (method: string) => (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(path, {
      method,
      headers: { "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return {
    fetch,
    get: (path, headers) => fetch(path, { headers }),
    post: send("POST"),
    patch: send("PATCH"),
    put: send("PUT"),
    delete: (path, headers) => fetch(path, { method: "DELETE", headers }),
    // A getter: a remote API answers an attempt to reach its handler with an explanation.
    get handler() {
      return api.handler;
    },
    close: api.close,
  };
}

/** Parses a JSON response body, failing the test with the text when it is not JSON. */
export async function json(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`expected JSON, got ${response.status}: ${text.slice(0, 300)}`);
  }
}
