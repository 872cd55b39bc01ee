// The data-api driver's change log: the gateway's change-log actions (src/gateway/changes.ts,
// an everest extension), so the log is the one of the driver behind the gateway, written there
// with each write. Nothing is pushed over HTTP: a feed polls (`pushes` false) and hears this
// process's own writes at once.
import { Watchers } from "../change-log.ts";
import type { ChangeLog, ChangeRead, ChangeRecord, Doc, Target } from "../types.ts";
import type { Action } from "./protocol.ts";

type Call = (action: Action, body: Doc) => Promise<Doc>;

export class DataApiChangeLog implements ChangeLog {
  readonly pushes = false;
  private readonly watchers = new Watchers();
  private readonly recorded = new Set<string>();

  constructor(
    private readonly call: Call,
    private readonly defaultDatabase: string,
  ) {}

  async record(target: Target): Promise<void> {
    const database = target.database ?? this.defaultDatabase;
    await this.call("everest.changesRecord", { database, collection: target.collection });
    this.recorded.add(`${database}\u0000${target.collection}`);
  }

  async head(database?: string): Promise<string> {
    const { position } = await this.call("everest.changesHead", { database: database ?? this.defaultDatabase });
    if (typeof position !== "string") throw new Error("the Data API answer has no change-log position");
    return position;
  }

  async read(database: string | undefined, after: string, limit: number): Promise<ChangeRead> {
    const answer = await this.call("everest.changesRead", { database: database ?? this.defaultDatabase, after, limit });
    if (answer.expired === true && typeof answer.head === "string") return { expired: true, head: answer.head };
    if (!Array.isArray(answer.records)) throw new Error("the Data API answer has no change records");
    return { expired: false, records: answer.records as ChangeRecord[] };
  }

  watch(database: string | undefined, wake: () => void): () => void {
    return this.watchers.add(database ?? this.defaultDatabase, wake);
  }

  /** Whether this process asked to record the collection's changes. */
  records(target: Target): boolean {
    return this.recorded.has(`${target.database ?? this.defaultDatabase}\u0000${target.collection}`);
  }

  /** After a write through this driver: this process's streams look at once. */
  written(target: Target): void {
    if (this.records(target)) this.watchers.notify(target.database ?? this.defaultDatabase);
  }
}
