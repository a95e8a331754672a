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

  /** Bytes between tail and head that are neither live nor free yet (released out of order, padding). */
  get pendingReclaimBytes(): number {
    let units = 0;
    const q = this.#slots;
    for (let i = 0; i < this.#count; i++) {
      const at = ((this.#first + i) & ((q.length >> 2) - 1)) << 2;
      if (q[at + RELEASED] === 1) {
        const begin = q[at + BEGIN] as number;
        const end = q[at + END] as number;
        units += end > begin ? end - begin : this.#units - begin + end;
      }
    }
    return units * this.alignment;
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
    let start = alignUp(head, alignUnits);
    if (this.#count === 0) {
      start = 0;
      this.#tail = 0;
    } else if (head > tail) {
      // Free: [head, cap) then [0, tail).
      if (start + units > cap) {
        if (units > tail) return this.full();
        start = 0;
      }
    } else if (head === tail || start + units > tail) {
      return this.full();
    }
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
    // Slots move when the queue grows; find the reservation by its sequence number (sequence numbers
    // of queued reservations are consecutive from the first one).
    const q = this.#slots;
    const mask = (q.length >> 2) - 1;
    const distance = block.seq - (q[(this.#first << 2) + SEQ] as number);
    const at = ((this.#first + distance) & mask) << 2;
    if (distance < 0 || distance >= this.#count || q[at + SEQ] !== block.seq) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.what}: release: block at offset ${block.offset} is not a live reservation of this ring`,
      );
    }
    q[at + RELEASED] = 1;
    // Reclaim from the tail every released reservation in order.
    while (this.#count > 0 && q[(this.#first << 2) + RELEASED] === 1) {
      this.#tail = q[(this.#first << 2) + END] as number;
      this.#first = (this.#first + 1) & mask;
      this.#count--;
    }
    if (this.#count === 0) {
      this.#head = 0;
      this.#tail = 0;
    }
  }

  /** Gives the ring's slab back when no reservation is outstanding; the next reserve creates it again. */
  protected override compact(): void {
    if (this.#count === 0) this.freeAll();
  }

  protected override freeAll(): void {
    const slab = this.#slab;
    this.#slab = undefined;
    this.#count = 0;
    if (slab) this.dropSlab(slab);
  }
}
