// What every driver's change log shares (docs/contracts.md §3): how long it keeps changes, how
// a position is written and read back, and who is woken when a change is recorded. A position
// is `<epoch>.<sequence>`: the epoch names one log (made when the log began, kept in the
// database with it), so a position from another database, or from a log that was lost and begun
// again, is told apart from one this log simply no longer keeps.
import { InvalidPositionError, type DriverSettings } from "./types.ts";

export interface Retention {
  /** Seconds a change is kept; null: no time bound. */
  seconds: number | null;
  /** Changes kept per database; null: no count bound. */
  count: number | null;
}

/** The defaults of src/settings/opt-in.ts, for a driver built without settings. */
export function retentionOf(settings: DriverSettings): Retention {
  return {
    seconds: settings.CHANGE_FEED_RETENTION === undefined ? 86_400 : settings.CHANGE_FEED_RETENTION,
    count: settings.CHANGE_FEED_RETENTION_COUNT === undefined ? 100_000 : settings.CHANGE_FEED_RETENTION_COUNT,
  };
}

/** The oldest time a change may have and still be kept. */
export function retainedSince(retention: Retention, now = Date.now()): Date | null {
  return retention.seconds === null ? null : new Date(now - retention.seconds * 1000);
}

export function newEpoch(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function formatPosition(epoch: string, seq: number): string {
  return `${epoch}.${seq}`;
}

/** The sequence number of one of this log's positions; anything else is an InvalidPositionError. */
export function parsePosition(position: string, epoch: string, head: number): number {
  const match = /^([0-9a-f]{12})\.(0|[1-9][0-9]{0,15})$/.exec(position);
  if (!match) throw new InvalidPositionError(`'${position.slice(0, 40)}' is not a change-feed position`);
  const seq = Number(match[2]);
  if (match[1] !== epoch || seq > head) throw new InvalidPositionError(`'${position}' is not a position of this change log`);
  return seq;
}

/** Who asked to be woken per database, and waking them (never inside a write: on a later turn). */
export class Watchers {
  private readonly byDatabase = new Map<string, Set<() => void>>();

  add(database: string, wake: () => void): () => void {
    let set = this.byDatabase.get(database);
    if (!set) this.byDatabase.set(database, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.byDatabase.get(database) === set) this.byDatabase.delete(database);
    };
  }

  notify(database: string): void {
    const set = this.byDatabase.get(database);
    if (!set) return;
    for (const wake of set) queueMicrotask(wake);
  }
}
