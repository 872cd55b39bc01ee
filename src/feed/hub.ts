// The streams of one database in this process, fed by one reader of its change log: the log is
// read once per change, whatever the number of streams, and each stream filters and renders
// what it is given. The reader wakes when the driver records a write here, and polls the log
// where the driver does not hear other processes' writes (ChangeLog.pushes). The latest changes
// stay in a window, so a stream resuming from a recent position joins without a read of its
// own; an older one reads the log page by page until it reaches the window.
//
// Where the runtime keeps each request's work to itself (Workers: a promise, timer or stream of
// one request must not be settled by another's), nothing is shared: each stream follows the
// log on its own, polling it from its own request, and beats its own heartbeat.
import { InvalidPositionError, type ChangeLog, type ChangeRead, type ChangeRecord } from "../drivers/types.ts";
import type { FeedStream } from "./stream.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How a hub reads: its poll interval, heartbeat, and whether each stream reads on its own (Workers). */
export interface HubTiming {
  pollMs: number;
  heartbeatMs: number;
  isolated: boolean;
  /** The least time between two deliveries, fixed; by default it follows the open streams (GAP_MS_PER_STREAM). Tests widen it. */
  gapMs?: number;
}

/** Changes read from the log at a time. */
const PAGE = 500;
/**
 * The least time between two deliveries to the streams, per open stream: changes that come
 * sooner wait for the next delivery, together. Each delivery is one write to every subscriber's
 * socket, a system call of about 5 µs; with 1,000 subscribers and 200 changes a second, one
 * delivery per change made 200,000 of them a second, more than a core could do (bench/README.md,
 * the feed). Given four times a write's cost between deliveries (20 ms for 1,000 streams, 2 ms for
 * 100), deliveries take at most about a quarter of the process's time, and a change after a quiet
 * spell goes at once.
 */
const GAP_MS_PER_STREAM = 0.02;
const MAX_GAP_MS = 50;
/** The latest changes kept for streams that resume from one of them. */
const WINDOW = 2048;

export class Hub {
  private cursor = "";
  private window: ChangeRecord[] = [];
  private readonly streams = new Set<FeedStream>();
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopWatching: (() => void) | null = null;
  private poller: ReturnType<typeof setInterval> | null = null;
  /** The cursor's reading of the log's head; dropped while no stream is open, as the window is. */
  private fresh: Promise<void> | null = null;
  /** Changes read but not yet handed to the streams, waiting for the next delivery (GAP_MS_PER_STREAM). */
  private held: ChangeRecord[] = [];
  private holding: ReturnType<typeof setTimeout> | null = null;
  private delivered = -Infinity;

  constructor(
    private readonly changes: ChangeLog,
    private readonly database: string | undefined,
    private readonly timing: HubTiming,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Where a stream without Last-Event-ID starts: after the newest change. */
  async start(): Promise<string> {
    if (this.timing.isolated) return this.changes.head(this.database);
    await this.ready();
    return this.cursor;
  }

  /** Resolves once the cursor is the log's head, or further: a hub nobody read from for a while starts from the head again. */
  private ready(): Promise<void> {
    if (!this.fresh) {
      const fresh = this.changes.head(this.database).then((head) => {
        this.cursor = head;
      });
      fresh.catch(() => {
        if (this.fresh === fresh) this.fresh = null;
      });
      this.fresh = fresh;
    }
    return this.fresh;
  }

  /**
   * Throws InvalidPositionError for a position that is not the log's, before a stream is
   * answered; a position the window holds needs no read.
   */
  async check(position: string): Promise<void> {
    if (!this.timing.isolated) await this.ready();
    if (!this.timing.isolated && this.after(position)) return;
    await this.changes.read(this.database, position, 1);
  }

  /** Brings a stream from its position up to the live changes, then feeds it with them. */
  async join(stream: FeedStream): Promise<void> {
    if (this.timing.isolated) return this.follow(stream);
    await this.ready();
    while (!stream.ended) {
      const caught = this.after(stream.position);
      if (caught) {
        // No await between finding the stream's place and adding it: no change can fall between.
        this.attach(stream);
        stream.accept(caught);
        return;
      }
      const read = await this.readAfter(stream.position);
      if (read.expired) return stream.reset(read.head);
      if (read.records.length > 0) stream.accept(read.records);
      else {
        // Ahead of this reader (a change it has not read yet): read up to it, and if the log
        // cannot be read now, try again a poll interval later.
        this.wake();
        await this.pumping;
        if (!this.after(stream.position)) await sleep(this.timing.pollMs);
      }
    }
  }

  /** A change may have been recorded. */
  wake = (): void => {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.run();
  };

  get size(): number {
    return this.streams.size;
  }

  private attach(stream: FeedStream): void {
    this.streams.add(stream);
    stream.whenEnded(() => this.detach(stream));
    if (this.streams.size === 1) {
      this.stopWatching = this.changes.watch(this.database, this.wake);
      if (!this.changes.pushes) this.poller = setInterval(this.wake, this.timing.pollMs);
      // Changes recorded while nobody watched.
      this.wake();
    }
  }

  private detach(stream: FeedStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0) return;
    // Nobody reads: the window would only go stale, and the cursor with it.
    this.window = [];
    this.fresh = null;
    this.release();
    this.stopWatching?.();
    this.stopWatching = null;
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  /** The window's changes after `position` (none when it is the newest), or null when the window does not hold it. */
  private after(position: string): ChangeRecord[] | null {
    if (position === this.cursor) return [];
    for (let i = this.window.length - 1; i >= 0; i--) {
      if (this.window[i]!.position === position) return this.window.slice(i + 1);
    }
    return null;
  }

  /** Hands changes to every stream, or holds them for the next delivery when the last was too recent (GAP_MS_PER_STREAM). */
  private deliver(before: string, records: ChangeRecord[]): void {
    if (this.holding) {
      for (const record of records) this.held.push(record);
      return;
    }
    const gap = this.timing.gapMs ?? Math.min(MAX_GAP_MS, this.streams.size * GAP_MS_PER_STREAM);
    const since = Date.now() - this.delivered;
    if (since >= gap) return this.hand(before, records);
    this.held = records.slice();
    this.holding = setTimeout(() => {
      const held = this.held;
      this.release();
      this.hand(before, held);
    }, gap - since);
  }

  /** Gives each stream the changes after its position: all of them where it is `before`, the position they follow. */
  private hand(before: string, records: ChangeRecord[]): void {
    this.delivered = Date.now();
    for (const stream of this.streams) {
      if (stream.position === before) {
        stream.accept(records);
        continue;
      }
      // A stream that joined while these were held caught up on them from the window already.
      let from = 0;
      for (let i = records.length - 1; i >= 0; i--) {
        if (records[i]!.position === stream.position) {
          from = i + 1;
          break;
        }
      }
      stream.accept(from === 0 ? records : records.slice(from));
    }
  }

  /** Drops the held changes and their timer. */
  private release(): void {
    if (this.holding) clearTimeout(this.holding);
    this.holding = null;
    this.held = [];
  }

  /** One stream reading the log by itself, a poll interval after each time it found it read to the end. */
  private async follow(stream: FeedStream): Promise<void> {
    let beat = Date.now();
    while (!stream.ended) {
      try {
        const read = await this.readAfter(stream.position);
        if (read.expired) return stream.reset(read.head);
        stream.accept(read.records);
        if (read.records.length === PAGE) continue;
      } catch (error) {
        this.onError(error);
      }
      await sleep(this.timing.pollMs);
      if (Date.now() - beat >= this.timing.heartbeatMs) {
        stream.heartbeat();
        beat = Date.now();
      }
    }
  }

  /** Reads the log up to its end, again while wakes came meanwhile, and hands each change to every stream. */
  private async run(): Promise<void> {
    // `pumping` is cleared in the same turn as the last look at `again`: cleared a turn later (a
    // `finally` on the promise), a wake between the two found it set, asked for another round
    // that no loop would run, and its change waited for the next write.
    try {
      do {
        this.again = false;
        try {
          while (await this.readPage());
        } catch (error) {
          // The next write or poll tries again; the streams keep their positions.
          this.onError(error);
        }
      } while (this.again);
    } finally {
      this.pumping = null;
    }
  }

  /**
   * A page of the log after a position this reader held. One the log does not know any more (its
   * collections dropped or restored under a running server) reads as expired, so the streams
   * start again from its head: read again, it failed the same way on every poll, and the streams
   * stayed open, silent, for good.
   */
  private async readAfter(position: string): Promise<ChangeRead> {
    try {
      return await this.changes.read(this.database, position, PAGE);
    } catch (error) {
      if (!(error instanceof InvalidPositionError)) throw error;
      return { expired: true, head: await this.changes.head(this.database) };
    }
  }

  /** Reads one page of the log after the cursor and delivers it; whether a full page says there may be more. */
  private async readPage(): Promise<boolean> {
    const read = await this.readAfter(this.cursor);
    // The last stream left while this read was under way: what it found is nobody's.
    if (this.streams.size === 0) return false;
    if (read.expired) {
      // This reader fell further behind than the log keeps: every stream must start again.
      this.cursor = read.head;
      this.window = [];
      this.release();
      for (const stream of this.streams) stream.reset(read.head);
      return false;
    }
    const records = read.records;
    if (records.length === 0) return false;
    const before = this.cursor;
    this.cursor = records[records.length - 1]!.position;
    for (const record of records) this.window.push(record);
    if (this.window.length > WINDOW) this.window = this.window.slice(-WINDOW);
    this.deliver(before, records);
    return records.length === PAGE;
  }
}
