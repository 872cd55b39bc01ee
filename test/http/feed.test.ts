// The change feed over HTTP (docs/feed.md): GET with Accept: text/event-stream on a collection
// or an item streams its changes, rendered as a GET renders them, filtered as a GET filters,
// resumable with Last-Event-ID; bad requests are refused before the stream starts.
import { describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import type { TestApi } from "../support/api.ts";
import { readSse } from "../support/sse.ts";
import { closedAfterEach, STREAM } from "../support/streams.ts";

const settings = (extra: Settings = {}): Settings => ({
  CHANGE_FEED: true,
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { schema: { name: { type: "string" }, age: { type: "integer" }, city: { type: "string" } } },
    plain: { change_feed: false, schema: { name: { type: "string" } } },
  },
  ...extra,
});

const streams = closedAfterEach();
const { stream, keep } = streams;
const api = (extra?: Settings): TestApi => streams.api(settings(extra));

async function post(target: TestApi, body: unknown): Promise<any> {
  const response = await target.post("/people", body);
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

async function item(target: TestApi, id: string): Promise<any> {
  return (await target.get(`/people/${id}`)).json();
}

describe("change feed: events", () => {
  it("streams insert, update, replace and delete, each document as a GET of the item shows it", async () => {
    const a = api();
    const events = await stream(a, "/people");
    const created = await post(a, { name: "ada", age: 36 });
    const inserted = await events.expect("insert");
    expect(inserted.id).toBeTruthy();
    expect(inserted.data).toEqual(await item(a, created._id));
    expect(events.retry).toBe(2000);

    const etag = inserted.data._etag;
    expect((await a.patch(`/people/${created._id}`, { age: 37 }, { "If-Match": etag })).status).toBe(200);
    const updated = await events.expect("update");
    expect(updated.data).toEqual(await item(a, created._id));
    expect(updated.data.age).toBe(37);

    const current = await item(a, created._id);
    expect((await a.put(`/people/${created._id}`, { name: "ada l." }, { "If-Match": current._etag })).status).toBe(200);
    const replaced = await events.expect("replace");
    expect(replaced.data).toEqual(await item(a, created._id));

    const last = await item(a, created._id);
    expect((await a.delete(`/people/${created._id}`, { "If-Match": last._etag })).status).toBe(204);
    const deleted = await events.expect("delete");
    expect(deleted.data).toEqual({ _id: created._id, _etag: last._etag });
    expect(new Set([inserted.id, updated.id, replaced.id, deleted.id]).size).toBe(4);
  });

  it("gives one event per document of a bulk POST, and one per document a collection DELETE removes", async () => {
    const a = api();
    const events = await stream(a, "/people");
    const created = await post(a, [{ name: "a" }, { name: "b" }, { name: "c" }]);
    const ids = created._items.map((doc: any) => doc._id);
    const inserts = [await events.expect("insert"), await events.expect("insert"), await events.expect("insert")];
    expect(inserts.map((event) => event.data._id)).toEqual(ids);
    expect((await a.delete("/people")).status).toBe(204);
    const deletes = [await events.expect("delete"), await events.expect("delete"), await events.expect("delete")];
    expect(deletes.map((event) => event.data._id).sort()).toEqual([...ids].sort());
  });

  it("filters with `where` as a GET does: a document that enters the filter and one that leaves it", async () => {
    const a = api();
    const events = await stream(a, `/people?where=${encodeURIComponent(JSON.stringify({ city: "paris" }))}`);
    const outside = await post(a, { name: "ada", city: "london" });
    const inside = await post(a, { name: "bob", city: "paris" });
    expect((await events.expect("insert")).data._id).toBe(inside._id);
    await a.patch(`/people/${outside._id}`, { city: "paris" }, { "If-Match": outside._etag });
    const entered = await events.expect("enter");
    expect(entered.data).toEqual(await item(a, outside._id));
    const bob = await item(a, inside._id);
    await a.patch(`/people/${inside._id}`, { city: "rome" }, { "If-Match": bob._etag });
    const left = await events.expect("leave");
    expect(left.data._id).toBe(inside._id);
    await a.patch(`/people/${inside._id}`, { age: 3 }, { "If-Match": (await item(a, inside._id))._etag });
    expect(await events.quiet(300)).toBe(true);
  });

  it("takes Python's where syntax too", async () => {
    const a = api();
    const events = await stream(a, `/people?where=${encodeURIComponent('age > 30')}`);
    await post(a, { name: "young", age: 3 });
    const old = await post(a, { name: "old", age: 80 });
    expect((await events.expect("insert")).data._id).toBe(old._id);
  });

  it("streams one item's changes on the item URL", async () => {
    const a = api();
    const watched = await post(a, { name: "ada" });
    const other = await post(a, { name: "bob" });
    const events = await stream(a, `/people/${watched._id}`);
    await a.patch(`/people/${other._id}`, { age: 1 }, { "If-Match": other._etag });
    await a.patch(`/people/${watched._id}`, { age: 2 }, { "If-Match": watched._etag });
    const updated = await events.expect("update");
    expect(updated.data).toEqual(await item(a, watched._id));
  });

  it("applies the stream's projection", async () => {
    const a = api();
    const events = await stream(a, `/people?projection=${encodeURIComponent(JSON.stringify({ name: 1 }))}`);
    const created = await post(a, { name: "ada", age: 36, city: "london" });
    const { data } = await events.expect("insert");
    expect(data.name).toBe("ada");
    expect(data.age).toBeUndefined();
    expect(data.city).toBeUndefined();
    const asGet = await (await a.get(`/people/${created._id}?projection=${encodeURIComponent(JSON.stringify({ name: 1 }))}`)).json();
    expect(data).toEqual(asGet);
  });

  it("reports a soft delete as a delete", async () => {
    const a = api({ SOFT_DELETE: true });
    const created = await post(a, { name: "ada" });
    const events = await stream(a, "/people");
    expect((await a.delete(`/people/${created._id}`, { "If-Match": created._etag })).status).toBe(204);
    const deleted = await events.expect("delete");
    expect(deleted.data._id).toBe(created._id);
  });

  it("renders a media field as its link, never its bytes", async () => {
    const a = api({ DOMAIN: { images: { resource_methods: ["GET", "POST"], schema: { title: { type: "string" }, file: { type: "media" } } } } });
    const events = await stream(a, "/images");
    const body = new FormData();
    body.append("title", "dot");
    body.append("file", new Blob([new Uint8Array([137, 80, 78, 71])], { type: "image/png" }), "dot.png");
    expect((await a.fetch("/images", { method: "POST", body })).status).toBe(201);
    const { data } = await events.expect("insert");
    expect(typeof data.file).toBe("string");
    expect(data.file).toMatch(/\/media\/[0-9a-f]{24}$/);
    const file = await a.get(new URL(data.file, "http://everest.test/").pathname);
    expect(file.status).toBe(200);
    expect(Array.from(new Uint8Array(await file.arrayBuffer()))).toEqual([137, 80, 78, 71]);
  });

  it("streams the oplog endpoint's entries like any resource's", async () => {
    const a = api({ OPLOG: true, OPLOG_ENDPOINT: "oplog" });
    const events = await stream(a, "/oplog");
    const created = await post(a, { name: "ada" });
    const { data } = await events.expect("insert");
    expect(data).toMatchObject({ r: "people", o: "POST", i: created._id });
  });

  it("shows a versioned document's version", async () => {
    const a = api({ DOMAIN: { people: { versioning: true, schema: { name: { type: "string" } } } } });
    const events = await stream(a, "/people");
    const created = await post(a, { name: "ada" });
    const { data } = await events.expect("insert");
    expect(data._version).toBe(1);
    expect(data).toEqual(await item(a, created._id));
  });
});

describe("change feed: resuming", () => {
  it("resumes after Last-Event-ID: every change once, in order, then the live ones", async () => {
    const a = api();
    const first = await stream(a, "/people");
    await post(a, { name: "a" });
    const seen = await first.expect("insert");
    await first.close();
    const missed = [await post(a, { name: "b" }), await post(a, { name: "c" })];
    const second = await stream(a, "/people", { "Last-Event-ID": seen.id! });
    expect((await second.expect("insert")).data._id).toBe(missed[0]._id);
    expect((await second.expect("insert")).data._id).toBe(missed[1]._id);
    const live = await post(a, { name: "d" });
    expect((await second.expect("insert")).data._id).toBe(live._id);
    expect(await second.quiet(200)).toBe(true);
  });

  it("gives changes written in quick succession once each, in order, to a stream open throughout and one that joins among them", async () => {
    // Changes close together may be delivered together (src/feed/hub.ts; test/feed/hub.test.ts
    // holds them every time); a stream that resumes among them must get each once.
    const a = api();
    const open = await stream(a, "/people");
    const first = await post(a, { name: "a" });
    const seen = await open.expect("insert");
    expect(seen.data._id).toBe(first._id);
    const burst = [await post(a, { name: "b" }), await post(a, { name: "c" })];
    const joined = await stream(a, "/people", { "Last-Event-ID": seen.id! });
    burst.push(await post(a, { name: "d" }));
    for (const reader of [open, joined]) {
      for (const doc of burst) expect((await reader.expect("insert")).data._id).toBe(doc._id);
      expect(await reader.quiet(200)).toBe(true);
    }
  });

  it("tells a client whose position the log no longer keeps to start again, then ends", async () => {
    const a = api({ CHANGE_FEED_RETENTION_COUNT: 2 });
    const first = await stream(a, "/people");
    await post(a, { name: "a" });
    const old = await first.expect("insert");
    await first.close();
    for (const name of ["b", "c", "d"]) await post(a, { name });
    const second = await stream(a, "/people", { "Last-Event-ID": old.id! });
    const reset = await second.next();
    expect(reset.event).toBe("reset");
    expect(reset.id).toBeTruthy();
    expect(await second.rest()).toEqual([]);
    const third = await stream(a, "/people", { "Last-Event-ID": reset.id! });
    const live = await post(a, { name: "e" });
    expect((await third.expect("insert")).data._id).toBe(live._id);
  });
});

describe("change feed: embedding", () => {
  const teamed: Settings = {
    CHANGE_FEED: true,
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      teams: { schema: { name: { type: "string" } } },
      members: {
        embedded_fields: ["team"],
        schema: {
          name: { type: "string" },
          team: { type: "objectid", data_relation: { resource: "teams", embeddable: true } },
          mentor: { type: "objectid", data_relation: { resource: "members", embeddable: true } },
        },
      },
    },
  };

  it("embeds references as a GET of the item does: the resource's default ones, and those the stream asks for", async () => {
    const a = streams.api(teamed);
    const team = await (await a.post("/teams", { name: "red" })).json();
    const byDefault = await stream(a, "/members");
    const mentored = `embedded=${encodeURIComponent(JSON.stringify({ mentor: 1 }))}`;
    const asked = await stream(a, `/members?${mentored}`);

    const ada = await (await a.post("/members", { name: "ada", team: team._id })).json();
    const inserted = await byDefault.expect("insert");
    expect(inserted.data.team.name).toBe("red");
    expect(inserted.data).toEqual(await (await a.get(`/members/${ada._id}`)).json());
    await asked.expect("insert");

    const bob = await (await a.post("/members", { name: "bob", team: team._id, mentor: ada._id })).json();
    expect((await byDefault.expect("insert")).data.mentor).toBe(ada._id);
    const withMentor = (await asked.expect("insert")).data;
    expect(withMentor.mentor.name).toBe("ada");
    expect(withMentor).toEqual(await (await a.get(`/members/${bob._id}?${mentored}`)).json());
  });

  it("refuses a malformed embedded as a GET does, before any stream, and ignores a field it cannot embed as a GET does", async () => {
    const a = streams.api(teamed);
    const read = await a.get("/members?embedded={bad");
    expect(read.status).toBe(400);
    const streamed = await a.get("/members?embedded={bad", STREAM);
    expect(streamed.status).toBe(400);
    expect(streamed.headers.get("content-type")).toMatch(/json/);
    expect(await streamed.json()).toEqual(await read.json());
    const unknown = `/members?embedded=${encodeURIComponent(JSON.stringify({ name: 1 }))}`;
    expect((await a.get(unknown)).status).toBe(200);
    const events = await stream(a, unknown);
    await a.post("/members", { name: "cy" });
    expect((await events.expect("insert")).data.name).toBe("cy");
  });
});

describe("change feed: refusals", () => {
  it("answers Eve's envelope before any stream: bad where, projection or Last-Event-ID", async () => {
    const a = api({ VALIDATE_FILTERS: true });
    for (const [path, headers] of [
      ["/people?where={bad", {}],
      [`/people?where=${encodeURIComponent(JSON.stringify({ nope: 1 }))}`, {}],
      ["/people?projection={bad", {}],
      ["/people", { "Last-Event-ID": "nonsense" }],
      ["/people", { "Last-Event-ID": "0123456789ab.5" }],
    ] as const) {
      const response = await a.get(path, { ...STREAM, ...headers });
      expect(response.status, path).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/json/);
      expect((await response.json())._status).toBe("ERR");
    }
  });

  it("answers a resource without the feed 406, an unknown item 404, a write asking for a stream 406 storing nothing", async () => {
    const a = api();
    expect((await a.get("/plain", STREAM)).status).toBe(406);
    expect((await a.get("/people/0123456789ab0123456789ab", STREAM)).status).toBe(404);
    expect((await a.get("/nothing", STREAM)).status).toBe(404);
    const write = await a.post("/people", { name: "x" }, STREAM);
    expect(write.status).toBe(406);
    expect((await write.json())._error.code).toBe(406);
    expect((await (await a.get("/people")).json())._items).toEqual([]);
    // A GET that accepts anything still gets JSON.
    expect((await a.get("/people", { Accept: "*/*" })).headers.get("content-type")).toMatch(/json/);
  });

  it("leaves an API without the feed as it was", async () => {
    const a = api({ CHANGE_FEED: false });
    const response = await a.get("/people", STREAM);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/json/);
  });

  it("refuses a stream past CHANGE_FEED_MAX_STREAMS with 503 and Retry-After", async () => {
    // A heartbeat a second: where a runtime notices a client gone only when it writes (workerd), it writes soon.
    const a = api({ CHANGE_FEED_MAX_STREAMS: 1, CHANGE_FEED_HEARTBEAT: 1 });
    const first = await stream(a, "/people");
    const refused = await a.get("/people", STREAM);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    await first.close();
    // The closed stream's place is free again once the server notices.
    let status = 503;
    for (let i = 0; i < 100 && status === 503; i++) {
      const again = await a.get("/people", STREAM);
      status = again.status;
      if (status === 200) keep(readSse(again));
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  });
});

describe("change feed: operation", () => {
  it("sends heartbeat comments at the set interval", async () => {
    const a = api({ CHANGE_FEED_HEARTBEAT: 1 });
    const events = await stream(a, "/people");
    await events.quiet(2500);
    expect(events.comments.filter((c) => c === "heartbeat").length).toBeGreaterThan(0);
  });

  it("drops a reader that does not read once its buffer is full, with a final event", async () => {
    const a = api({ CHANGE_FEED_BUFFER: 2048 });
    const response = await a.get("/people", STREAM);
    expect(response.status).toBe(200);
    for (let i = 0; i < 40; i++) await post(a, { name: `person ${i}`.padEnd(200, ".") });
    const events = readSse(response);
    keep(events);
    const all = await events.rest(10_000);
    const last = all[all.length - 1]!;
    expect(last.event).toBe("end");
    expect(JSON.parse(last.data)).toEqual({ reason: "slow reader" });
    expect(all.length).toBeLessThan(40);
  });
});
