// The change feed across processes (docs/feed.md): two everest servers over one database, a
// subscriber on one, a write through the other; the event arrives within the poll bound. Over
// one SQLite file (on a Node with node:sqlite: this one or SQLITE_NODE) and over MongoDB
// (MONGODB_URI); skipped, and said so, where neither is at hand.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READY_LINE } from "../../scripts/serve-command.ts";
import { readSse } from "../support/sse.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// Made in beforeAll: where every test is skipped vitest runs no afterAll, and a directory made
// at load would be left behind.
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "everest-feed-"));
});
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const hasSqlite = await import("node:sqlite" as string).then(() => true, () => false);
const sqliteNode = hasSqlite ? process.execPath : process.env.SQLITE_NODE;
const mongodbUri = process.env.MONGODB_URI;

/** A server on `db` (a URI), its base URL once it listens. */
async function serve(node: string, db: string, settings: object): Promise<URL> {
  const file = join(dir, `${new ObjectId().toHexString()}.json`);
  writeFileSync(file, JSON.stringify(settings));
  const child = spawn(node, ["--import", "tsx", "adapters/cli.ts", "serve", file, "--port", "0", "--db", db], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 45_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      const url = READY_LINE.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(new URL(url));
      }
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}):\n${output}`)));
  });
}

const settings = (name: string) => ({
  DB_NAME: name,
  CHANGE_FEED: true,
  CHANGE_FEED_POLL: 100,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
});

async function crossing(node: string, db: string): Promise<void> {
  const name = `feed_${new ObjectId().toHexString()}`;
  const [reader, writer] = await Promise.all([serve(node, db, settings(name)), serve(node, db, settings(name))]);
  const response = await fetch(new URL("/people", reader), { headers: { Accept: "text/event-stream" } });
  expect(response.status).toBe(200);
  const events = readSse(response);
  try {
    const created = await fetch(new URL("/people", writer), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "ada" }) });
    expect(created.status).toBe(201);
    const { _id } = (await created.json()) as { _id: string };
    // The bound is the poll interval (100 ms here) plus a read; a loaded machine gets slack.
    const inserted = await events.expect("insert", 10_000);
    expect(inserted.data._id).toBe(_id);
    expect(inserted.data.name).toBe("ada");
    // And the other way round, resuming where the first stream was.
    const back = await fetch(new URL("/people", writer), { headers: { Accept: "text/event-stream", "Last-Event-ID": inserted.id! } });
    const resumed = readSse(back);
    const patch = await fetch(new URL(`/people/${_id}`, reader), { method: "PATCH", headers: { "Content-Type": "application/json", "If-Match": inserted.data._etag }, body: JSON.stringify({ name: "ada l." }) });
    expect(patch.status).toBe(200);
    expect((await resumed.expect("update", 10_000)).data.name).toBe("ada l.");
    await resumed.close();
  } finally {
    await events.close();
  }
}

describe("change feed across processes", () => {
  it.skipIf(!sqliteNode)("reaches a subscriber of another process over one SQLite file", async () => {
    await crossing(sqliteNode!, `sqlite:${join(dir, "shared.db")}`);
  }, 90_000);

  it.skipIf(!mongodbUri)("reaches a subscriber of another process over one MongoDB database", async () => {
    await crossing(process.execPath, mongodbUri!);
  }, 90_000);
});
