// The hub's deliveries (src/feed/hub.ts): changes that come within the gap after a delivery are
// held and handed over together; a stream that joins meanwhile catches up on them from the window
// and is not given them a second time. Over a log of its own, so the gap can be made wide enough
// to hold changes every time, which HTTP tests with a few streams cannot do.
import { describe, expect, it } from "vitest";
import { InvalidPositionError, type ChangeLog, type ChangeRecord } from "../../src/drivers/types.ts";
import { Hub } from "../../src/feed/hub.ts";
import { FeedStream } from "../../src/feed/stream.ts";

function fakeLog() {
  const records: ChangeRecord[] = [];
  let wake = () => undefined as void;
  const log: ChangeLog = {
    record: async () => undefined,
    head: async () => records.at(-1)?.position ?? "p0",
    read: async (_database, after, limit) => {
      const from = after === "p0" ? 0 : records.findIndex((record) => record.position === after) + 1;
      return { expired: false, records: records.slice(from, from + limit) };
    },
    watch: (_database, onWake) => ((wake = onWake), () => undefined),
    pushes: true,
  };
  const write = () => {
    const position = `p${records.length + 1}`;
    records.push({ position, collection: "people", op: "insert", id: position, before: null, after: { _id: position }, at: new Date() });
    wake();
  };
  return { log, write };
}

const encoder = new TextEncoder();

/** A stream whose events are the positions it was given, one per line, and what it has read so far. */
function positions(from: string) {
  const stream = new FeedStream(from, new Uint8Array(), (record) => encoder.encode(`${record.position}\n`), 1 << 20, (error) => {
    throw error;
  });
  const seen: string[] = [];
  void (async () => {
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      seen.push(...decoder.decode(value).split("\n").filter(Boolean));
    }
  })();
  return { stream, seen };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("change feed hub: deliveries", () => {
  it("holds changes that follow a delivery within the gap, then hands them over once each, a stream that joined among them included", async () => {
    const { log, write } = fakeLog();
    const hub = new Hub(log, undefined, { pollMs: 1000, heartbeatMs: 60_000, isolated: false, gapMs: 300 }, (error) => {
      throw error;
    });
    const open = positions(await hub.start());
    await hub.join(open.stream);
    write();
    await pause(20);
    expect(open.seen).toEqual(["p1"]);

    write();
    write();
    await pause(20);
    // Within the gap (300 ms): held, not yet written.
    expect(open.seen).toEqual(["p1"]);

    const joined = positions("p1");
    await hub.join(joined.stream);
    await pause(5);
    expect(joined.seen).toEqual(["p2", "p3"]);
    write();
    await pause(500);
    expect(open.seen).toEqual(["p1", "p2", "p3", "p4"]);
    expect(joined.seen).toEqual(["p2", "p3", "p4"]);
    open.stream.end();
    joined.stream.end();
  });
});

/** A fake log whose positions of one epoch the log refuses once `replace` has started another, as a dropped or restored log does. */
function replaceableLog() {
  const { log, write } = fakeLog();
  let epoch = "p";
  const read = log.read;
  log.read = async (database, after, limit) => {
    if (!after.startsWith(epoch) && after !== `${epoch}0`) throw new InvalidPositionError(`'${after}' is not a position of this change log`);
    return read(database, after, limit);
  };
  const replace = () => {
    epoch = "q";
    log.head = async () => "q0";
  };
  return { log, write, replace };
}

describe("change feed hub: a log replaced under it", () => {
  for (const isolated of [false, true]) {
    it(`starts a stream resuming from a position of the old log again from the new head (${isolated ? "each stream reading by itself, as on Workers" : "joining the shared reader"})`, async () => {
      const { log, write, replace } = replaceableLog();
      const errors: unknown[] = [];
      const hub = new Hub(log, undefined, { pollMs: 1000, heartbeatMs: 60_000, isolated, gapMs: 0 }, (error) => void errors.push(error));
      write();
      write();
      replace();
      const resumed = positions("p1");
      await hub.join(resumed.stream);
      await pause(20);
      expect(resumed.seen).toEqual(["event: reset", "id: q0", 'data: {"reason":"expired"}']);
      expect(resumed.stream.ended).toBe(true);
      expect(errors).toEqual([]);
    });
  }

  it("tells its streams to start again from the new log's head, as for a position the log expired", async () => {
    // The log's collections dropped or restored while the server runs: every position held
    // before is unknown to it (test/http/feed.test.ts has a position the log expired).
    const { log, write, replace } = replaceableLog();
    const errors: unknown[] = [];
    const hub = new Hub(log, undefined, { pollMs: 1000, heartbeatMs: 60_000, isolated: false, gapMs: 0 }, (error) => void errors.push(error));
    const open = positions(await hub.start());
    await hub.join(open.stream);
    write();
    await pause(20);
    expect(open.seen).toEqual(["p1"]);
    replace();
    write();
    await pause(20);
    expect(open.seen.slice(1)).toEqual(["event: reset", "id: q0", 'data: {"reason":"expired"}']);
    expect(open.stream.ended).toBe(true);
    expect(errors).toEqual([]);
  });
});
