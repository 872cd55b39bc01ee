// The writes of one connection that found the file's write lock taken by another process, given
// the lock in turns. Each write used to try the lock on timers of its own, for 5 s: with several
// processes on one file, a burst of writes that one process serves (slowly, queued in its event
// loop) became a crowd of pollers, the process that had just committed usually won again, and a
// third to a half of the burst waited past 5 s and was answered 503 (docs/deploy.md).
// Here the waiting writes of a process queue in order and only the first tries the lock, every
// POLL_MS. When the process has tried for 5 s without getting it, another process keeps it: that
// write fails, and with it every write queued by then. While other processes want the lock (one was
// refused it in the last CONTENDED_MS), every TURN_WRITES-th write of the queue waits HANDOFF_MS
// before it tries, longer than another process's poll, so that processes take turns instead of
// one keeping the lock for its whole queue.

/** Thrown by an attempt refused because another process holds the lock; `cause` is SQLite's error. */
export class Waiting extends Error {
  constructor(override readonly cause: unknown) {
    super("busy");
  }
}

const POLL_MS = 2;
const HANDOFF_MS = 4;
const CONTENDED_MS = 1000;
/** Writes of the queue in a row before one waits HANDOFF_MS: a turn long enough to keep the lock's hand-overs few. */
const TURN_WRITES = 8;

const pause = (ms: number) => new Promise((resume) => setTimeout(resume, ms));

export class WriteTurns {
  private readonly queue: Array<() => void> = [];
  private taken = false;
  /** Since when the first of the queue has tried the lock without getting it (null: it has not tried yet). */
  private waitingSince: number | null = null;
  /** Writes queued before `before` were queued while the lock stayed held a patience's worth: they fail with `error`, SQLite's. */
  private stuck: { before: number; error: unknown } = { before: -Infinity, error: null };
  /** When an attempt of this connection was last refused the lock. */
  private refusedAt = -Infinity;
  /** Writes of the queue since the last hand-off. */
  private streak = 0;

  constructor(private readonly patienceMs: number) {}

  /** `attempt` (synchronous, whole in one turn) once the lock is free, or SQLite's busy error after the patience. */
  async run<T>(attempt: () => T): Promise<T> {
    if (!this.taken) {
      try {
        return attempt();
      } catch (error) {
        if (!(error instanceof Waiting)) throw error;
        this.refusedAt = Date.now();
      }
    }
    const arrived = Date.now();
    await this.turn();
    try {
      for (;;) {
        if (arrived < this.stuck.before) throw this.stuck.error;
        try {
          const result = attempt();
          this.waitingSince = null;
          return result;
        } catch (error) {
          if (!(error instanceof Waiting)) throw error;
          const now = Date.now();
          this.refusedAt = now;
          this.waitingSince ??= now;
          if (now - this.waitingSince >= this.patienceMs) {
            this.stuck = { before: now, error: error.cause };
            this.waitingSince = null;
            throw error.cause;
          }
        }
        await pause(POLL_MS);
      }
    } finally {
      this.pass();
    }
  }

  private turn(): Promise<void> {
    if (!this.taken) {
      this.taken = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private pass(): void {
    const next = this.queue.shift();
    if (!next) {
      this.taken = false;
      return;
    }
    if (++this.streak >= TURN_WRITES && Date.now() - this.refusedAt < CONTENDED_MS) {
      this.streak = 0;
      setTimeout(next, HANDOFF_MS);
    } else next();
  }
}
