// The event-hook registry: Eve's names (`on_insert`, `on_insert_<resource>`, `on_pre_GET`, …),
// several callbacks per event run in registration order, async ones awaited. A callback aborts
// the request by throwing (see `abort`). Registration is start-up configuration; nothing here
// holds per-request state.

export type HookCallback = (...args: any[]) => unknown;

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** The events everest fires, each also as `<event>_<resource>` (docs/documents.md gives their arguments). */
type ResourceEvent =
  | `on_pre_${Method}`
  | `on_post_${Method}`
  | "on_fetched_resource"
  | "on_fetched_item"
  | "on_fetched_diffs"
  | "on_insert"
  | "on_inserted"
  | "on_replace"
  | "on_replaced"
  | "on_update"
  | "on_updated"
  | "on_delete_item"
  | "on_deleted_item"
  | "on_delete_resource"
  | "on_delete_resource_originals"
  | "on_deleted_resource";

/** An event a hook may listen to: `on_insert`, `on_insert_people`, `on_pre_GET`, `before_aggregation`, … */
export type HookName = ResourceEvent | `${ResourceEvent}_${string}` | "before_aggregation" | "after_aggregation" | "on_oplog_push";

/** ResourceEvent, then what may follow it; a regular expression, so that the Worker's entry carries no list. */
const EVENT = /^(on_(?:(?:pre|post)_(?:GET|POST|PATCH|PUT|DELETE)|fetched_(?:resource|item|diffs)|insert(?:ed)?|replaced?|updated?|deleted?_item|delete_resource(?:_originals)?|deleted_resource))(?:_(.+))?$/;
const GENERIC = /^(?:before_aggregation|after_aggregation|on_oplog_push)$/;

/**
 * Refuses a name no event has: a misspelt event or resource would otherwise register a hook
 * that never fires, which nothing shows until it is missed.
 */
export function checkHookName(name: string, resources: readonly string[]): void {
  if (GENERIC.test(name)) return;
  // Greedy, so `on_delete_resource_originals` is one event; then the shorter event with a resource.
  for (const match of [EVENT.exec(name), /^(on_delete_resource)_(.+)$/.exec(name)]) {
    if (match && (match[2] === undefined || resources.includes(match[2]))) return;
  }
  throw new Error(`no event is called '${name}': hooks listen to Eve's events (docs/documents.md), or <event>_<resource> for a resource of DOMAIN`);
}

export class Hooks {
  private readonly callbacks = new Map<string, HookCallback[]>();

  /** No callback registered for any event: emitting anything is a no-op. */
  get empty(): boolean {
    for (const list of this.callbacks.values()) if (list.length > 0) return false;
    return true;
  }

  on(event: string, callback: HookCallback): this {
    const list = this.callbacks.get(event);
    if (list) list.push(callback);
    else this.callbacks.set(event, [callback]);
    return this;
  }

  off(event: string, callback: HookCallback): this {
    const list = this.callbacks.get(event);
    if (list) this.callbacks.set(event, list.filter((c) => c !== callback));
    return this;
  }

  has(event: string): boolean {
    return (this.callbacks.get(event)?.length ?? 0) > 0;
  }

  /**
   * Whether a callback listens to the event, generic or for the resource (as emitForResource
   * fires them). With no hooks, no per-resource name is made: a POST asks on every request.
   */
  hasForResource(event: string, resource: string): boolean {
    return this.callbacks.size > 0 && (this.has(event) || this.has(`${event}_${resource}`));
  }

  async emit(event: string, ...args: unknown[]): Promise<void> {
    const list = this.callbacks.get(event);
    if (!list) return;
    for (const callback of list) await callback(...args);
  }

  /**
   * Fires the generic event with the resource name, then the per-resource one without it. Not
   * an async function: with no hooks registered (the common case) nothing is allocated at all,
   * and callers await only a promise (as FeaturePipeline.run's do).
   */
  emitForResource(event: string, resource: string, ...args: unknown[]): Promise<void> | undefined {
    if (this.callbacks.size === 0) return undefined;
    return this.emitBoth(event, resource, args);
  }

  private async emitBoth(event: string, resource: string, args: unknown[]): Promise<void> {
    await this.emit(event, resource, ...args);
    await this.emit(`${event}_${resource}`, ...args);
  }

  /** Registers every `{event: callback | callback[]}` pair. */
  register(map: Record<string, HookCallback | HookCallback[] | undefined> | undefined): this {
    for (const [event, value] of Object.entries(map ?? {})) {
      if (value) for (const callback of Array.isArray(value) ? value : [value]) this.on(event, callback);
    }
    return this;
  }
}
