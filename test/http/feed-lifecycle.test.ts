// The App's registry of open streams (docs/contracts.md §7): it counts them, frees a stream's
// place when its client goes away, and App.close() ends each with its final event and takes no
// new one.
import { expect, it } from "vitest";
import { testApi } from "../support/api.ts";
import { readSse } from "../support/sse.ts";

const STREAM = { Accept: "text/event-stream" };

it("counts open streams, frees a closed one's place, and ends them all on close()", async () => {
  const api = testApi({ CHANGE_FEED: true, RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } });
  const app = api.handler.app;
  expect(app.operations.streams.size).toBe(0);
  const first = readSse(await api.get("/people", STREAM));
  const second = readSse(await api.get("/people", STREAM));
  expect(app.operations.streams.size).toBe(2);
  await first.close();
  expect(app.operations.streams.size).toBe(1);
  await app.close();
  const last = await second.rest();
  expect(last).toEqual([{ event: "end", data: JSON.stringify({ reason: "shutdown" }) }]);
  expect(app.operations.streams.size).toBe(0);
  const refused = await api.get("/people", STREAM);
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toBe("1");
});

it("has no registry when no resource has the feed", () => {
  const api = testApi({ DOMAIN: { people: { schema: { name: { type: "string" } } } } });
  expect(api.handler.app.feed).toBeNull();
});

it("with isolated requests (Workers), each stream polls the log on its own and still resumes", async () => {
  const api = testApi(
    { CHANGE_FEED: true, CHANGE_FEED_POLL: 20, CHANGE_FEED_HEARTBEAT: 1, RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } },
    { isolatedRequests: true },
  );
  const events = readSse(await api.get("/people", STREAM));
  await api.post("/people", { name: "a" }, {});
  const first = await events.expect("insert");
  expect(first.data.name).toBe("a");
  await events.quiet(2500);
  expect(events.comments).toContain("heartbeat");
  await events.close();
  await api.post("/people", { name: "b" }, {});
  const resumed = readSse(await api.get("/people", { ...STREAM, "Last-Event-ID": first.id! }));
  expect((await resumed.expect("insert")).data.name).toBe("b");
  await resumed.close();
  await api.close();
});
