// `everest data-api`: arguments, and the gateway it serves (handed to a stand-in server here).
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseDataApiArgs, runDataApiCommand, type ServeHandler } from "../../adapters/data-api-cli.ts";

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

describe("everest data-api", () => {
  it("reads the database, address, keys, allow-lists and limits", () => {
    const args = parseDataApiArgs(
      ["--db", "mongodb://db:27017", "--port", "9000", "--host", "0.0.0.0", "--api-key", "a", "--api-key", "b", "--database", "app", "--collection", "people", "--collection", "works", "--data-source", "main", "--max-batch", "50", "--max-response-bytes", "1048576"],
      {},
    );
    expect(args).toEqual({
      db: "mongodb://db:27017",
      port: 9000,
      host: "0.0.0.0",
      gateway: { apiKeys: ["a", "b"], databases: ["app"], collections: ["people", "works"], dataSource: "main", maxBatch: 50, maxResponseBytes: 1048576 },
    });
  });

  it("takes the database and a key from the environment", () => {
    expect(parseDataApiArgs([], { DB_URI: "memory", DATA_API_KEY: "k", PORT: "7000" })).toMatchObject({ db: "memory", port: 7000, gateway: { apiKeys: ["k"] } });
  });

  it("refuses to run without a key, and bad numbers", () => {
    expect(() => parseDataApiArgs(["--db", "memory"], {})).toThrow(/API key/);
    expect(() => parseDataApiArgs(["--db", "memory", "--api-key", "k", "--max-batch", "0"], {})).toThrow(/--max-batch/);
    expect(() => parseDataApiArgs(["--db", "memory", "--api-key", "k", "--port", "http"], {})).toThrow(/--port/);
  });

  it("prints the usage without a database", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(parseDataApiArgs([], {})).toBeNull();
    expect(log.mock.calls[0]![0]).toMatch(/^usage: everest data-api/);
    expect(process.exitCode).toBe(2);
  });

  it("serves the gateway over the named database", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    let served: ((request: Request) => Promise<Response>) | undefined;
    const serve: ServeHandler = async (handler, options) => {
      served = handler;
      expect(options).toMatchObject({ port: 0, host: "127.0.0.1" });
      return { url: "http://127.0.0.1:1" };
    };
    await runDataApiCommand(["--db", "memory", "--port", "0", "--api-key", "k", "--database", "app"], serve);
    const call = (action: string, body: unknown, key = "k") =>
      served!(new Request(`http://gateway/action/${action}`, { method: "POST", headers: { "api-key": key }, body: JSON.stringify(body) }));
    expect((await call("insertOne", { dataSource: "x", database: "app", collection: "c", document: { n: 1 } })).status).toBe(200);
    expect(await (await call("find", { dataSource: "x", database: "app", collection: "c", projection: { _id: 0 } })).json()).toEqual({ documents: [{ n: 1 }] });
    expect((await call("find", { dataSource: "x", database: "other", collection: "c" })).status).toBe(403);
    expect((await call("find", { dataSource: "x", database: "app", collection: "c" }, "wrong")).status).toBe(401);
  });
});
