/**
 * The dying blocks of a queue allocator (internal): blocks freed by a dealloca whose death frontier is
 * not reached yet, indexed for the two reuse rules that take them before it is.
 *
 * - Rule b (`findDominated`): by the first semaphore of their frontier (one bucket per semaphore, the
 *   newest last), so a wait finds the records its timepoints may dominate without scanning the rest;
 *   at most `maxCandidates` of each bucket, the newest, are examined (keeps the rule O(1)).
 * - Rule d (`findEarliest`): in age order (an intrusive list, oldest first).
 *
 * Promises: a record is in the index from `add` until `remove` (idempotent), and `bytes` is the sum of
 * the `bytes` of the records in it (their allocations' byteLength, as asked for); `remove` and `add` are O(1). Both finders return only a record
 * whose `capacity` is at least `n` and whose block's offset is a multiple of `alignment`.
 */
import type { Fence, Semaphore } from '@keel/fence';
import type { Block } from './block';
import type { DeathRecord } from './death-record';
import { fenceDominates } from './dominance';
import { IntrusiveList } from './intrusive-list';

/** The bucket key of a record whose frontier has no timepoint. */
const EMPTY_KEY = {};

/** The key of a death record's bucket: the first semaphore of its frontier. */
function bucketKey<M>(r: DeathRecord<M>): object {
  return r.frontier.timepoints[0]?.semaphore ?? EMPTY_KEY;
}

export class DyingBlocks<M> {
  /** Bytes of the records in the index (as their allocations asked for). */
  bytes = 0;
  readonly #maxCandidates: number;
  readonly #buckets = new Map<Semaphore | object, DeathRecord<M>[]>();
  readonly #age = new IntrusiveList<DeathRecord<M>>();

  constructor(maxCandidates: number) {
    this.#maxCandidates = maxCandidates;
  }

  /** Indexes `r` (now dying). */
  add(r: DeathRecord<M>): void {
    const key = bucketKey(r);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = [];
      this.#buckets.set(key, bucket);
    }
    r.bucket = bucket;
    r.slot = bucket.length;
    bucket.push(r);
    this.#age.push(r);
    this.bytes += r.bytes;
  }

  /** Takes `r` out of the index (nothing when it is not in it). */
  remove(r: DeathRecord<M>): void {
    const bucket = r.bucket;
    if (!bucket) return;
    const last = bucket.pop() as DeathRecord<M>;
    if (last !== r) {
      bucket[r.slot] = last;
      last.slot = r.slot;
    }
    if (bucket.length === 0) this.#buckets.delete(bucketKey(r));
    r.bucket = undefined;
    r.slot = -1;
    this.#age.remove(r);
    this.bytes -= r.bytes;
  }

  /**
   * Forgets every record and returns their blocks (destroy: they go with the pool, or back to a pool
   * the allocator keeps; `bytes` keeps its last value).
   */
  clear(): Block<M>[] {
    const blocks: Block<M>[] = [];
    for (let r = this.#age.head; r; r = r.next) blocks.push(r.block);
    this.#buckets.clear();
    this.#age.clear();
    return blocks;
  }

  /**
   * Rule b: the smallest record of at most `limit` bytes that fits `n` and whose frontier `wait`
   * dominates (whoever waits on `wait` runs after the block's last users).
   */
  findDominated(wait: Fence, n: number, alignment: number, limit: number): DeathRecord<M> | undefined {
    if (this.#age.size === 0) return undefined;
    const tps = wait.timepoints;
    let best: DeathRecord<M> | undefined;
    let bestLength = Infinity;
    for (let t = 0; t < tps.length; t++) {
      const tp = tps[t] as (typeof tps)[number];
      const bucket = this.#buckets.get(tp.semaphore);
      if (!bucket) continue;
      const stop = Math.max(0, bucket.length - this.#maxCandidates);
      for (let i = bucket.length - 1; i >= stop; i--) {
        const r = bucket[i] as DeathRecord<M>;
        const length = r.capacity;
        if (length < n || length > limit || length >= bestLength || r.block.offset % alignment !== 0)
          continue;
        const ftps = r.frontier.timepoints;
        if (
          ftps.length === 1
            ? (ftps[0] as (typeof ftps)[number]).value <= tp.value
            : fenceDominates(wait, r.frontier)
        ) {
          best = r;
          bestLength = length;
          if (length === n || r.block.byteLength === n) return best;
        }
      }
    }
    return best;
  }

  /** Rule d: the oldest record that fits `n` within `limit` bytes, else the oldest that fits at all. */
  findEarliest(n: number, alignment: number, limit: number): DeathRecord<M> | undefined {
    let fallback: DeathRecord<M> | undefined;
    for (let r = this.#age.head; r; r = r.next) {
      const length = r.capacity;
      if (length < n || r.block.offset % alignment !== 0) continue;
      if (length <= limit) return r;
      fallback ??= r;
    }
    return fallback;
  }
}
