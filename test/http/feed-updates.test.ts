// The change feed under update operators and writes by filter (docs/feed.md, docs/updates.md,
// docs/contracts.md §3 and §6): an operator PATCH is one `update` event with the resulting
// document, a PATCH or DELETE by filter one event per document it changed, a soft delete by
// filter a `delete`; a filtered stream sees the documents such a write moves in and out of its
// `where`; field rules hide in these events what they hide in a GET. Runs on every driver and
// runtime.
import { describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, type TestApi } from "../support/api.ts";
import type { SseReader } from "../support/sse.ts";
import { closedAfterEach } from "../support/streams.ts";
import { OPT_IN_WRITES } from "../support/updates.ts";
import { expectNoHiddenValue, getAs, login, seededApi } from "./field-rules/data.ts";

const settings = (extra: Settings = {}): Settings => ({
  CHANGE_FEED: true,
  ...OPT_IN_WRITES,
  DOMAIN: {
    tasks: { schema: { title: { type: "string" }, status: { type: "string" }, points: { type: "integer" }, labels: { type: "list", schema: { type: "string" } } } },
    bin: { soft_delete: true, schema: { title: { type: "string" }, status: { type: "string" } } },
  },
  ...extra,
});

const streams = closedAfterEach();
const { stream, keep } = streams;
const api = (extra?: Settings): TestApi => streams.api(settings(extra));

const where = (filter: object) => `where=${encodeURIComponent(JSON.stringify(filter))}`;

/** Stores `docs` in one bulk POST; their ids, in order. */
async function seed(target: TestApi, path: string, docs: object[]): Promise<string[]> {
  const response = await target.post(path, docs);
  expect(response.status, await response.clone().text()).toBe(201);
  const body = await json(response);
  return (docs.length === 1 ? [body] : body._items).map((doc: { _id: string }) => doc._id);
}

async function item(target: TestApi, path: string, headers: Record<string, string> = {}): Promise<any> {
  return json(await target.get(path, headers));
}

/** The next `count` events, each checked to be `event`, their data parsed. */
async function events(reader: SseReader, event: string, count: number): Promise<any[]> {
  const out: any[] = [];
  for (let i = 0; i < count; i++) out.push((await reader.expect(event)).data);
  return out;
}

/** Sorted by `_id`: a write of several documents gives their events in the store's order. */
const byId = (docs: any[]) => [...docs].sort((a, b) => String(a._id).localeCompare(String(b._id)));

const tasks = [
  { title: "a", status: "open", points: 1 },
  { title: "b", status: "open", points: 6 },
  { title: "c", status: "done", points: 2 },
  { title: "d", status: "open", points: 8 },
];

describe("change feed: update operators", () => {
  it("gives one update event for an operator PATCH, carrying the document it left", async () => {
    const a = api();
    const [id] = await seed(a, "/tasks", [{ title: "a", points: 1 }]);
    const feed = await stream(a, "/tasks");
    const stored = await item(a, `/tasks/${id}`);
    const response = await a.patch(`/tasks/${id}`, { $inc: { points: 2 }, $push: { labels: "x" }, title: "A" }, { "If-Match": stored._etag });
    expect(response.status, await response.clone().text()).toBe(200);
    const [updated] = await events(feed, "update", 1);
    expect(updated).toEqual(await item(a, `/tasks/${id}`));
    expect(updated).toMatchObject({ title: "A", points: 3, labels: ["x"] });
    expect(updated._etag).toBe((await json(response))._etag);
    expect(await feed.quiet(300)).toBe(true);
  });

  it("gives nothing for an operator PATCH that is refused", async () => {
    const a = api({ DOMAIN: { tasks: { schema: { points: { type: "integer", min: 0 } } } } });
    const [id] = await seed(a, "/tasks", [{ points: 0 }]);
    const feed = await stream(a, "/tasks");
    const stored = await item(a, `/tasks/${id}`);
    expect((await a.patch(`/tasks/${id}`, { $inc: { points: -1 } }, { "If-Match": stored._etag })).status).toBe(422);
    expect(await feed.quiet(300)).toBe(true);
  });
});

describe("change feed: writes by filter", () => {
  it("gives one update event per document a PATCH by filter changed, each the document it left, none for the others", async () => {
    const a = api();
    const ids = await seed(a, "/tasks", tasks);
    const feed = await stream(a, "/tasks");
    const response = await a.patch(`/tasks?${where({ status: "open" })}`, { $inc: { points: 1 }, status: "seen" });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await json(response))._meta).toEqual({ matched: 3, updated: 3 });
    const updated = byId(await events(feed, "update", 3));
    expect(updated.map((doc) => doc._id)).toEqual([ids[0], ids[1], ids[3]].sort());
    for (const doc of updated) expect(doc).toEqual(await item(a, `/tasks/${doc._id}`));
    expect(updated.map((doc) => [doc.title, doc.status, doc.points]).sort()).toEqual([["a", "seen", 2], ["b", "seen", 7], ["d", "seen", 9]]);
    expect(await feed.quiet(300)).toBe(true);
    expect((await json(await a.patch(`/tasks?${where({ status: "nothing" })}`, { points: 0 })))._meta).toEqual({ matched: 0, updated: 0 });
    expect(await feed.quiet(300)).toBe(true);
  });

  it("gives one delete event per document a DELETE by filter removed, with the id and ETag a GET showed", async () => {
    const a = api();
    const ids = await seed(a, "/tasks", tasks);
    const shown = await Promise.all(ids.map((id) => item(a, `/tasks/${id}`)));
    const feed = await stream(a, "/tasks");
    const response = await a.delete(`/tasks?${where({ status: "open" })}`);
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await json(response))._meta).toEqual({ matched: 3, deleted: 3 });
    const deleted = byId(await events(feed, "delete", 3));
    expect(deleted).toEqual(byId([shown[0], shown[1], shown[3]].map((doc) => ({ _id: doc._id, _etag: doc._etag }))));
    expect(await feed.quiet(300)).toBe(true);
  });

  it("reports a soft DELETE by filter as a delete of each document", async () => {
    const a = api();
    const ids = await seed(a, "/bin", [{ title: "a", status: "old" }, { title: "b", status: "new" }, { title: "c", status: "old" }]);
    const feed = await stream(a, "/bin");
    const response = await a.delete(`/bin?${where({ status: "old" })}`);
    expect(response.status, await response.clone().text()).toBe(200);
    const deleted = byId(await events(feed, "delete", 2));
    expect(deleted.map((doc) => doc._id)).toEqual([ids[0], ids[2]].sort());
    for (const doc of deleted) expect(doc._etag).toEqual(expect.any(String));
    expect(await feed.quiet(300)).toBe(true);
  });

  it("tells a filtered stream of the documents a write by filter or an operator moves into or out of its where", async () => {
    const a = api();
    const ids = await seed(a, "/tasks", tasks);
    const feed = await stream(a, `/tasks?${where({ points: { $gte: 5 } })}`);
    // a: 1 → 11 enters; b: 6 → 16 and d: 8 → 18 stay in; c (done) is not written.
    await a.patch(`/tasks?${where({ status: "open" })}`, { $inc: { points: 10 } });
    const moved = [await feed.next(), await feed.next(), await feed.next()];
    const kinds = Object.fromEntries(moved.map((event) => [JSON.parse(event.data)._id, event.event]));
    expect(kinds).toEqual({ [ids[0]!]: "enter", [ids[1]!]: "update", [ids[3]!]: "update" });
    const entered = JSON.parse(moved.find((event) => event.event === "enter")!.data);
    expect(entered).toEqual(await item(a, `/tasks/${ids[0]}`));
    // b and d leave by a PATCH by filter, a by an operator PATCH of its own.
    await a.patch(`/tasks?${where({ title: { $in: ["b", "d"] } })}`, { points: 0 });
    const left = byId(await events(feed, "leave", 2));
    expect(left.map((doc) => doc._id)).toEqual([ids[1], ids[3]].sort());
    const stored = await item(a, `/tasks/${ids[0]}`);
    await a.patch(`/tasks/${ids[0]}`, { $inc: { points: -10 } }, { "If-Match": stored._etag });
    expect((await feed.expect("leave")).data._id).toBe(ids[0]);
    // c enters by an operator PATCH.
    const c = await item(a, `/tasks/${ids[2]}`);
    await a.patch(`/tasks/${ids[2]}`, { $set: { points: 5 } }, { "If-Match": c._etag });
    expect((await feed.expect("enter")).data).toEqual(await item(a, `/tasks/${ids[2]}`));
    expect(await feed.quiet(300)).toBe(true);
  });
});

describe("change feed: field rules under update operators and writes by filter", () => {
  it("shows a staff member's stream only what it may read of what HR's operator PATCH and PATCH by filter wrote", async () => {
    const { api: a, ids } = await seededApi({
      CHANGE_FEED: true,
      UPDATE_OPERATORS: ["$inc", "$set"],
      PATCH_BY_FILTER: true,
      RESOURCE_METHODS: ["GET", "POST", "PATCH", "DELETE"],
    });
    keep(a);
    const staff = await stream(a, "/employees", login("sam"));
    const hr = await stream(a, "/employees", login("hana"));

    expect((await a.patch(`/employees/${ids.sam}`, { $inc: { salary: 1 }, $set: { "profile.city": "Tromsø" } }, login("hana"))).status).toBe(200);
    const seen = await staff.next();
    expect(seen.event).toBe("update");
    expectNoHiddenValue(seen.data);
    expect(JSON.parse(seen.data)).toEqual(await item(a, `/employees/${ids.sam}`, login("sam")));
    expect(JSON.parse(seen.data).salary).toBeUndefined();
    expect((await hr.expect("update")).data).toMatchObject({ salary: 970003, profile: { city: "Tromsø" } });

    const bulk = await a.patch(`/employees?${where({ name: { $in: ["Boss", "Sam"] } })}`, { $inc: { salary: 1 }, $set: { "profile.city": "Oslo" } }, login("hana"));
    expect(bulk.status, await bulk.clone().text()).toBe(200);
    for (let i = 0; i < 2; i++) {
      const event = await staff.next();
      expect(event.event).toBe("update");
      expectNoHiddenValue(event.data);
      const doc = JSON.parse(event.data);
      expect(doc).toEqual(await json(await getAs(a, "sam", `/employees/${doc._id}`)));
    }
    const forHr = byId(await events(hr, "update", 2));
    expect(forHr.map((doc) => doc.salary).sort()).toEqual([970002, 970004]);
    expect(await staff.quiet(300)).toBe(true);
  });
});
