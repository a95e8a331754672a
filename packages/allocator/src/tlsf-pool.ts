/**
 * TlsfPool: a two-level segregated-fit allocator (Masmano et al., "TLSF: a new dynamic memory allocator
 * for real-time systems", 2004) over slabs that grow within a byte budget.
 *
 * - Free ranges are kept in size classes: the first level is the power of two of the size (found with
 *   Math.clz32), the second level splits each power of two into 32 linear subdivisions. Two bitmaps
 *   (one word for the first level, one word per first-level class for the second) find a non-empty class
 *   that fits in O(1); reserve and release are O(1) (no loop depends on the number of blocks).
 * - Sizes are kept in units of the pool's alignment (16 bytes by default). A request first looks at a
 *   few ranges of its own class (an exact-size free range is taken even though TLSF's good fit would
 *   skip its class), then at the first non-empty class above it, whose every range fits.
 * - Released ranges coalesce at once with free physical neighbours, so no two free ranges are adjacent.
 * - Two heaps: requests below `smallThreshold` are served from slabs of their own, so that small,
 *   short-lived scratch buffers do not fragment the ranges of large tensors (on by default with a
 *   resizable provider).
 * - Growth within `budget`: with a provider that can resize slabs in place (`resizeSlab`: resizable
 *   ArrayBuffer, growable SharedArrayBuffer), a heap grows its newest slab by what the request lacks,
 *   in multiples of `growthGranule` (IREE's reserve-then-commit), and `trim` shrinks free tails where
 *   the provider allows. Otherwise a slab of `slabSize` bytes (`smallSlabSize` for the small heap) is
 *   added. Either way a request of `dedicatedThreshold` bytes or more gets a slab of exactly its size;
 *   near the budget a smaller slab that still fits is made, and empty slabs are given back first if
 *   that makes room.
 * - Bookkeeping lives in one Int32Array (eight fields per node) and a few bitmaps; a reserve allocates one small
 *   block object and nothing else.
 *
 * Limits: a slab holds at most 2^31 − 1 alignment units (32 GiB at the default alignment).
 *
 * Why one file past ~600 lines: it is one algorithm (two-level segregated fit: the bitmaps, the free
 * lists, split and coalesce, slab growth within the budget), whose invariants tie every method to the
 * same bitmaps and block links; splitting it would scatter one data structure's invariants across
 * files. Shared pool plumbing lives in pool-support.ts.
 */
import { checkOptions, describeValue, ErrorCode, KeelError, type OptionRules } from '@keel/hal';
import { growTypedArray } from '@keel/hal/driver';
import type { Block } from './block';
import type { Pool, PoolKind, PoolStats } from './pool';
import {
  checkAlignment,
  checkAlive,
  checkBudget,
  createSlabMemory,
  describePool,
  ownBlock,
  POOL_OPTION_RULES,
  PoolBlock,
  PoolCounters,
  type PoolOptions,
  poolLabel,
  resizeSlabMemory,
  SlabRecord,
} from './pool-support';
import type { SlabProvider } from './slab-provider';

export interface TlsfPoolOptions extends PoolOptions {
  /** Bytes of each slab of the large heap when the provider cannot resize slabs (default 4 MiB). */
  readonly slabSize?: number;
  /** Bytes of each slab of the small heap when the provider cannot resize slabs (default slabSize / 4). */
  readonly smallSlabSize?: number;
  /**
   * Requests below this many bytes are served from a heap of their own (0: one heap). Default: 64 KiB
   * with a resizable provider, 0 otherwise (with fixed slabs, a second heap costs a slab more than it
   * saves).
   */
  readonly smallThreshold?: number;
  /** Requests of at least this many bytes get a slab of their own size (default: `slabSize`). */
  readonly dedicatedThreshold?: number;
  /** With a resizable provider: slabs are created and grown in multiples of this (default 64 KiB). */
  readonly growthGranule?: number;
}

const TLSF_OPTION_RULES: OptionRules = {
  ...POOL_OPTION_RULES,
  slabSize: { type: 'integer', min: 1 },
  smallSlabSize: { type: 'integer', min: 1 },
  smallThreshold: { type: 'integer', min: 0 },
  dedicatedThreshold: { type: 'integer', min: 0 },
  growthGranule: { type: 'integer', min: 1 },
};

const SL_LOG2 = 5;
const SL_COUNT = 1 << SL_LOG2;
/** First-level classes: 0 holds sizes below SL_COUNT units (linear), then one per power of two. */
const FL_COUNT = 32 - SL_LOG2 + 1;
const CLASSES = FL_COUNT * SL_COUNT;
const HEAPS = 2;
const LARGE = 0;
const SMALL = 1;
const MAX_UNITS = 0x7fffffff;

const FREE = 1;
const USED = 2;

// Fields of a node (see #n).
const OFFSET = 0;
const SIZE = 1;
const SLAB = 2;
const PREV_PHYS = 3;
const NEXT_PHYS = 4;
const PREV_FREE = 5;
const NEXT_FREE = 6;
const FLAGS = 7;

/** How many ranges of a request's own class are tried before the class above. */
const OWN_CLASS_PROBES = 8;

/** The class index (fl * SL_COUNT + sl) a free range of `units` units is filed under. */
function classOf(units: number): number {
  if (units < SL_COUNT) return units;
  const f = 31 - Math.clz32(units);
  return ((f - SL_LOG2 + 1) << SL_LOG2) | ((units >>> (f - SL_LOG2)) & (SL_COUNT - 1));
}

/** The smallest class index whose every range holds `units` units (TLSF's rounded-up search). */
function searchClassOf(units: number): number {
  if (units < SL_COUNT) return units;
  const f = 31 - Math.clz32(units);
  return classOf(units + (1 << (f - SL_LOG2)) - 1);
}

function ctz(x: number): number {
  return 31 - Math.clz32(x & -x);
}

export class TlsfPool<M> implements Pool<M> {
  readonly kind: PoolKind = 'tlsf';
  readonly label: string;
  readonly alignment: number;
  readonly maxBlockBytes: number;
  /** Bytes of a regular slab (fixed providers). */
  readonly slabSize: number;
  readonly smallSlabSize: number;
  readonly smallThreshold: number;
  readonly dedicatedThreshold: number;
  readonly growthGranule: number;
  /** True when the provider resizes slabs in place. */
  readonly resizable: boolean;
  readonly #provider: SlabProvider<M>;
  readonly #budget: number;
  readonly #budgetUnits: number;
  readonly #counters = new PoolCounters();
  readonly #what: string;
  readonly #shift: number;
  readonly #slabUnits: readonly number[];
  readonly #dedicatedUnits: number;
  readonly #smallUnits: number;
  readonly #granuleUnits: number;
  #destroyed = false;

  // Size classes, per heap.
  readonly #flBitmap = new Int32Array(HEAPS);
  readonly #slBitmap = new Int32Array(HEAPS * FL_COUNT);
  readonly #heads = new Int32Array(HEAPS * CLASSES).fill(-1);

  // Nodes: ranges of slabs, free or used, recycled through #freeNode. Eight int32 fields per node
  // (OFFSET, SIZE in alignment units, SLAB, PREV_PHYS, NEXT_PHYS, PREV_FREE, NEXT_FREE, FLAGS) in one
  // array, so a node is one cache line; the heap of a node in its own array.
  #n = new Int32Array(256 * 8);
  #nHeap = new Uint8Array(256);
  #nodeCount = 0;
  #freeNode = -1;

  // Slabs by index; holes are recycled. The newest growable slab of each heap (resizable providers).
  readonly #slabs: (SlabRecord<M> | undefined)[] = [];
  readonly #slabHoles: number[] = [];
  readonly #tail = [-1, -1];

  constructor(provider: SlabProvider<M>, rawOptions?: TlsfPoolOptions) {
    const options = checkOptions<TlsfPoolOptions>('TlsfPool', rawOptions, TLSF_OPTION_RULES);
    this.label = poolLabel('tlsf', options.label);
    const what = describePool('TlsfPool', this.label);
    this.#what = what;
    if (typeof provider !== 'object' || provider === null || typeof provider.createSlab !== 'function') {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: provider must be a SlabProvider`);
    }
    this.alignment = options.alignment ?? 16;
    checkAlignment(what, '', this.alignment);
    const unit = this.alignment;
    this.#shift = 31 - Math.clz32(unit);
    this.#budget = options.budget ?? Number.POSITIVE_INFINITY;
    checkBudget(what, this.#budget);
    this.#budgetUnits = Math.floor(this.#budget / unit);
    const slabSize = options.slabSize ?? 4 * 1024 * 1024;
    checkPositive(what, 'slabSize', slabSize);
    const slabUnits = Math.min(MAX_UNITS, Math.ceil(slabSize / unit));
    this.slabSize = slabUnits * unit;
    const smallSlabSize = options.smallSlabSize ?? Math.max(unit, Math.floor(this.slabSize / 4));
    checkPositive(what, 'smallSlabSize', smallSlabSize);
    const smallSlabUnits = Math.min(MAX_UNITS, Math.ceil(smallSlabSize / unit));
    this.smallSlabSize = smallSlabUnits * unit;
    this.#slabUnits = [slabUnits, smallSlabUnits];
    this.resizable = typeof provider.resizeSlab === 'function';
    this.smallThreshold = options.smallThreshold ?? (this.resizable ? 64 * 1024 : 0);
    checkNonNegative(what, 'smallThreshold', this.smallThreshold);
    this.#smallUnits = Math.ceil(this.smallThreshold / unit);
    const threshold = options.dedicatedThreshold ?? this.slabSize;
    checkPositive(what, 'dedicatedThreshold', threshold);
    this.dedicatedThreshold = threshold;
    this.#dedicatedUnits = Math.ceil(threshold / unit);
    const granule = options.growthGranule ?? 64 * 1024;
    checkPositive(what, 'growthGranule', granule);
    this.#granuleUnits = Math.max(1, Math.ceil(granule / unit));
    this.growthGranule = this.#granuleUnits * unit;
    this.maxBlockBytes = Math.min(MAX_UNITS, this.#budgetUnits) * unit;
    this.#provider = provider;
  }

  get stats(): PoolStats {
    return this.#counters.snapshot(this.#budget);
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
    if (this.#destroyed) checkAlive(true, this.#what, op);
    if (!(byteLength >= 0 && byteLength <= Number.MAX_SAFE_INTEGER && Number.isInteger(byteLength))) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${this.#what}: ${op}: byteLength ${describeValue(byteLength)} must be a non-negative safe integer`,
      );
    }
    let alignUnits = 1;
    if (alignment !== undefined && alignment !== this.alignment) {
      checkAlignment(this.#what, op, alignment);
      if (alignment > this.alignment) alignUnits = alignment >>> this.#shift;
    }
    const units = byteLength === 0 ? 1 : Math.ceil(byteLength / this.alignment);
    if (units > MAX_UNITS - alignUnits) {
      this.#counters.failedReserves++;
      return undefined;
    }
    const heap = units < this.#smallUnits ? SMALL : LARGE;
    let node = this.#findFree(heap, units, alignUnits);
    if (node < 0) {
      if (!grow) return undefined;
      node = this.#grow(heap, units, alignUnits);
      if (node < 0) {
        this.#counters.failedReserves++;
        return undefined;
      }
    } else {
      this.#unlinkFree(node);
    }
    return this.#carve(node, units, alignUnits, byteLength);
  }

  /** A free node of `heap` that fits `units` at `alignUnits`, still linked; -1 if none. */
  #findFree(heap: number, units: number, alignUnits: number): number {
    const need = units + alignUnits - 1;
    const base = heap * CLASSES;
    // Own class first: ranges in it may or may not fit.
    let probe = this.#heads[base + classOf(units)] as number;
    for (let i = 0; i < OWN_CLASS_PROBES && probe >= 0; i++) {
      const size = this.#n[(probe << 3) + SIZE] as number;
      if (size >= need) return probe;
      if (size >= units && alignUnits > 1) {
        const offset = this.#n[(probe << 3) + OFFSET] as number;
        const pad = alignUp(offset, alignUnits) - offset;
        if (size - pad >= units) return probe;
      }
      probe = this.#n[(probe << 3) + NEXT_FREE] as number;
    }
    if (need > MAX_UNITS) return -1;
    const cls = searchClassOf(need);
    let fl = cls >>> SL_LOG2;
    if (fl >= FL_COUNT) return -1;
    const slBase = heap * FL_COUNT;
    let slMap = (this.#slBitmap[slBase + fl] as number) & (~0 << (cls & (SL_COUNT - 1)));
    if (slMap === 0) {
      const flMap = fl + 1 >= 32 ? 0 : (this.#flBitmap[heap] as number) & (~0 << (fl + 1));
      if (flMap === 0) return -1;
      fl = ctz(flMap);
      slMap = this.#slBitmap[slBase + fl] as number;
    }
    return this.#heads[base + ((fl << SL_LOG2) | ctz(slMap))] as number;
  }

  /** Marks a free, unlinked node used for a block of `units`, splitting off padding and the remainder. */
  #carve(node: number, units: number, alignUnits: number, byteLength: number): PoolBlock<M> {
    const slabIndex = this.#n[(node << 3) + SLAB] as number;
    const slab = this.#slabs[slabIndex] as SlabRecord<M>;
    let offset = this.#n[(node << 3) + OFFSET] as number;
    let size = this.#n[(node << 3) + SIZE] as number;
    if (alignUnits > 1) {
      const pad = alignUp(offset, alignUnits) - offset;
      if (pad > 0) {
        // The front padding becomes a free node before `node` (its previous neighbour is used).
        const front = this.#newNode(slabIndex, slab.heap);
        this.#n[(front << 3) + OFFSET] = offset;
        this.#n[(front << 3) + SIZE] = pad;
        const prev = this.#n[(node << 3) + PREV_PHYS] as number;
        this.#n[(front << 3) + PREV_PHYS] = prev;
        this.#n[(front << 3) + NEXT_PHYS] = node;
        if (prev >= 0) this.#n[(prev << 3) + NEXT_PHYS] = front;
        else slab.first = front;
        this.#n[(node << 3) + PREV_PHYS] = front;
        offset += pad;
        size -= pad;
        this.#n[(node << 3) + OFFSET] = offset;
        this.#n[(node << 3) + SIZE] = size;
        this.#linkFree(front);
      }
    }
    if (size > units) {
      // The remainder becomes a free node after `node` (its next neighbour is used).
      const rest = this.#newNode(slabIndex, slab.heap);
      this.#n[(rest << 3) + OFFSET] = offset + units;
      this.#n[(rest << 3) + SIZE] = size - units;
      const next = this.#n[(node << 3) + NEXT_PHYS] as number;
      this.#n[(rest << 3) + PREV_PHYS] = node;
      this.#n[(rest << 3) + NEXT_PHYS] = next;
      if (next >= 0) this.#n[(next << 3) + PREV_PHYS] = rest;
      else slab.last = rest;
      this.#n[(node << 3) + NEXT_PHYS] = rest;
      this.#n[(node << 3) + SIZE] = units;
      this.#linkFree(rest);
    }
    this.#n[(node << 3) + FLAGS] = USED;
    slab.live++;
    this.#counters.reserved(byteLength);
    return new PoolBlock(slab, offset * this.alignment, byteLength, this, node, units * this.alignment, 0);
  }

  release(block: Block<M>): void {
    if (this.#destroyed) checkAlive(true, this.#what, 'release');
    const own = ownBlock(block, this, this.#what);
    let node = own.handle;
    own.handle = -1;
    this.#counters.released(own.byteLength);
    const slab = own.slab as SlabRecord<M>;
    slab.live--;
    this.#n[(node << 3) + FLAGS] = FREE;
    const prev = this.#n[(node << 3) + PREV_PHYS] as number;
    if (prev >= 0 && this.#n[(prev << 3) + FLAGS] === FREE) {
      this.#unlinkFree(prev);
      this.#n[(prev << 3) + SIZE] =
        (this.#n[(prev << 3) + SIZE] as number) + (this.#n[(node << 3) + SIZE] as number);
      const next = this.#n[(node << 3) + NEXT_PHYS] as number;
      this.#n[(prev << 3) + NEXT_PHYS] = next;
      if (next >= 0) this.#n[(next << 3) + PREV_PHYS] = prev;
      else slab.last = prev;
      this.#recycle(node);
      node = prev;
    }
    const next = this.#n[(node << 3) + NEXT_PHYS] as number;
    if (next >= 0 && this.#n[(next << 3) + FLAGS] === FREE) {
      this.#unlinkFree(next);
      this.#n[(node << 3) + SIZE] =
        (this.#n[(node << 3) + SIZE] as number) + (this.#n[(next << 3) + SIZE] as number);
      const after = this.#n[(next << 3) + NEXT_PHYS] as number;
      this.#n[(node << 3) + NEXT_PHYS] = after;
      if (after >= 0) this.#n[(after << 3) + PREV_PHYS] = node;
      else slab.last = node;
      this.#recycle(next);
    }
    this.#linkFree(node);
  }

  resetPeaks(): void {
    this.#counters.resetPeaks();
  }

  /**
   * Gives every slab without live blocks back to the provider, and (with a provider that can shrink
   * slabs in place) shrinks the free tail of the others to a multiple of the growth granule.
   */
  trim(): void {
    checkAlive(this.#destroyed, this.#what, 'trim');
    this.#trimEmpty();
    if (this.resizable) this.#shrinkTails();
  }

  /** Returns the bytes given back. */
  #trimEmpty(): number {
    let bytes = 0;
    const slabs = this.#slabs;
    for (let i = 0; i < slabs.length; i++) {
      const slab = slabs[i];
      if (slab === undefined || slab.live !== 0) continue;
      const node = slab.first;
      this.#unlinkFree(node);
      this.#recycle(node);
      slabs[i] = undefined;
      this.#slabHoles.push(i);
      if (this.#tail[slab.heap] === i) this.#tail[slab.heap] = -1;
      bytes += slab.byteLength;
      this.#counters.slabDestroyed(slab.byteLength);
      this.#provider.destroySlab(slab.memory);
    }
    return bytes;
  }

  #shrinkTails(): void {
    const unit = this.alignment;
    for (const slab of this.#slabs) {
      if (slab === undefined) continue;
      const last = slab.last;
      if (this.#n[(last << 3) + FLAGS] !== FREE) continue;
      const offset = this.#n[(last << 3) + OFFSET] as number;
      const slabUnits = slab.byteLength / unit;
      const keep = Math.max(this.#granuleUnits, alignUp(offset, this.#granuleUnits));
      if (keep >= slabUnits) continue;
      if (!resizeSlabMemory(this.#provider, slab.memory, keep * unit)) continue;
      const removed = slabUnits - keep;
      slab.byteLength = keep * unit;
      this.#counters.shrunk(removed * unit);
      this.#unlinkFree(last);
      const size = (this.#n[(last << 3) + SIZE] as number) - removed;
      if (size > 0) {
        this.#n[(last << 3) + SIZE] = size;
        this.#linkFree(last);
      } else {
        const prev = this.#n[(last << 3) + PREV_PHYS] as number;
        this.#n[(prev << 3) + NEXT_PHYS] = -1;
        slab.last = prev;
        this.#recycle(last);
      }
    }
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const slab of this.#slabs) {
      if (slab === undefined) continue;
      this.#counters.slabDestroyed(slab.byteLength);
      this.#provider.destroySlab(slab.memory);
    }
    this.#slabs.length = 0;
    this.#counters.dropLive();
  }

  /** Whether `units` more can be reserved within the budget, after giving empty slabs back if needed. */
  #roomFor(units: number): number {
    let room = this.#budgetUnits - this.#counters.reservedBytes / this.alignment;
    if (room < units && this.#trimEmpty() > 0)
      room = this.#budgetUnits - this.#counters.reservedBytes / this.alignment;
    return room;
  }

  /**
   * Grows `heap` so that it holds `units` at `alignUnits`; returns the free node (unlinked) to carve,
   * or -1 if the budget (or the provider) does not allow it.
   */
  #grow(heap: number, units: number, alignUnits: number): number {
    const dedicated = units >= this.#dedicatedUnits;
    if (this.resizable && !dedicated) {
      const node = this.#extendTail(heap, units, alignUnits);
      if (node >= 0) return node;
    }
    let slabUnits: number;
    if (dedicated) slabUnits = units;
    else if (this.resizable) slabUnits = alignUp(units, this.#granuleUnits);
    else slabUnits = Math.max(this.#slabUnits[heap] as number, units);
    const room = this.#roomFor(units);
    if (room < units) return -1;
    slabUnits = Math.min(slabUnits, room, MAX_UNITS);
    const byteLength = slabUnits * this.alignment;
    const memory = createSlabMemory(this.#provider, byteLength, this.#what);
    const index = this.#slabHoles.length > 0 ? (this.#slabHoles.pop() as number) : this.#slabs.length;
    const slab = new SlabRecord(byteLength, memory, index);
    slab.heap = heap;
    slab.dedicated = dedicated;
    this.#slabs[index] = slab;
    this.#counters.slabCreated(byteLength);
    if (this.resizable && !dedicated) this.#tail[heap] = index;
    const node = this.#newNode(index, heap);
    this.#n[(node << 3) + OFFSET] = 0;
    this.#n[(node << 3) + SIZE] = slabUnits;
    this.#n[(node << 3) + PREV_PHYS] = -1;
    this.#n[(node << 3) + NEXT_PHYS] = -1;
    this.#n[(node << 3) + FLAGS] = FREE;
    slab.first = node;
    slab.last = node;
    return node;
  }

  /** Resizes the newest slab of `heap` in place so that its end holds the request; -1 if it cannot. */
  #extendTail(heap: number, units: number, alignUnits: number): number {
    const index = this.#tail[heap] as number;
    if (index < 0) return -1;
    const slab = this.#slabs[index] as SlabRecord<M>;
    const slabUnits = slab.byteLength / this.alignment;
    const last = slab.last;
    const lastFree = this.#n[(last << 3) + FLAGS] === FREE;
    const start = alignUp(lastFree ? (this.#n[(last << 3) + OFFSET] as number) : slabUnits, alignUnits);
    const delta = alignUp(start + units - slabUnits, this.#granuleUnits);
    // No trimming here: that could give back this very slab (#grow trims before making a new one).
    const room = this.#budgetUnits - this.#counters.reservedBytes / this.alignment;
    if (slabUnits + delta > MAX_UNITS || room < delta) return -1;
    if (!resizeSlabMemory(this.#provider, slab.memory, (slabUnits + delta) * this.alignment)) {
      this.#tail[heap] = -1;
      return -1;
    }
    slab.byteLength = (slabUnits + delta) * this.alignment;
    this.#counters.grown(delta * this.alignment);
    if (lastFree) {
      this.#unlinkFree(last);
      this.#n[(last << 3) + SIZE] = (this.#n[(last << 3) + SIZE] as number) + delta;
      return last;
    }
    const node = this.#newNode(index, heap);
    this.#n[(node << 3) + OFFSET] = slabUnits;
    this.#n[(node << 3) + SIZE] = delta;
    this.#n[(node << 3) + PREV_PHYS] = last;
    this.#n[(node << 3) + NEXT_PHYS] = -1;
    this.#n[(last << 3) + NEXT_PHYS] = node;
    this.#n[(node << 3) + FLAGS] = FREE;
    slab.last = node;
    return node;
  }

  #linkFree(node: number): void {
    const heap = this.#nHeap[node] as number;
    const cls = classOf(this.#n[(node << 3) + SIZE] as number);
    const at = heap * CLASSES + cls;
    const head = this.#heads[at] as number;
    this.#n[(node << 3) + NEXT_FREE] = head;
    this.#n[(node << 3) + PREV_FREE] = -1;
    if (head >= 0) this.#n[(head << 3) + PREV_FREE] = node;
    this.#heads[at] = node;
    this.#n[(node << 3) + FLAGS] = FREE;
    const fl = cls >>> SL_LOG2;
    this.#flBitmap[heap] = (this.#flBitmap[heap] as number) | (1 << fl);
    const sl = heap * FL_COUNT + fl;
    this.#slBitmap[sl] = (this.#slBitmap[sl] as number) | (1 << (cls & (SL_COUNT - 1)));
  }

  #unlinkFree(node: number): void {
    const prev = this.#n[(node << 3) + PREV_FREE] as number;
    const next = this.#n[(node << 3) + NEXT_FREE] as number;
    if (next >= 0) this.#n[(next << 3) + PREV_FREE] = prev;
    if (prev >= 0) {
      this.#n[(prev << 3) + NEXT_FREE] = next;
    } else {
      const heap = this.#nHeap[node] as number;
      const cls = classOf(this.#n[(node << 3) + SIZE] as number);
      this.#heads[heap * CLASSES + cls] = next;
      if (next < 0) {
        const fl = cls >>> SL_LOG2;
        const sl = heap * FL_COUNT + fl;
        const map = (this.#slBitmap[sl] as number) & ~(1 << (cls & (SL_COUNT - 1)));
        this.#slBitmap[sl] = map;
        if (map === 0) this.#flBitmap[heap] = (this.#flBitmap[heap] as number) & ~(1 << fl);
      }
    }
  }

  #newNode(slab: number, heap: number): number {
    let node = this.#freeNode;
    if (node >= 0) {
      this.#freeNode = this.#n[(node << 3) + NEXT_FREE] as number;
    } else {
      if (this.#nodeCount === this.#nHeap.length) this.#growNodes();
      node = this.#nodeCount++;
    }
    this.#n[(node << 3) + SLAB] = slab;
    this.#nHeap[node] = heap;
    return node;
  }

  #recycle(node: number): void {
    this.#n[(node << 3) + FLAGS] = 0;
    this.#n[(node << 3) + NEXT_FREE] = this.#freeNode;
    this.#freeNode = node;
  }

  #growNodes(): void {
    // The driver kit's growth rule doubles both parallel arrays (8 words and 1 heap byte per node).
    this.#n = growTypedArray(this.#n, this.#n.length, this.#n.length * 2);
    this.#nHeap = growTypedArray(this.#nHeap, this.#nHeap.length, this.#nHeap.length * 2);
  }

  /**
   * Walks every slab and checks the invariants (for tests): nodes tile each slab without gaps or
   * overlaps, first/last links are right, no two free nodes are adjacent, every free node is in the
   * list of its heap and class and the bitmaps match the lists. Throws INTERNAL naming the broken rule.
   */
  checkInvariants(): void {
    const fail = (rule: string): never => {
      throw new KeelError(ErrorCode.INTERNAL, `${this.#what}: invariant broken: ${rule}`);
    };
    let freeNodes = 0;
    let reserved = 0;
    for (const slab of this.#slabs) {
      if (slab === undefined) continue;
      reserved += slab.byteLength;
      let node = slab.first;
      let expected = 0;
      let prev = -1;
      let live = 0;
      while (node >= 0) {
        if (this.#n[(node << 3) + PREV_PHYS] !== prev)
          fail(`slab ${slab.id}: node ${node} has a wrong previous link`);
        if (this.#n[(node << 3) + OFFSET] !== expected)
          fail(`slab ${slab.id}: gap or overlap at unit ${expected}`);
        if (this.#n[(node << 3) + SLAB] !== slab.index) fail(`node ${node} names the wrong slab`);
        if (this.#nHeap[node] !== slab.heap) fail(`node ${node} names the wrong heap`);
        const flags = this.#n[(node << 3) + FLAGS];
        if (flags === FREE) {
          freeNodes++;
          if (prev >= 0 && this.#n[(prev << 3) + FLAGS] === FREE)
            fail(`slab ${slab.id}: adjacent free nodes`);
        } else if (flags === USED) live++;
        else fail(`slab ${slab.id}: recycled node ${node} is linked`);
        expected += this.#n[(node << 3) + SIZE] as number;
        prev = node;
        node = this.#n[(node << 3) + NEXT_PHYS] as number;
      }
      if (prev !== slab.last) fail(`slab ${slab.id}: wrong last node`);
      if (expected * this.alignment !== slab.byteLength) fail(`slab ${slab.id}: nodes do not cover the slab`);
      if (live !== slab.live) fail(`slab ${slab.id}: live count ${slab.live}, found ${live}`);
    }
    if (reserved !== this.#counters.reservedBytes) fail(`slabs hold ${reserved} bytes, stats say otherwise`);
    let listed = 0;
    for (let heap = 0; heap < HEAPS; heap++) {
      for (let cls = 0; cls < CLASSES; cls++) {
        const fl = cls >>> SL_LOG2;
        const bit = ((this.#slBitmap[heap * FL_COUNT + fl] as number) >>> (cls & (SL_COUNT - 1))) & 1;
        let node = this.#heads[heap * CLASSES + cls] as number;
        if ((node >= 0 ? 1 : 0) !== bit) fail(`heap ${heap} class ${cls}: bitmap disagrees with its list`);
        let prev = -1;
        while (node >= 0) {
          listed++;
          if (this.#n[(node << 3) + FLAGS] !== FREE) fail(`class ${cls}: node ${node} is not free`);
          if (this.#nHeap[node] !== heap) fail(`class ${cls}: node ${node} is in the wrong heap`);
          if (classOf(this.#n[(node << 3) + SIZE] as number) !== cls)
            fail(`class ${cls}: node ${node} is in the wrong class`);
          if (this.#n[(node << 3) + PREV_FREE] !== prev) fail(`class ${cls}: wrong free-list back link`);
          prev = node;
          node = this.#n[(node << 3) + NEXT_FREE] as number;
        }
      }
      for (let fl = 0; fl < FL_COUNT; fl++) {
        const flBit = (((this.#flBitmap[heap] as number) >>> fl) & 1) === 1;
        if (flBit !== (this.#slBitmap[heap * FL_COUNT + fl] !== 0))
          fail(`first-level bitmap disagrees at ${fl}`);
      }
    }
    if (listed !== freeNodes) fail(`${freeNodes} free nodes but ${listed} listed`);
  }
}

function alignUp(value: number, alignUnits: number): number {
  return alignUnits === 1 ? value : Math.ceil(value / alignUnits) * alignUnits;
}

function checkPositive(what: string, name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: ${name} ${describeValue(value)} must be a positive safe integer number of bytes`,
    );
  }
}

function checkNonNegative(what: string, name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: ${name} ${describeValue(value)} must be a non-negative safe integer number of bytes`,
    );
  }
}
