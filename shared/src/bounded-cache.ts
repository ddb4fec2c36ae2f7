// A cache that keeps at most `max` entries, the least recently used dropped first:
// for values made from what callers send (a time zone's spelling, a header), where
// every new key would otherwise stay for the life of the process.
export class BoundedCache<K, V> {
  private readonly max: number;
  private readonly entries = new Map<K, V>();

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a bounded cache keeps at least one entry, not ${max}`);
    this.max = max;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value of `key`, made by `make` when it is not kept (a throw keeps nothing). */
  get(key: K, make: (key: K) => V): V {
    let value = this.entries.get(key);
    if (value !== undefined || this.entries.has(key)) {
      // A Map iterates in insertion order: re-inserting makes it the most recent.
      this.entries.delete(key);
    } else {
      value = make(key);
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, value as V);
    return value as V;
  }
}
