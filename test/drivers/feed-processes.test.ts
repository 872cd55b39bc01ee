// The change feed across processes (docs/feed.md): two everest servers over one database, a
// subscriber on one, a write through the other; the event arrives within the poll bound. Over
// one SQLite file (on a Node with node:sqlite: this one or SQLITE_NODE) and over MongoDB
// (MONGODB_URI); skipped, and said so, where neither is at hand.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { serveProcess, servesSqlite, workspace } from "../support/processes.ts";
import { readSse } from "../support/sse.ts";

// The file's workspace (test/support/processes.ts): made before the tests, removed after them
// with every server they started stopped; none is made where every test is skipped.
const { dir } = workspace("feed", {});
const mongodbUri = process.env.MONGODB_URI;

/** A server on `db` (a URI), its base URL once it listens. */
async function serve(db: string, settings: object): Promise<URL> {
  const file = join(dir, `${new ObjectId().toHexString()}.json`);
  writeFileSync(file, JSON.stringify(settings));
  const server = await serveProcess("node", file, db);
  if (!server.url) throw new Error(`the server exited before serving:\n${server.output()}`);
  return new URL(server.url);
}

const settings = (name: string) => ({
  DB_NAME: name,
  CHANGE_FEED: true,
  CHANGE_FEED_POLL: 100,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
});

async function crossing(db: string): Promise<void> {
  const name = `feed_${new ObjectId().toHexString()}`;
  const [reader, writer] = await Promise.all([serve(db, settings(name)), serve(db, settings(name))]);
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
  it.skipIf(!servesSqlite("node"))("reaches a subscriber of another process over one SQLite file", async () => {
    await crossing(`sqlite:${join(dir, "shared.db")}`);
  }, 90_000);

  it.skipIf(!mongodbUri)("reaches a subscriber of another process over one MongoDB database", async () => {
    await crossing(mongodbUri!);
  }, 90_000);
});
