// The event-hook registry: Eve's names (`on_insert`, `on_insert_<resource>`, `on_pre_GET`, …),
// several callbacks per event run in registration order, async ones awaited. A callback aborts
// the request by throwing (see `abort`). Registration is start-up configuration; nothing here
// holds per-request state.

export type HookCallback = (...args: any[]) => unknown;

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
  register(map: Record<string, HookCallback | HookCallback[]> | undefined): this {
    for (const [event, value] of Object.entries(map ?? {})) {
      for (const callback of Array.isArray(value) ? value : [value]) this.on(event, callback);
    }
    return this;
  }
}
