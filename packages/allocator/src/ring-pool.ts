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
import type { Block } from './block';
import { alignUp, PoolBase, PoolBlock, type SlabRecord } from './pool-support';
import type { SlabProvider } from './slab-provider';

export interface RingPoolOptions {
  readonly label?: string;
  /** Bytes of the ring's single slab (rounded up to the alignment); also the pool's budget. */
  readonly capacity: number;
  /** Default and smallest block alignment, a power of two (default 16). */
  readonly alignment?: number;
}

const RING_OPTION_RULES: OptionRules = {
  label: { type: 'string' },
  capacity: { type: 'integer', min: 1 },
  alignment: { type: 'integer', min: 1 },
};

export class RingPool<M> extends PoolBase<M> {
  readonly maxBlockBytes: number;
  /** Bytes of the ring. */
  readonly capacity: number;
  readonly #units: number;
  #slab: SlabRecord<M> | undefined = undefined;

  // Positions in alignment units.
  #head = 0;
  #tail = 0;

  // Reservations in order, a circular queue of records (struct of arrays).
  #slotBegin = new Float64Array(64);
  #slotEnd = new Float64Array(64);
  #slotSeq = new Float64Array(64);
  #slotReleased = new Uint8Array(64);
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
    const mask = this.#slotBegin.length - 1;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#first + i) & mask;
      if (this.#slotReleased[slot] === 1) {
        const begin = this.#slotBegin[slot] as number;
        const end = this.#slotEnd[slot] as number;
        units += end > begin ? end - begin : this.#units - begin + end;
      }
    }
    return units * this.alignment;
  }

  protected override take(byteLength: number, alignUnits: number, grow: boolean): Block<M> | undefined {
    const units = byteLength === 0 ? 1 : Math.ceil(byteLength / this.alignment);
    const cap = this.#units;
    if (units > cap) return this.full();
    let slab = this.#slab;
    if (slab === undefined) {
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
    slab.live++;
    this.tally.reserved(byteLength);
    return new PoolBlock(
      slab,
      start * this.alignment,
      byteLength,
      this,
      slot,
      units * this.alignment,
      this.#slotSeq[slot] as number,
    );
  }

  #push(begin: number, end: number): number {
    if (this.#count === this.#slotBegin.length) {
      // Double the queue, oldest record first.
      const old = this.#count;
      const first = this.#first;
      const grow = <T extends Float64Array | Uint8Array>(from: T, to: T): T => {
        for (let i = 0; i < old; i++) to[i] = from[(first + i) & (old - 1)] as number;
        return to;
      };
      this.#slotBegin = grow(this.#slotBegin, new Float64Array(old * 2));
      this.#slotEnd = grow(this.#slotEnd, new Float64Array(old * 2));
      this.#slotSeq = grow(this.#slotSeq, new Float64Array(old * 2));
      this.#slotReleased = grow(this.#slotReleased, new Uint8Array(old * 2));
      this.#first = 0;
    }
    const slot = (this.#first + this.#count) & (this.#slotBegin.length - 1);
    this.#slotBegin[slot] = begin;
    this.#slotEnd[slot] = end;
    this.#slotSeq[slot] = this.#seq++;
    this.#slotReleased[slot] = 0;
    this.#count++;
    return slot;
  }

  protected override free(block: PoolBlock<M>): void {
    // Slots move when the queue grows; find the reservation by its sequence number (sequence numbers
    // of queued reservations are consecutive from the first one).
    const mask = this.#slotBegin.length - 1;
    const distance = block.seq - (this.#slotSeq[this.#first] as number);
    const slot = (this.#first + distance) & mask;
    if (distance < 0 || distance >= this.#count || this.#slotSeq[slot] !== block.seq) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.what}: release: block at offset ${block.offset} is not a live reservation of this ring`,
      );
    }
    this.#slotReleased[slot] = 1;
    // Reclaim from the tail every released reservation in order.
    while (this.#count > 0 && this.#slotReleased[this.#first] === 1) {
      this.#tail = this.#slotEnd[this.#first] as number;
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
    if (slab !== undefined) this.dropSlab(slab);
  }
}
