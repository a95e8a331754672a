/**
 * An LRU cache keyed by fixed-length tuples of numbers, with an allocation-free lookup: the caller
 * writes the key into `key` (a reused Float64Array) and calls `get()`; on a miss, `set(value)` stores
 * the value under that same key. Entries live in typed arrays (keys, hashes, chains, LRU links); only
 * the values array holds objects. When full, `set` evicts the least recently used entry.
 *
 * Keys are non-negative integers or -1 below 2^53 (ids, offsets, lengths); hashing mixes the low and
 * high 32 bits of each.
 */

const NONE = -1;

export class NumericKeyCache<V> {
  /** Write the key here before `get()` / `set()`. */
  declare readonly key: Float64Array;
  /** Numbers per key, and entries kept. */
  readonly #stride: number;
  readonly #capacity: number;

  #size = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  readonly #keys: Float64Array;
  readonly #hashes: Int32Array;
  readonly #values: (V | undefined)[];
  readonly #buckets: Int32Array;
  readonly #chain: Int32Array;
  readonly #prev: Int32Array;
  readonly #next: Int32Array;
  #head = NONE;
  #tail = NONE;

  /**
   * @param stride numbers per key (≥ 1)
   * @param capacity entries kept (≥ 1)
   */
  constructor(stride: number, capacity: number) {
    this.#stride = Math.max(1, stride | 0);
    this.#capacity = Math.max(1, capacity | 0);
    this.key = new Float64Array(this.#stride);
    this.#keys = new Float64Array(this.#stride * this.#capacity);
    this.#hashes = new Int32Array(this.#capacity);
    this.#values = new Array<V | undefined>(this.#capacity).fill(undefined);
    let buckets = 1;
    while (buckets < this.#capacity * 2) buckets <<= 1;
    this.#buckets = new Int32Array(buckets).fill(NONE);
    this.#chain = new Int32Array(this.#capacity).fill(NONE);
    this.#prev = new Int32Array(this.#capacity).fill(NONE);
    this.#next = new Int32Array(this.#capacity).fill(NONE);
  }

  get size(): number {
    return this.#size;
  }

  /** Lookups that found / did not find their key, and entries evicted, since creation. */
  get stats(): { hits: number; misses: number; evictions: number; size: number } {
    return { hits: this.#hits, misses: this.#misses, evictions: this.#evictions, size: this.#size };
  }

  #hash(): number {
    const key = this.key;
    let h = 0x811c9dc5 ^ this.#stride;
    for (let i = 0; i < this.#stride; i++) {
      const x = key[i] as number;
      const lo = x >>> 0;
      const hi = (x / 4294967296) | 0;
      h = Math.imul(h ^ lo, 0x9e3779b1);
      h = Math.imul(h ^ (h >>> 15) ^ hi, 0x85ebca6b);
    }
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return h ^ (h >>> 16);
  }

  #matches(entry: number): boolean {
    const key = this.key;
    const keys = this.#keys;
    const base = entry * this.#stride;
    for (let i = 0; i < this.#stride; i++) if (keys[base + i] !== key[i]) return false;
    return true;
  }

  #unlink(entry: number): void {
    const p = this.#prev[entry] as number;
    const n = this.#next[entry] as number;
    if (p === NONE) this.#head = n;
    else this.#next[p] = n;
    if (n === NONE) this.#tail = p;
    else this.#prev[n] = p;
  }

  #pushFront(entry: number): void {
    this.#prev[entry] = NONE;
    this.#next[entry] = this.#head;
    if (this.#head !== NONE) this.#prev[this.#head] = entry;
    this.#head = entry;
    if (this.#tail === NONE) this.#tail = entry;
  }

  /** The value stored under `key`, made most recently used; undefined on a miss. */
  get(): V | undefined {
    const h = this.#hash();
    let entry = this.#buckets[h & (this.#buckets.length - 1)] as number;
    while (entry !== NONE) {
      if (this.#hashes[entry] === h && this.#matches(entry)) {
        this.#hits++;
        if (entry !== this.#head) {
          this.#unlink(entry);
          this.#pushFront(entry);
        }
        return this.#values[entry];
      }
      entry = this.#chain[entry] as number;
    }
    this.#misses++;
    return undefined;
  }

  #removeFromBucket(entry: number): void {
    const bucket = (this.#hashes[entry] as number) & (this.#buckets.length - 1);
    let at = this.#buckets[bucket] as number;
    let before = NONE;
    while (at !== NONE && at !== entry) {
      before = at;
      at = this.#chain[at] as number;
    }
    if (at === NONE) return;
    if (before === NONE) this.#buckets[bucket] = this.#chain[entry] as number;
    else this.#chain[before] = this.#chain[entry] as number;
    this.#chain[entry] = NONE;
  }

  /**
   * Stores `value` under `key` (call after a `get()` that missed, with `key` unchanged). Evicts the
   * least recently used entry when full.
   */
  set(value: V): void {
    const h = this.#hash();
    let entry: number;
    if (this.#size < this.#capacity) {
      entry = this.#size++;
    } else {
      entry = this.#tail;
      this.#unlink(entry);
      this.#removeFromBucket(entry);
      this.#evictions++;
    }
    this.#keys.set(this.key, entry * this.#stride);
    this.#hashes[entry] = h;
    this.#values[entry] = value;
    const bucket = h & (this.#buckets.length - 1);
    this.#chain[entry] = this.#buckets[bucket] as number;
    this.#buckets[bucket] = entry;
    this.#pushFront(entry);
  }

  /** Drops every entry. */
  clear(): void {
    this.#values.fill(undefined);
    this.#buckets.fill(NONE);
    this.#chain.fill(NONE);
    this.#prev.fill(NONE);
    this.#next.fill(NONE);
    this.#head = NONE;
    this.#tail = NONE;
    this.#size = 0;
  }
}
