/**
 * RingPool: the seed's reference ringbuffer (IREE #9572: "reference implementation using a basic
 * ringbuffer, will work everywhere since no MMU required"). One slab of fixed capacity; blocks are carved
 * at the head and memory comes back at the tail, in reservation order.
 *
 * FIFO rule: memory is reclaimed in the order blocks were reserved. A block released out of order is
 * counted as released at once (it leaves `liveBytes`), but its bytes stay unavailable until every older
 * block was released too; then the tail jumps over all of them. A request that does not fit before the
 * end of the slab wraps around to offset 0 (the skipped bytes at the end come back with that block).
 * When the ring becomes empty, head and tail return to 0.
 *
 * Quarantine: a quarantined block (its dealloca's wait failed; its users may still run) is a hole,
 * not a wall. Its reservation counts as released for the FIFO rule, so the tail reclaims past it, and
 * its range is kept in a sorted list of holes that every later block is placed around (a block never
 * overlaps a hole; the bytes it skips come back with it, like the skipped end of the slab). The slab
 * is kept while holes exist. A request that no gap between holes can hold, even with the ring empty,
 * can never be served (`fitsBeside`). With no holes, placement is what it was: one comparison more.
 */

import { checkOptions, ErrorCode, KeelError, type OptionRules } from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { alignUp, LABEL, POSITIVE, PoolBase, PoolBlock, type SlabRecord } from './pool-support';
import type { SlabProvider } from './slab-provider';

export interface RingPoolOptions {
  readonly label?: string;
  /** Bytes of the ring's single slab (rounded up to the alignment); also the pool's budget. */
  readonly capacity: number;
  /** Default and smallest block alignment, a power of two (default 16). */
  readonly alignment?: number;
}

const RING_OPTION_RULES: OptionRules = {
  label: LABEL,
  capacity: POSITIVE,
  alignment: POSITIVE,
};

// Fields of a reservation record (see #slots).
const BEGIN = 0;
const END = 1;
const SEQ = 2;
const RELEASED = 3;

// Values of RELEASED: still live, released (out of order), quarantined (a hole once reclaimed).
const LIVE = 0;
const FREED = 1;
const HELD = 2;

export class RingPool<M> extends PoolBase<M> {
  readonly maxBlockBytes: number;
  /** Bytes of the ring. */
  readonly capacity: number;
  readonly #units: number;
  #slab: SlabRecord<M> | undefined = undefined;

  // Positions in alignment units.
  #head = 0;
  #tail = 0;

  // Reservations in order: a circular queue of records of four numbers (BEGIN, END, SEQ, RELEASED) in
  // one array; its capacity in records is a power of two.
  #slots = new Float64Array(64 * 4);
  #first = 0;
  #count = 0;
  #seq = 1;

  // Quarantined ranges in alignment units: [begin, end) pairs, sorted, disjoint (rarely more than a few).
  readonly #holes: number[] = [];

  constructor(provider: SlabProvider<M>, options: RingPoolOptions) {
    const o = checkOptions<Partial<RingPoolOptions>>('RingPool', options, RING_OPTION_RULES);
    super('RingPool', provider, o);
    // checkOptions made sure a given capacity is a positive safe integer; it is required.
    if (o.capacity === undefined) {
      throw invalid(`${this.what}: capacity undefined must be a positive safe integer number of bytes`);
    }
    this.#units = Math.ceil(o.capacity / this.alignment);
    this.capacity = this.#units * this.alignment;
    this.maxBlockBytes = this.capacity;
    this.budget = this.capacity;
  }

  /**
   * Bytes between tail and head that are neither live nor free yet (released out of order, padding),
   * quarantined bytes (holes) excepted.
   */
  get pendingReclaimBytes(): number {
    let units = 0;
    const q = this.#slots;
    for (let i = 0; i < this.#count; i++) {
      const at = ((this.#first + i) & ((q.length >> 2) - 1)) << 2;
      if (q[at + RELEASED] !== LIVE) {
        const begin = q[at + BEGIN] as number;
        const end = q[at + END] as number;
        units +=
          end > begin
            ? end - begin - this.#holeUnits(begin, end)
            : this.#units - begin + end - this.#holeUnits(begin, this.#units) - this.#holeUnits(0, end);
      }
    }
    return units * this.alignment;
  }

  /** Units of holes inside [begin, end). */
  #holeUnits(begin: number, end: number): number {
    let units = 0;
    const holes = this.#holes;
    for (let i = 0; i < holes.length; i += 2) {
      units += Math.max(0, Math.min(end, holes[i + 1] as number) - Math.max(begin, holes[i] as number));
    }
    return units;
  }

  protected override take(
    byteLength: number,
    units: number,
    alignUnits: number,
    grow: boolean,
  ): PoolBlock<M> | undefined {
    const cap = this.#units;
    if (units > cap) return this.full();
    let slab = this.#slab;
    if (!slab) {
      if (!grow) return undefined;
      slab = this.#slab = this.newSlab(this.capacity);
    }
    const head = this.#head;
    const tail = this.#tail;
    let start: number;
    if (this.#count === 0) {
      start = this.#place(0, cap, units, alignUnits);
      this.#tail = 0;
    } else if (head > tail) {
      // Free: [head, cap) then [0, tail).
      start = this.#place(head, cap, units, alignUnits);
      if (start < 0) start = this.#place(0, tail, units, alignUnits);
    } else {
      // Free: [head, tail) (nothing when head === tail: the ring is full).
      start = head === tail ? -1 : this.#place(head, tail, units, alignUnits);
    }
    if (start < 0) return this.full();
    const end = start + units;
    const slot = this.#push(this.#count === 0 ? 0 : head, end);
    this.#head = end;
    return new PoolBlock(
      slab,
      start * this.alignment,
      byteLength,
      this,
      slot,
      units * this.alignment,
      this.#slots[(slot << 2) + SEQ] as number,
    );
  }

  /**
   * The first start at or after `lo`, a multiple of `alignUnits`, of `units` units that end by `hi`
   * and overlap no hole; -1 if there is none.
   */
  #place(lo: number, hi: number, units: number, alignUnits: number): number {
    let start = alignUp(lo, alignUnits);
    const holes = this.#holes;
    for (let i = 0; i < holes.length; i += 2) {
      const end = holes[i + 1] as number;
      if (end <= start) continue;
      if (start + units <= (holes[i] as number)) break;
      start = alignUp(end, alignUnits);
    }
    return start + units <= hi ? start : -1;
  }

  #push(begin: number, end: number): number {
    let q = this.#slots;
    const records = q.length >> 2;
    if (this.#count === records) {
      // Full: double the queue, oldest record first.
      const grown = new Float64Array(q.length * 2);
      grown.set(q.subarray(this.#first << 2));
      grown.set(q.subarray(0, this.#first << 2), (records - this.#first) << 2);
      this.#slots = q = grown;
      this.#first = 0;
    }
    const slot = (this.#first + this.#count) & ((q.length >> 2) - 1);
    const at = slot << 2;
    q[at + BEGIN] = begin;
    q[at + END] = end;
    q[at + SEQ] = this.#seq++;
    q[at + RELEASED] = 0;
    this.#count++;
    return slot;
  }

  protected override free(block: PoolBlock<M>): void {
    this.#slots[this.#find(block, 'release') + RELEASED] = FREED;
    this.#reclaim();
  }

  /** The block becomes a hole: the tail may reclaim past its reservation, placement skips its range. */
  protected override hold(block: PoolBlock<M>): void {
    this.#slots[this.#find(block, 'quarantine') + RELEASED] = HELD;
    const begin = block.offset / this.alignment;
    const end = begin + block.capacity / this.alignment;
    const holes = this.#holes;
    let i = 0;
    while (i < holes.length && (holes[i] as number) < begin) i += 2;
    holes.splice(i, 0, begin, end);
    this.#reclaim();
  }

  protected override fitsBeside(units: number, alignUnits: number): boolean {
    // Once every other block is released the ring is empty: placement starts at 0.
    return this.#place(0, this.#units, units, alignUnits) >= 0;
  }

  /**
   * The index in #slots of `block`'s reservation record. Slots move when the queue grows; it is found
   * by its sequence number (those of queued reservations are consecutive from the first one).
   */
  #find(block: PoolBlock<M>, op: string): number {
    const q = this.#slots;
    const mask = (q.length >> 2) - 1;
    const distance = block.seq - (q[(this.#first << 2) + SEQ] as number);
    const at = ((this.#first + distance) & mask) << 2;
    if (distance < 0 || distance >= this.#count || q[at + SEQ] !== block.seq) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.what}: ${op}: block at offset ${block.offset} is not a live reservation of this ring`,
      );
    }
    return at;
  }

  /** Reclaims from the tail every released (or quarantined) reservation, in order. */
  #reclaim(): void {
    const q = this.#slots;
    const mask = (q.length >> 2) - 1;
    while (this.#count > 0 && q[(this.#first << 2) + RELEASED] !== LIVE) {
      this.#tail = q[(this.#first << 2) + END] as number;
      this.#first = (this.#first + 1) & mask;
      this.#count--;
    }
    if (this.#count === 0) {
      this.#head = 0;
      this.#tail = 0;
    }
  }

  /**
   * Gives the ring's slab back when no reservation is outstanding and no block is quarantined in it;
   * the next reserve creates it again.
   */
  protected override compact(): void {
    if (this.#count === 0 && this.#holes.length === 0) this.freeAll();
  }

  protected override freeAll(): void {
    const slab = this.#slab;
    this.#slab = undefined;
    this.#count = 0;
    this.#holes.length = 0;
    if (slab) this.dropSlab(slab);
  }
}
