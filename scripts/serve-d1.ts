// `everest serve` on workerd with a D1 database, for `serve:workers --db d1:NAME`: the bundle
// scripts/serve-workers.ts built, run by miniflare (wrangler's local runtime, which gives the
// worker a D1 binding backed by a local SQLite file under `dir`) instead of a bare workerd config.
// The worker listens on a socket of its own (miniflare's direct socket), as under bare workerd:
// miniflare's usual entry passes each request through a worker of its own first, and that hop
// resets the connection when the worker answers (a 413, say) without reading a chunked body
// the client is still sending.
import { Miniflare } from "miniflare";
import { join } from "node:path";
import type { WorkerModule } from "./build-worker.ts";

export interface D1Server {
  url: URL;
  dispose(): Promise<void>;
}

export async function serveWithD1(options: {
  dir: string;
  modules: WorkerModule[];
  bindings: Record<string, string>;
  d1Binding: string;
  compatibility: { date: string; flags: string[] };
  host: string;
  port: number;
}): Promise<D1Server> {
  const miniflare = new Miniflare({
    modulesRoot: options.dir,
    modules: options.modules.map((module) => ({ type: "ESModule" as const, path: module.path })),
    compatibilityDate: options.compatibility.date,
    compatibilityFlags: options.compatibility.flags,
    bindings: options.bindings,
    d1Databases: [options.d1Binding],
    d1Persist: join(options.dir, "d1"),
    host: "127.0.0.1",
    port: 0,
    unsafeDirectSockets: [{ host: options.host, port: options.port }],
  });
  await miniflare.ready;
  return { url: await miniflare.unsafeGetDirectURL(), dispose: () => miniflare.dispose() };
}
