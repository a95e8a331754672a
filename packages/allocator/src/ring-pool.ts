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

import { checkOptions, describeValue, ErrorCode, KeelError, type OptionRules } from '@keel/hal';
import type { Block } from './block';
import type { Pool, PoolKind, PoolStats } from './pool';
import {
  checkAlignment,
  checkAlive,
  checkByteLength,
  createSlabMemory,
  describePool,
  ownBlock,
  PoolBlock,
  PoolCounters,
  poolLabel,
  SlabRecord,
} from './pool-support';
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

export class RingPool<M> implements Pool<M> {
  readonly kind: PoolKind = 'ring';
  readonly label: string;
  readonly alignment: number;
  readonly maxBlockBytes: number;
  /** Bytes of the ring. */
  readonly capacity: number;
  readonly #provider: SlabProvider<M>;
  readonly #counters = new PoolCounters();
  readonly #what: string;
  readonly #shift: number;
  readonly #capacityUnits: number;
  #slab: SlabRecord<M> | undefined = undefined;
  #destroyed = false;

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

  constructor(provider: SlabProvider<M>, rawOptions: RingPoolOptions) {
    const options = checkOptions<Partial<RingPoolOptions>>('RingPool', rawOptions, RING_OPTION_RULES);
    this.label = poolLabel('ring', options.label);
    this.#what = describePool('RingPool', this.label);
    this.alignment = options.alignment ?? 16;
    checkAlignment(this.#what, '', this.alignment);
    const capacity = options.capacity;
    if (typeof capacity !== 'number' || !Number.isSafeInteger(capacity) || capacity <= 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${this.#what}: capacity ${describeValue(capacity)} must be a positive safe integer number of bytes`,
      );
    }
    this.#shift = 31 - Math.clz32(this.alignment);
    this.#capacityUnits = Math.ceil(capacity / this.alignment);
    this.capacity = this.#capacityUnits * this.alignment;
    this.maxBlockBytes = this.capacity;
    this.#provider = provider;
  }

  get stats(): PoolStats {
    return this.#counters.snapshot(this.capacity);
  }

  /** Bytes between tail and head that are neither live nor free yet (released out of order, padding). */
  get pendingReclaimBytes(): number {
    let units = 0;
    const mask = this.#slotBegin.length - 1;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#first + i) & mask;
      if (this.#slotReleased[slot] === 1) units += this.#span(slot);
    }
    return units * this.alignment;
  }

  #span(slot: number): number {
    const begin = this.#slotBegin[slot] as number;
    const end = this.#slotEnd[slot] as number;
    return end > begin ? end - begin : this.#capacityUnits - begin + end;
  }

  reserve(byteLength: number, alignment?: number): Block<M> | undefined {
    return this.#reserve(byteLength, alignment, true, 'reserve');
  }

  reserveExisting(byteLength: number, alignment?: number): Block<M> | undefined {
    return this.#reserve(byteLength, alignment, false, 'reserveExisting');
  }

  #reserve(
    byteLength: number,
    alignment: number | undefined,
    grow: boolean,
    op: string,
  ): Block<M> | undefined {
    checkAlive(this.#destroyed, this.#what, op);
    checkByteLength(this.#what, op, byteLength);
    let alignUnits = 1;
    if (alignment !== undefined) {
      checkAlignment(this.#what, op, alignment);
      if (alignment > this.alignment) alignUnits = alignment >>> this.#shift;
    }
    const units = byteLength === 0 ? 1 : Math.ceil(byteLength / this.alignment);
    const cap = this.#capacityUnits;
    const counters = this.#counters;
    if (units > cap) {
      counters.failedReserves++;
      return undefined;
    }
    let slab = this.#slab;
    if (slab === undefined) {
      if (!grow) return undefined;
      const memory = createSlabMemory(this.#provider, this.capacity, this.#what);
      slab = new SlabRecord(this.capacity, memory, 0);
      this.#slab = slab;
      counters.slabCreated(this.capacity);
    }
    const head = this.#head;
    const tail = this.#tail;
    let start: number;
    if (this.#count === 0) {
      start = 0;
      this.#tail = 0;
    } else if (head > tail) {
      // Free: [head, cap) then [0, tail).
      start = alignUp(head, alignUnits);
      if (start + units > cap) {
        if (units > tail) return this.#full();
        start = 0;
      }
    } else if (head < tail) {
      start = alignUp(head, alignUnits);
      if (start + units > tail) return this.#full();
    } else {
      return this.#full();
    }
    const begin = this.#count === 0 ? 0 : head;
    const end = start + units;
    this.#head = end;
    const slot = this.#push(begin, end);
    slab.live++;
    const block = new PoolBlock(
      slab,
      start * this.alignment,
      byteLength,
      this,
      slot,
      units * this.alignment,
      this.#slotSeq[slot] as number,
    );
    counters.reserved(byteLength);
    return block;
  }

  #full(): undefined {
    this.#counters.failedReserves++;
    return undefined;
  }

  #push(begin: number, end: number): number {
    if (this.#count === this.#slotBegin.length) this.#growSlots();
    const slot = (this.#first + this.#count) & (this.#slotBegin.length - 1);
    this.#slotBegin[slot] = begin;
    this.#slotEnd[slot] = end;
    this.#slotSeq[slot] = this.#seq++;
    this.#slotReleased[slot] = 0;
    this.#count++;
    return slot;
  }

  #growSlots(): void {
    const old = this.#slotBegin.length;
    const size = old * 2;
    const begin = new Float64Array(size);
    const end = new Float64Array(size);
    const seq = new Float64Array(size);
    const released = new Uint8Array(size);
    for (let i = 0; i < this.#count; i++) {
      const from = (this.#first + i) & (old - 1);
      begin[i] = this.#slotBegin[from] as number;
      end[i] = this.#slotEnd[from] as number;
      seq[i] = this.#slotSeq[from] as number;
      released[i] = this.#slotReleased[from] as number;
    }
    this.#slotBegin = begin;
    this.#slotEnd = end;
    this.#slotSeq = seq;
    this.#slotReleased = released;
    this.#first = 0;
  }

  release(block: Block<M>): void {
    checkAlive(this.#destroyed, this.#what, 'release');
    const own = ownBlock(block, this, this.#what);
    // Slots move when the queue grows; find the reservation by its sequence number.
    const slot = this.#findSlot(own);
    own.handle = -1;
    this.#slotReleased[slot] = 1;
    this.#counters.released(own.byteLength);
    (own.slab as SlabRecord<M>).live--;
    // Reclaim from the tail every released reservation in order.
    const mask = this.#slotBegin.length - 1;
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

  #findSlot(block: PoolBlock<M>): number {
    const mask = this.#slotBegin.length - 1;
    const firstSeq = this.#slotSeq[this.#first] as number;
    // Sequence numbers of queued reservations are consecutive from the first one.
    const distance = block.seq - firstSeq;
    const slot = (this.#first + distance) & mask;
    if (distance < 0 || distance >= this.#count || this.#slotSeq[slot] !== block.seq) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.#what}: release: block at offset ${block.offset} is not a live reservation of this ring`,
      );
    }
    return slot;
  }

  resetPeaks(): void {
    this.#counters.resetPeaks();
  }

  /** Gives the ring's slab back when no reservation is outstanding; the next reserve creates it again. */
  trim(): void {
    checkAlive(this.#destroyed, this.#what, 'trim');
    if (this.#slab !== undefined && this.#count === 0) this.#dropSlab();
  }

  #dropSlab(): void {
    const slab = this.#slab;
    if (slab === undefined) return;
    this.#slab = undefined;
    this.#counters.slabDestroyed(slab.byteLength);
    this.#provider.destroySlab(slab.memory);
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#dropSlab();
    this.#count = 0;
    this.#counters.dropLive();
  }
}

function alignUp(value: number, alignUnits: number): number {
  return alignUnits === 1 ? value : Math.ceil(value / alignUnits) * alignUnits;
}
