// Counts per key in fixed time windows, kept in this process: the rate-limit counts of a single
// instance (src/ratelimit) and of the embedded store, which is one process anyway. A window is
// named by when it ends, so every count of one window meets in one entry; entries of windows
// that have ended are swept now and then, so clients that never come back cost nothing.

const SWEEP_EVERY_MS = 60_000;

export class WindowCounts {
  private readonly counts = new Map<string, { count: number; end: number }>();
  private nextSweep = 0;

  /** Counts one hit of `key` in the window ending at `end` (epoch ms); the window's count. */
  hit(key: string, end: number, now: number): number {
    if (now >= this.nextSweep) {
      for (const [k, entry] of this.counts) if (entry.end <= now) this.counts.delete(k);
      this.nextSweep = now + SWEEP_EVERY_MS;
    }
    const id = `${key}\u0000${end}`;
    let entry = this.counts.get(id);
    if (!entry) {
      entry = { count: 0, end };
      this.counts.set(id, entry);
    }
    return ++entry.count;
  }
}
