// Change streams in the HTTP tests (docs/feed.md): opened with the header an EventSource sends,
// checked to be streams before anything is read from them, and closed — with the APIs they
// read — after each test of the file that asked for them.
import { afterEach, expect } from "vitest";
import type { HandlerOptions } from "../../src/app.ts";
import type { Settings } from "../../src/settings/types.ts";
import { testApi, type TestApi } from "./api.ts";
import { readSse, type SseReader } from "./sse.ts";

export const STREAM = { Accept: "text/event-stream" };

export interface Streams {
  /** An API over `settings`, closed after the test. */
  api(settings: Settings, options?: HandlerOptions): TestApi;
  /** A stream of `path`, which must answer 200 with text/event-stream; closed after the test. */
  stream(api: TestApi, path: string, headers?: Record<string, string>): Promise<SseReader>;
  /** Anything else to close after the test (in reverse order of keeping). */
  keep<T extends { close(): Promise<void> }>(item: T): T;
}

/** Call at the top of a test file: what it opens through the answer is closed after each test. */
export function closedAfterEach(): Streams {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
  });
  const keep = <T extends { close(): Promise<void> }>(item: T): T => {
    open.push(item);
    return item;
  };
  return {
    keep,
    api: (settings, options) => keep(testApi(settings, options)),
    async stream(api, path, headers = {}) {
      const response = await api.get(path, { ...STREAM, ...headers });
      expect(response.status, response.status === 200 ? "" : await response.clone().text()).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      return keep(readSse(response));
    },
  };
}
