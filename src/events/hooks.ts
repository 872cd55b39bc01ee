// The event-hook registry: Eve's names (`on_insert`, `on_insert_<resource>`, `on_pre_GET`, …),
// several callbacks per event run in registration order, async ones awaited. A callback aborts
// the request by throwing (see `abort`). Registration is start-up configuration; nothing here
// holds per-request state.
import type { Doc, Filter } from "../drivers/types.ts";

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** A method's events: on_pre_<method> has the lookup but for a POST, on_post_<method> the response. */
type MethodArguments = { [M in Method as `on_pre_${M}`]: M extends "POST" ? [request: Request] : [request: Request, lookup: Filter] } & {
  [M in Method as `on_post_${M}`]: [request: Request, response: Response];
};

/**
 * What each event hands its callbacks after the resource name (docs/documents.md, "Event hooks");
 * `<event>_<resource>` hands the same without it. emitForResource takes its arguments from here,
 * so a call that fires others does not compile. Documents are typed as records, not as the
 * schema: an on_insert's have their dates but no `_id` yet, and a projection may leave fields out.
 */
interface EventArguments extends MethodArguments {
  on_fetched_resource: [response: Doc];
  on_fetched_item: [document: Doc];
  on_fetched_diffs: [versions: Doc[]];
  on_insert: [documents: Doc[]];
  on_inserted: [documents: Doc[]];
  on_replace: [document: Doc, original: Doc];
  on_replaced: [document: Doc, original: Doc];
  on_update: [updates: Doc, original: Doc];
  on_updated: [updates: Doc, original: Doc];
  on_delete_item: [document: Doc];
  on_deleted_item: [document: Doc];
  on_delete_resource: [];
  on_delete_resource_originals: [originals: Doc[], lookup: Filter];
  on_deleted_resource: [];
}

/** Events fired only once, with the resource (the aggregation endpoint) first. */
interface GenericEventArguments {
  before_aggregation: [pipeline: Doc[]];
  after_aggregation: [documents: Doc[]];
  on_oplog_push: [entries: Doc[]];
}

/** The events everest fires, each also as `<event>_<resource>`. */
type ResourceEvent = keyof EventArguments;

/**
 * A callback of arguments `Args`: what it returns is awaited, then ignored. Checked as a method's
 * parameters are (both ways), so that a callback may name its documents by the user's own type
 * (`(people: Person[]) => …`, Person a type alias of the schema's fields) while one written for
 * another event's arguments still fails.
 */
type Hook<Args extends unknown[]> = { bivariant(...args: Args): unknown }["bivariant"];

/**
 * Each event's callback: `on_insert: (resource, documents)`, `on_insert_${string}: (documents)`.
 * A name two patterns match must suit both: `on_delete_resource_${string}` admits the originals'
 * callback too, so that `on_delete_resource_originals_people` gets that one.
 */
export type HookSignatures = { [E in ResourceEvent]: Hook<[resource: string, ...EventArguments[E]]> } & {
  [E in keyof GenericEventArguments]: Hook<[resource: string, ...GenericEventArguments[E]]>;
} & {
  [E in ResourceEvent as `${E}_${string}`]: Hook<EventArguments[E]> | (E extends "on_delete_resource" ? Hook<EventArguments["on_delete_resource_originals"]> : never);
};

/** An event a hook may listen to: `on_insert`, `on_insert_people`, `on_pre_GET`, `before_aggregation`, … */
export type HookName = keyof HookSignatures;

/** `{event: callback | callback[]}`, each callback typed for its event. */
export type HookMap = { [E in HookName]?: HookSignatures[E] | HookSignatures[E][] };

/** Any event's callback: the type a callback kept for several events, or of no known event, has. */
export type HookCallback = (...args: any[]) => unknown;

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

  on<E extends HookName>(event: E, callback: HookSignatures[E]): this {
    const list = this.callbacks.get(event);
    if (list) list.push(callback);
    else this.callbacks.set(event, [callback]);
    return this;
  }

  off<E extends HookName>(event: E, callback: HookSignatures[E]): this {
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
  emitForResource<E extends ResourceEvent>(event: E, resource: string, ...args: EventArguments[E]): Promise<void> | undefined {
    if (this.callbacks.size === 0) return undefined;
    return this.emitBoth(event, resource, args);
  }

  private async emitBoth(event: string, resource: string, args: unknown[]): Promise<void> {
    await this.emit(event, resource, ...args);
    await this.emit(`${event}_${resource}`, ...args);
  }

  /** Registers every `{event: callback | callback[]}` pair. */
  register(map: HookMap | undefined): this {
    for (const [event, value] of Object.entries(map ?? {})) {
      if (value) for (const callback of Array.isArray(value) ? value : [value]) this.on(event as HookName, callback);
    }
    return this;
  }
}
