// A string-keyed map that, once large, is kept as many small Maps: the store's maps that grow
// with the data (the id map, an index's keys) and that every insert writes. On Bun,
// JavaScriptCore's concurrent collector visits again the whole of an object written while it
// marks; with one Map of every document, written by every POST, one young collection of a bench
// run went through 624 rounds of such visits (862 ms, 40% of the CPU of a window of POSTs:
// bench/README.md, "sixth round"). Spread over many Maps, a write dirties one small one.

/**
 * Entries at which the map spreads over SHARDS Maps, once. Only on JavaScriptCore: V8 (Node,
 * Deno, Workers) remembers the written slot, not the object, so there the split would only add
 * a step to every lookup (about 5% of a bulk POST's CPU, same README).
 */
const SPLIT_AT = "Bun" in globalThis ? 16_384 : Infinity;
const SHARDS = 256;

/**
 * The shard of a key from its last few characters, where the keys the store makes differ most
 * (an ObjectId's counter, a number's digits). Cheaper than hashing the whole key, and a poor
 * spread only makes some shards larger, never a wrong answer.
 */
function shardOf(key: string): number {
  const length = key.length;
  let h = length;
  for (let i = length > 8 ? length - 8 : 0; i < length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return (h ^ (h >>> 10)) & (SHARDS - 1);
}

export class ShardedMap<V> {
  private whole: Map<string, V> | null = new Map();
  private shards: Array<Map<string, V>> = [];
  private count = 0;

  /** @param splitAt the size at which it splits (tests make it small to reach the split on any engine). */
  constructor(private readonly splitAt = SPLIT_AT) {}

  get size(): number {
    return this.whole ? this.whole.size : this.count;
  }

  get(key: string): V | undefined {
    return (this.whole ?? this.shards[shardOf(key)]!).get(key);
  }

  set(key: string, value: V): void {
    const whole = this.whole;
    if (whole) {
      whole.set(key, value);
      if (whole.size >= this.splitAt) this.split(whole);
      return;
    }
    const shard = this.shards[shardOf(key)]!;
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
  }

  delete(key: string): boolean {
    if (this.whole) return this.whole.delete(key);
    if (!this.shards[shardOf(key)]!.delete(key)) return false;
    this.count--;
    return true;
  }

  private split(whole: Map<string, V>): void {
    this.shards = Array.from({ length: SHARDS }, () => new Map<string, V>());
    for (const [key, value] of whole) this.shards[shardOf(key)]!.set(key, value);
    this.count = whole.size;
    this.whole = null;
  }
}
