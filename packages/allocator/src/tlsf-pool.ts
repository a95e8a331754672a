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
 * - Quarantine: a quarantined block's node stays used for good (flag HELD), so its slab is never given
 *   back and its range never reused; the free ranges beside it are. A request is refused for good
 *   (`fitsBeside` false) only when neither the budget left beside the slabs holding quarantined blocks
 *   nor a gap between those blocks (the last one of a growable slab extended by that budget) can hold
 *   it once every other block is released. Otherwise a reserve finds it then: one that cannot grow
 *   looks at every free range of its heap from its class up, aligned starts included (`#scanFree`,
 *   O(free ranges), only on that path), which the good-fit search skips, and a growable slab grows by
 *   less than a granule where the budget leaves less.
 * - Bookkeeping lives in one Int32Array (eight fields per node) and a few bitmaps; a reserve allocates one small
 *   block object and nothing else.
 *
 * Limits: a slab holds at most 2^31 − 1 alignment units (32 GiB at the default alignment).
 *
 * This file is the algorithm (two-level segregated fit: the bitmaps, the free lists, split and
 * coalesce, slab growth within the budget, the quarantine's room), whose every method keeps the same
 * bitmaps and node links consistent. Beside it: the layout of that bookkeeping (size classes and node
 * fields, tlsf-layout.ts), the check of its invariants that tests run (`checkInvariants`,
 * tlsf-invariants.ts) and the plumbing shared by every pool (pool-support.ts).
 */
import { checkOptions, type OptionRules } from '@keel/hal';
import { growTypedArray } from '@keel/hal/driver';
import {
  alignUp,
  POOL_OPTION_RULES,
  POSITIVE,
  PoolBase,
  PoolBlock,
  type PoolOptions,
  type SlabRecord,
} from './pool-support';
import type { SlabProvider } from './slab-provider';
import { checkTlsfInvariants } from './tlsf-invariants';
import {
  CLASSES,
  classOf,
  FL_COUNT,
  FLAGS,
  FREE,
  HEAPS,
  HELD,
  LARGE,
  MAX_UNITS,
  NEXT_FREE,
  NEXT_PHYS,
  OFFSET,
  PREV_FREE,
  PREV_PHYS,
  SIZE,
  SL_COUNT,
  SL_LOG2,
  SLAB,
  SMALL,
  searchClassOf,
  USED,
} from './tlsf-layout';

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
  slabSize: POSITIVE,
  smallSlabSize: POSITIVE,
  smallThreshold: { type: 'integer', min: 0 },
  dedicatedThreshold: POSITIVE,
  growthGranule: POSITIVE,
};

/** How many ranges of a request's own class are tried before the class above. */
const OWN_CLASS_PROBES = 8;

function ctz(x: number): number {
  return 31 - Math.clz32(x & -x);
}

export class TlsfPool<M> extends PoolBase<M> {
  readonly maxBlockBytes: number;
  /** Bytes of a regular slab (fixed providers). */
  readonly slabSize: number;
  readonly smallSlabSize: number;
  readonly smallThreshold: number;
  readonly dedicatedThreshold: number;
  readonly growthGranule: number;
  /** True when the provider resizes slabs in place. */
  readonly resizable: boolean;
  readonly #budgetUnits: number;
  readonly #slabUnits: readonly number[];
  readonly #dedicatedUnits: number;
  readonly #smallUnits: number;
  readonly #granuleUnits: number;

  // Size classes, per heap.
  readonly #flBitmap = new Int32Array(HEAPS);
  readonly #slBitmap = new Int32Array(HEAPS * FL_COUNT);
  readonly #heads = new Int32Array(HEAPS * CLASSES).fill(-1);

  // Nodes: ranges of slabs, free or used, recycled through #freeNode. Eight int32 fields per node
  // (OFFSET, SIZE in alignment units, SLAB, PREV_PHYS, NEXT_PHYS, PREV_FREE, NEXT_FREE, FLAGS) in one
  // array, so a node is one cache line; the heap of a node in its own array. Methods read them through
  // a local `n` (re-read after #newNode, which may grow the arrays) and a node's base index `node << 3`.
  #n = new Int32Array(256 * 8);
  #nHeap = new Uint8Array(256);
  #nodeCount = 0;
  #freeNode = -1;

  // Slabs by index; holes are recycled. The newest growable slab of each heap (resizable providers).
  readonly #slabs: (SlabRecord<M> | undefined)[] = [];
  readonly #slabHoles: number[] = [];
  readonly #tail = [-1, -1];

  constructor(provider: SlabProvider<M>, options?: TlsfPoolOptions) {
    const o = checkOptions<TlsfPoolOptions>('TlsfPool', options, TLSF_OPTION_RULES);
    super('TlsfPool', provider, o);
    // checkOptions made sure every size below is a positive (smallThreshold: non-negative) safe integer.
    const unit = this.alignment;
    const unitsOf = (bytes: number): number => Math.min(MAX_UNITS, Math.ceil(bytes / unit));
    this.#budgetUnits = Math.floor(this.budget / unit);
    const slabUnits = unitsOf(o.slabSize ?? 4 << 20);
    this.slabSize = slabUnits * unit;
    const smallSlabUnits = unitsOf(o.smallSlabSize ?? Math.max(unit, Math.floor(this.slabSize / 4)));
    this.smallSlabSize = smallSlabUnits * unit;
    this.#slabUnits = [slabUnits, smallSlabUnits];
    this.resizable = typeof provider.resizeSlab === 'function';
    this.smallThreshold = o.smallThreshold ?? (this.resizable ? 64 << 10 : 0);
    this.#smallUnits = Math.ceil(this.smallThreshold / unit);
    this.dedicatedThreshold = o.dedicatedThreshold ?? this.slabSize;
    this.#dedicatedUnits = Math.ceil(this.dedicatedThreshold / unit);
    this.#granuleUnits = Math.max(1, Math.ceil((o.growthGranule ?? 64 << 10) / unit));
    this.growthGranule = this.#granuleUnits * unit;
    this.maxBlockBytes = Math.min(MAX_UNITS, this.#budgetUnits) * unit;
  }

  protected override take(
    byteLength: number,
    units: number,
    alignUnits: number,
    grow: boolean,
  ): PoolBlock<M> | undefined {
    if (units > MAX_UNITS - alignUnits) return this.full();
    const heap = units < this.#smallUnits ? SMALL : LARGE;
    let node = this.#findFree(heap, units, alignUnits);
    if (node >= 0) this.#unlinkFree(node);
    else {
      if (!grow) return undefined;
      node = this.#grow(heap, units, alignUnits);
      if (node < 0) {
        // The pool cannot grow: look at every free range before giving up (the good-fit search above
        // skips ranges that hold the request only at their aligned start, or beyond OWN_CLASS_PROBES).
        node = this.#scanFree(heap, units, alignUnits);
        if (node < 0) return this.full();
        this.#unlinkFree(node);
      }
    }
    return this.#carve(node, units, alignUnits, byteLength);
  }

  /** A free node of `heap` that fits `units` at `alignUnits`, still linked; -1 if none. */
  #findFree(heap: number, units: number, alignUnits: number): number {
    const n = this.#n;
    const need = units + alignUnits - 1;
    const base = heap * CLASSES;
    // Own class first: ranges in it may or may not fit.
    let probe = this.#heads[base + classOf(units)] as number;
    for (let i = 0; i < OWN_CLASS_PROBES && probe >= 0; i++) {
      const at = probe << 3;
      const size = n[at + SIZE] as number;
      if (size >= need) return probe;
      if (size >= units && alignUnits > 1) {
        const offset = n[at + OFFSET] as number;
        if (size - (alignUp(offset, alignUnits) - offset) >= units) return probe;
      }
      probe = n[at + NEXT_FREE] as number;
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

  /**
   * Every free node of `heap` from the class of `units` up, in class order: the first that holds
   * `units` at `alignUnits` (from its aligned start), still linked; -1 if none. O(free ranges): only
   * a reserve that cannot grow comes here, so that what `canEverReserve` promises is found.
   */
  #scanFree(heap: number, units: number, alignUnits: number): number {
    const n = this.#n;
    const base = heap * CLASSES;
    const slBase = heap * FL_COUNT;
    const first = classOf(units);
    let fl = first >>> SL_LOG2;
    let slMap = (this.#slBitmap[slBase + fl] as number) & (~0 << (first & (SL_COUNT - 1)));
    for (;;) {
      while (slMap !== 0) {
        const sl = ctz(slMap);
        slMap &= slMap - 1;
        let node = this.#heads[base + ((fl << SL_LOG2) | sl)] as number;
        for (; node >= 0; node = n[(node << 3) + NEXT_FREE] as number) {
          const at = node << 3;
          const offset = n[at + OFFSET] as number;
          if (alignUp(offset, alignUnits) + units <= offset + (n[at + SIZE] as number)) return node;
        }
      }
      if (++fl >= FL_COUNT) return -1;
      const flMap = (this.#flBitmap[heap] as number) & (~0 << fl);
      if (flMap === 0) return -1;
      fl = ctz(flMap);
      slMap = this.#slBitmap[slBase + fl] as number;
    }
  }

  /** Marks a free, unlinked node used for a block of `units`, splitting off padding and the remainder. */
  #carve(node: number, units: number, alignUnits: number, byteLength: number): PoolBlock<M> {
    let n = this.#n;
    const at = node << 3;
    const slabIndex = n[at + SLAB] as number;
    const slab = this.#slabs[slabIndex] as SlabRecord<M>;
    let offset = n[at + OFFSET] as number;
    let size = n[at + SIZE] as number;
    const pad = alignUp(offset, alignUnits) - offset;
    if (pad > 0) {
      // The front padding becomes a free node before `node` (its previous neighbour is used).
      const prev = n[at + PREV_PHYS] as number;
      const front = this.#newNode(slabIndex, slab.heap, offset, pad, prev, node);
      n = this.#n;
      if (prev >= 0) n[(prev << 3) + NEXT_PHYS] = front;
      else slab.first = front;
      n[at + PREV_PHYS] = front;
      offset += pad;
      size -= pad;
      n[at + OFFSET] = offset;
      n[at + SIZE] = size;
      this.#linkFree(front);
    }
    if (size > units) {
      // The remainder becomes a free node after `node` (its next neighbour is used).
      const next = n[at + NEXT_PHYS] as number;
      const rest = this.#newNode(slabIndex, slab.heap, offset + units, size - units, node, next);
      n = this.#n;
      if (next >= 0) n[(next << 3) + PREV_PHYS] = rest;
      else slab.last = rest;
      n[at + NEXT_PHYS] = rest;
      n[at + SIZE] = units;
      this.#linkFree(rest);
    }
    n[at + FLAGS] = USED;
    return new PoolBlock(slab, offset * this.alignment, byteLength, this, node, units * this.alignment, 0);
  }

  protected override free(block: PoolBlock<M>): void {
    const n = this.#n;
    let node = block.handle;
    n[(node << 3) + FLAGS] = FREE;
    const prev = n[(node << 3) + PREV_PHYS] as number;
    if (prev >= 0 && n[(prev << 3) + FLAGS] === FREE) {
      this.#unlinkFree(prev);
      this.#merge(prev, node, block.slab);
      node = prev;
    }
    const next = n[(node << 3) + NEXT_PHYS] as number;
    if (next >= 0 && n[(next << 3) + FLAGS] === FREE) {
      this.#unlinkFree(next);
      this.#merge(node, next, block.slab);
    }
    this.#linkFree(node);
  }

  /** Merges `next` (unlinked) into its physical predecessor `node` and recycles it. */
  #merge(node: number, next: number, slab: SlabRecord<M>): void {
    const n = this.#n;
    n[(node << 3) + SIZE]! += n[(next << 3) + SIZE] as number;
    const after = n[(next << 3) + NEXT_PHYS] as number;
    n[(node << 3) + NEXT_PHYS] = after;
    if (after >= 0) n[(after << 3) + PREV_PHYS] = node;
    else slab.last = node;
    this.#recycle(next);
  }

  protected override hold(block: PoolBlock<M>): void {
    this.#n[(block.handle << 3) + FLAGS] = HELD;
  }

  /**
   * Once every block but the quarantined ones is released, the slabs without quarantined blocks can be
   * given back (#grow does so to make room): what stays is the slabs holding quarantined blocks, with
   * free gaps between those blocks, and the budget beside them.
   */
  protected override fitsBeside(units: number, alignUnits: number): boolean {
    if (units > MAX_UNITS - alignUnits) return false;
    const n = this.#n;
    const unit = this.alignment;
    const slabs = this.#slabs;
    let held = 0;
    for (const slab of slabs) if (slab?.quarantined) held += slab.byteLength / unit;
    const room = this.#budgetUnits - held;
    // A new slab (#grow makes one of at least `units` whenever the room allows).
    if (room >= units) return true;
    const heap = units < this.#smallUnits ? SMALL : LARGE;
    const extendable = this.resizable && units < this.#dedicatedUnits;
    for (let i = 0; i < slabs.length; i++) {
      const slab = slabs[i];
      if (!slab?.quarantined || slab.heap !== heap) continue;
      let gap = 0;
      for (let node = slab.first; node >= 0; node = n[(node << 3) + NEXT_PHYS] as number) {
        const at = node << 3;
        if (n[at + FLAGS] !== HELD) continue;
        if (alignUp(gap, alignUnits) + units <= (n[at + OFFSET] as number)) return true;
        gap = (n[at + OFFSET] as number) + (n[at + SIZE] as number);
      }
      let end = slab.byteLength / unit;
      // The heap's growable slab: its last gap grows in place by the room left (#extendTail).
      if (extendable && this.#tail[heap] === i) end = Math.min(MAX_UNITS, end + room);
      if (alignUp(gap, alignUnits) + units <= end) return true;
    }
    return false;
  }

  /**
   * Gives every slab without live blocks back to the provider, and (with a provider that can shrink
   * slabs in place) shrinks the free tail of the others to a multiple of the growth granule.
   */
  protected override compact(): void {
    this.#trimEmpty();
    if (this.resizable) this.#shrinkTails();
  }

  /** Returns the bytes given back. */
  #trimEmpty(): number {
    let bytes = 0;
    const slabs = this.#slabs;
    for (let i = 0; i < slabs.length; i++) {
      const slab = slabs[i];
      if (!slab || slab.live) continue;
      const node = slab.first;
      this.#unlinkFree(node);
      this.#recycle(node);
      slabs[i] = undefined;
      this.#slabHoles.push(i);
      if (this.#tail[slab.heap] === i) this.#tail[slab.heap] = -1;
      bytes += slab.byteLength;
      this.dropSlab(slab);
    }
    return bytes;
  }

  #shrinkTails(): void {
    const n = this.#n;
    const unit = this.alignment;
    for (const slab of this.#slabs) {
      if (!slab) continue;
      const last = slab.last;
      const at = last << 3;
      if (n[at + FLAGS] !== FREE) continue;
      const slabUnits = slab.byteLength / unit;
      const keep = Math.max(this.#granuleUnits, alignUp(n[at + OFFSET] as number, this.#granuleUnits));
      if (keep >= slabUnits || !this.resize(slab, keep * unit)) continue;
      const removed = slabUnits - keep;
      this.#unlinkFree(last);
      const size = (n[at + SIZE] as number) - removed;
      if (size > 0) {
        n[at + SIZE] = size;
        this.#linkFree(last);
      } else {
        const prev = n[at + PREV_PHYS] as number;
        n[(prev << 3) + NEXT_PHYS] = -1;
        slab.last = prev;
        this.#recycle(last);
      }
    }
  }

  protected override freeAll(): void {
    for (const slab of this.#slabs) if (slab) this.dropSlab(slab);
    this.#slabs.length = 0;
  }

  /** Units that can still be reserved within the budget. */
  #room(): number {
    return this.#budgetUnits - this.tally.reservedBytes / this.alignment;
  }

  /**
   * Grows `heap` so that it holds `units` at `alignUnits`; returns the free node (unlinked) to carve,
   * or -1 if the budget (or the provider) does not allow it.
   */
  #grow(heap: number, units: number, alignUnits: number): number {
    const dedicated = units >= this.#dedicatedUnits;
    const growable = this.resizable && !dedicated;
    if (growable) {
      const node = this.#extendTail(heap, units, alignUnits);
      if (node >= 0) return node;
    }
    // Give empty slabs back first if that makes room (the newest slab may then grow in place).
    let room = this.#room();
    if (room < units && this.#trimEmpty() > 0) {
      if (growable) {
        const node = this.#extendTail(heap, units, alignUnits);
        if (node >= 0) return node;
      }
      room = this.#room();
    }
    if (room < units) return -1;
    const slabUnits = Math.min(
      dedicated
        ? units
        : this.resizable
          ? alignUp(units, this.#granuleUnits)
          : Math.max(this.#slabUnits[heap] as number, units),
      room,
      MAX_UNITS,
    );
    const holes = this.#slabHoles;
    const index = holes.at(-1) ?? this.#slabs.length;
    const slab = this.newSlab(slabUnits * this.alignment);
    holes.pop();
    slab.heap = heap;
    this.#slabs[index] = slab;
    if (growable) this.#tail[heap] = index;
    const node = this.#newNode(index, heap, 0, slabUnits, -1, -1);
    slab.first = node;
    slab.last = node;
    return node;
  }

  /** Resizes the newest slab of `heap` in place so that its end holds the request; -1 if it cannot. */
  #extendTail(heap: number, units: number, alignUnits: number): number {
    const index = this.#tail[heap] as number;
    if (index < 0) return -1;
    const n = this.#n;
    const unit = this.alignment;
    const slab = this.#slabs[index] as SlabRecord<M>;
    const slabUnits = slab.byteLength / unit;
    const last = slab.last;
    const at = last << 3;
    const lastFree = n[at + FLAGS] === FREE;
    const start = alignUp(lastFree ? (n[at + OFFSET] as number) : slabUnits, alignUnits);
    const lack = start + units - slabUnits;
    if (lack <= 0 && lastFree) {
      // Its free tail already holds the request at its aligned start (the good-fit search skips that).
      this.#unlinkFree(last);
      return last;
    }
    const room = this.#room();
    // In granules, but no more than the budget leaves (as fitsBeside counts on).
    const delta = Math.min(alignUp(lack, this.#granuleUnits), room);
    // No trimming here: that could give back this very slab (#grow trims before making a new one).
    if (delta < lack || slabUnits + delta > MAX_UNITS) return -1;
    if (!this.resize(slab, (slabUnits + delta) * unit)) {
      this.#tail[heap] = -1;
      return -1;
    }
    if (lastFree) {
      this.#unlinkFree(last);
      n[at + SIZE]! += delta;
      return last;
    }
    const node = this.#newNode(index, heap, slabUnits, delta, last, -1);
    this.#n[at + NEXT_PHYS] = node;
    slab.last = node;
    return node;
  }

  #linkFree(node: number): void {
    const n = this.#n;
    const at = node << 3;
    const heap = this.#nHeap[node] as number;
    const cls = classOf(n[at + SIZE] as number);
    const head = this.#heads[heap * CLASSES + cls] as number;
    n[at + NEXT_FREE] = head;
    n[at + PREV_FREE] = -1;
    if (head >= 0) n[(head << 3) + PREV_FREE] = node;
    this.#heads[heap * CLASSES + cls] = node;
    n[at + FLAGS] = FREE;
    const fl = cls >>> SL_LOG2;
    this.#flBitmap[heap]! |= 1 << fl;
    const sl = heap * FL_COUNT + fl;
    this.#slBitmap[sl]! |= 1 << (cls & (SL_COUNT - 1));
  }

  #unlinkFree(node: number): void {
    const n = this.#n;
    const prev = n[(node << 3) + PREV_FREE] as number;
    const next = n[(node << 3) + NEXT_FREE] as number;
    if (next >= 0) n[(next << 3) + PREV_FREE] = prev;
    if (prev >= 0) {
      n[(prev << 3) + NEXT_FREE] = next;
    } else {
      const heap = this.#nHeap[node] as number;
      const cls = classOf(n[(node << 3) + SIZE] as number);
      this.#heads[heap * CLASSES + cls] = next;
      if (next < 0) {
        const fl = cls >>> SL_LOG2;
        const sl = heap * FL_COUNT + fl;
        this.#slBitmap[sl]! &= ~(1 << (cls & (SL_COUNT - 1)));
        if (this.#slBitmap[sl] === 0) this.#flBitmap[heap]! &= ~(1 << fl);
      }
    }
  }

  /** A free node of slab `slab` (of `heap`) at `offset`, `size` units, between `prev` and `next`; unlinked. */
  #newNode(slab: number, heap: number, offset: number, size: number, prev: number, next: number): number {
    let node = this.#freeNode;
    if (node >= 0) {
      this.#freeNode = this.#n[(node << 3) + NEXT_FREE] as number;
    } else {
      if (this.#nodeCount === this.#nHeap.length) {
        // The driver kit's growth rule doubles both parallel arrays (8 words and 1 heap byte per node).
        this.#n = growTypedArray(this.#n, this.#n.length, this.#n.length * 2);
        this.#nHeap = growTypedArray(this.#nHeap, this.#nHeap.length, this.#nHeap.length * 2);
      }
      node = this.#nodeCount++;
    }
    const n = this.#n;
    const at = node << 3;
    n[at + OFFSET] = offset;
    n[at + SIZE] = size;
    n[at + SLAB] = slab;
    n[at + PREV_PHYS] = prev;
    n[at + NEXT_PHYS] = next;
    n[at + FLAGS] = FREE;
    this.#nHeap[node] = heap;
    return node;
  }

  #recycle(node: number): void {
    this.#n[(node << 3) + FLAGS] = 0;
    this.#n[(node << 3) + NEXT_FREE] = this.#freeNode;
    this.#freeNode = node;
  }

  /**
   * Walks every slab and checks the invariants (for tests): nodes tile each slab without gaps or
   * overlaps, first/last links are right, no two free nodes are adjacent, every free node is in the
   * list of its heap and class and the bitmaps match the lists. Throws INTERNAL naming the broken rule
   * (tlsf-invariants.ts).
   */
  checkInvariants(): void {
    checkTlsfInvariants({
      what: this.what,
      alignment: this.alignment,
      reservedBytes: this.tally.reservedBytes,
      nodes: this.#n,
      nodeHeaps: this.#nHeap,
      heads: this.#heads,
      flBitmap: this.#flBitmap,
      slBitmap: this.#slBitmap,
      slabs: this.#slabs,
    });
  }
}
