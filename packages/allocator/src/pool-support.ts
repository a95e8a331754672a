/**
 * Internals shared by the pools: PoolBase (what the three pools have in common: label and message
 * name, alignment, budget, provider, counters, the argument and ownership checks of reserve, release
 * and quarantine, trim/destroy's life cycle), slab records, block records, counters. Not exported
 * from the package.
 *
 * Quarantine: a quarantined block stays reserved (live in the counters and in its slab) for good; its
 * `handle` becomes QUARANTINED, so a later release or quarantine of it is FAILED_PRECONDITION. The pool
 * learns of it through `hold` (the ring reclaims past it; the TLSF pool marks its node) and answers
 * `canEverReserve` through `fitsBeside` once it holds any.
 *
 * Live bytes count what each block's user asked for: `recount` lets the queue allocator count a block
 * it hands to another request as that request's (the pool's counters are otherwise private).
 *
 * Creation checks: the provider must have createSlab and destroySlab functions (and resizeSlab, if
 * present, a function), the budget at least the alignment (every block takes one alignment unit).
 * A provider's destroySlab is called exactly once per slab even when it throws: the slab counts as
 * given back and the exception is reported once the call's bookkeeping is done (see dropSlab).
 */
import { describeValue, ErrorCode, KeelError, type OptionRule, type OptionRules } from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import type { Block, Slab } from './block';
import type { Pool, PoolKind, PoolStats } from './pool';
import type { SlabProvider } from './slab-provider';

/** The largest alignment a pool accepts (1 GiB). */
export const MAX_ALIGNMENT = 2 ** 30;

/** `PoolBlock.handle` of a released block. */
const RELEASED = -1;
/** `PoolBlock.handle` of a quarantined block (reserved for good). */
const QUARANTINED = -2;

let nextSlabId = 1;

/** A slab as a pool keeps it: the public fields plus the pool's bookkeeping. */
export class SlabRecord<M> implements Slab<M> {
  readonly id = nextSlabId++;
  /** Live blocks in this slab (quarantined ones included). */
  live = 0;
  /** Quarantined blocks in this slab (reserved for good). */
  quarantined = 0;
  /** TLSF: the physically first and last nodes, and the heap the slab serves. */
  first = -1;
  last = -1;
  heap = 0;
  /** Bytes of the slab; grows (or shrinks) when a resizable provider resizes it in place. */
  declare byteLength: number;
  declare readonly memory: M;

  constructor(byteLength: number, memory: M) {
    this.byteLength = byteLength;
    this.memory = memory;
  }
}

/**
 * A block as a pool hands it out. `handle` is the pool's record of it (a TLSF node, a ring slot); it is
 * -1 once released and -2 once quarantined, so a second release is caught. One object per reserve: blocks are never recycled,
 * so a stale block can never alias a newer one.
 */
export class PoolBlock<M> implements Block<M> {
  declare readonly slab: SlabRecord<M>;
  declare readonly offset: number;
  declare readonly byteLength: number;
  declare readonly pool: object;
  declare handle: number;
  /** Bytes the pool keeps behind the block (byteLength rounded up to the alignment). */
  declare readonly capacity: number;
  /** Ring: the reservation's sequence number. */
  declare readonly seq: number;
  /**
   * Bytes the pool counts in `liveBytes` for it: `byteLength`, until a queue allocator hands the block
   * to another request (`recount`).
   */
  declare counted: number;

  constructor(
    slab: SlabRecord<M>,
    offset: number,
    byteLength: number,
    pool: object,
    handle: number,
    capacity: number,
    seq: number,
  ) {
    this.slab = slab;
    this.offset = offset;
    this.byteLength = byteLength;
    this.pool = pool;
    this.handle = handle;
    this.capacity = capacity;
    this.seq = seq;
    this.counted = byteLength;
  }
}

/** The bytes a pool keeps behind a block (what a later request may reuse): its capacity, if ours. */
export function capacityOf<M>(block: Block<M>): number {
  return block instanceof PoolBlock ? block.capacity : block.byteLength;
}

let nextPoolId = 1;

/** The caller's label (checkOptions made sure it is a string) or `<prefix>-<n>`. */
export function poolLabel(prefix: string, label: string | undefined): string {
  return label ?? `${prefix}-${nextPoolId++}`;
}

/**
 * Throws INVALID_ARGUMENT unless `value` is a non-negative safe integer. Messages name `owner` and `op`
 * (joined only when throwing, so hot paths build no strings).
 */
export function checkByteLength(owner: string, op: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${owner}: ${op}: byteLength ${describeValue(value)} must be a non-negative safe integer`);
  }
}

/** Throws INVALID_ARGUMENT unless `value` is a power of two ≤ MAX_ALIGNMENT (`op` '' at creation). */
export function checkAlignment(owner: string, op: string, value: number): void {
  if (!(Number.isSafeInteger(value) && value > 0 && value <= MAX_ALIGNMENT && (value & (value - 1)) === 0)) {
    throw invalid(
      `${owner}${op ? `: ${op}` : ''}: alignment ${describeValue(value)} must be a power of two between 1 and ${MAX_ALIGNMENT}`,
    );
  }
}

/**
 * The mutable counters behind PoolStats: its fields, in its order (a snapshot is a copy of them plus
 * the budget).
 */
export class PoolCounters {
  liveBytes = 0;
  liveBlocks = 0;
  reservedBytes = 0;
  slabCount = 0;
  peakLiveBytes = 0;
  peakReservedBytes = 0;
  reserves = 0;
  releases = 0;
  failedReserves = 0;
  growths = 0;
  slabsDestroyed = 0;

  reserved(bytes: number): void {
    this.reserves++;
    this.liveBlocks++;
    this.liveBytes += bytes;
    this.peakLiveBytes = Math.max(this.peakLiveBytes, this.liveBytes);
  }

  released(bytes: number): void {
    this.releases++;
    this.liveBlocks--;
    this.liveBytes -= bytes;
  }

  /** A slab was created (`slabs` 1) or grew in place (`slabs` 0, resizable providers). */
  grown(bytes: number, slabs: number): void {
    this.growths++;
    this.slabCount += slabs;
    this.reservedBytes += bytes;
    this.peakReservedBytes = Math.max(this.peakReservedBytes, this.reservedBytes);
  }

  /** A slab was given back (`slabs` 1) or shrank in place (`slabs` 0). */
  shrunk(bytes: number, slabs: number): void {
    this.slabsDestroyed += slabs;
    this.slabCount -= slabs;
    this.reservedBytes -= bytes;
  }

  resetPeaks(): void {
    this.peakLiveBytes = this.liveBytes;
    this.peakReservedBytes = this.reservedBytes;
  }
}

/** Rules the options of the pools and the allocator share: a label, a positive integer. */
export const LABEL: OptionRule = { type: 'string' };
export const POSITIVE: OptionRule = { type: 'integer', min: 1 };

/** Option rules of every pool (checkOptions: unknown keys and wrong types are INVALID_ARGUMENT). */
export const POOL_OPTION_RULES: OptionRules = {
  label: LABEL,
  alignment: POSITIVE,
  budget: { type: 'number', min: 1, allowInfinity: true },
};

/** Common options of every pool. */
export interface PoolOptions {
  /** A name for error messages. */
  readonly label?: string;
  /**
   * The default and smallest block alignment in bytes, a power of two (default 16). Block sizes are
   * rounded up to it. WebGPU pools pass `minStorageBufferOffsetAlignment` (256).
   */
  readonly alignment?: number;
  /** Most bytes of slabs the pool may hold at once (default Infinity). */
  readonly budget?: number;
}

/**
 * The part of the Pool contract the three pools share. `type` ("TlsfPool") names the pool in messages
 * (with its label: "TlsfPool 'activations'"); a default label is `<kind>-<n>`. Subclasses implement
 * `take` (a reserve after the checks), `free` (a release after the checks), `compact` (trim) and
 * `freeAll` (destroy).
 */
export abstract class PoolBase<M> implements Pool<M> {
  readonly kind: PoolKind;
  abstract readonly maxBlockBytes: number;
  readonly label: string;
  readonly alignment: number;
  /** @internal How messages name the pool. */
  protected readonly what: string;
  /** @internal */
  protected readonly provider: SlabProvider<M>;
  /** @internal The counters (public for `recount`, stripped from the declarations). */
  readonly tally = new PoolCounters();
  /** @internal The byte budget (the ring: its capacity). */
  protected budget: number;
  /** @internal */
  protected dead = false;
  /** @internal Quarantined blocks (reserved for good). */
  protected quarantinedBlocks = 0;
  /** The first exception of `destroySlab` not reported yet (see dropSlab). */
  #dropFailed = false;
  #dropFailure: unknown = undefined;

  constructor(type: string, provider: SlabProvider<M>, options: PoolOptions) {
    // "TlsfPool" → kind 'tlsf'.
    this.kind = type.slice(0, -4).toLowerCase() as PoolKind;
    this.label = poolLabel(this.kind, options.label);
    this.what = `${type} '${this.label}'`;
    if (!isSlabProvider(provider)) {
      throw invalid(
        `${this.what}: provider must be a SlabProvider (createSlab and destroySlab functions, resizeSlab a function if present)`,
      );
    }
    this.provider = provider;
    this.alignment = options.alignment ?? 16;
    checkAlignment(this.what, '', this.alignment);
    const budget = options.budget ?? Infinity;
    if (!Number.isSafeInteger(budget) && budget !== Infinity) {
      throw invalid(
        `${this.what}: budget ${describeValue(budget)} must be a positive integer number of bytes or Infinity`,
      );
    }
    if (budget < this.alignment) {
      // Every block, a zero-byte one included, takes at least one alignment unit.
      throw invalid(
        `${this.what}: budget ${budget} must be at least the alignment (${this.alignment} bytes): every block takes at least one alignment unit`,
      );
    }
    this.budget = budget;
  }

  get stats(): PoolStats {
    return { ...this.tally, budget: this.budget };
  }

  reserve(byteLength: number, alignment?: number): Block<M> | undefined {
    return this.#reserve('reserve', byteLength, alignment, true);
  }

  reserveExisting(byteLength: number, alignment?: number): Block<M> | undefined {
    return this.#reserve('reserveExisting', byteLength, alignment, false);
  }

  /** Checks a reserve's arguments, asks `take` and counts the block it got. */
  #reserve(
    op: string,
    byteLength: number,
    alignment: number | undefined,
    grow: boolean,
  ): Block<M> | undefined {
    this.alive(op);
    checkByteLength(this.what, op, byteLength);
    const alignUnits = this.#alignUnits(op, alignment);
    // Sizes are kept in units of the alignment; a zero-byte block still takes one.
    const block = this.take(
      byteLength,
      Math.max(1, Math.ceil(byteLength / this.alignment)),
      alignUnits,
      grow,
    );
    if (block) {
      block.slab.live++;
      this.tally.reserved(byteLength);
    } else {
      this.#reportDropFailure(op);
    }
    return block;
  }

  release(block: Block<M>): void {
    const own = this.#live('release', block);
    this.free(own);
    own.handle = RELEASED;
    own.slab.live--;
    this.tally.released(own.counted);
    this.#reportDropFailure('release');
  }

  /**
   * Takes a live block out of circulation for good: it stays reserved (in `liveBytes` and its slab)
   * and its memory is never handed out again, but it holds nothing else back (`hold`: the ring
   * reclaims past it). A block of another pool is INVALID_ARGUMENT; a released or quarantined block
   * FAILED_PRECONDITION.
   */
  quarantine(block: Block<M>): void {
    const own = this.#live('quarantine', block);
    this.hold(own);
    own.handle = QUARANTINED;
    own.slab.quarantined++;
    this.quarantinedBlocks++;
  }

  /**
   * Whether `reserve(byteLength, alignment)` could ever succeed: false above `maxBlockBytes`, or when
   * the quarantined blocks leave no room for it even once every other block is released.
   */
  canEverReserve(byteLength: number, alignment?: number): boolean {
    const op = 'canEverReserve';
    this.alive(op);
    checkByteLength(this.what, op, byteLength);
    const alignUnits = this.#alignUnits(op, alignment);
    if ((byteLength || 1) > this.maxBlockBytes) return false;
    if (this.quarantinedBlocks === 0) return true;
    return this.fitsBeside(Math.max(1, Math.ceil(byteLength / this.alignment)), alignUnits);
  }

  /** The live block `block` of this pool (INVALID_ARGUMENT / FAILED_PRECONDITION naming `op`). */
  #live(op: string, block: Block<M>): PoolBlock<M> {
    this.alive(op);
    if (!(block instanceof PoolBlock) || block.pool !== this) {
      throw invalid(`${this.what}: ${op}: the block does not belong to this pool`);
    }
    if (block.handle < 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.what}: ${op}: block at offset ${block.offset} of slab ${block.slab.id} ${
          block.handle === QUARANTINED
            ? 'is quarantined (reserved for good: its memory is never handed out again)'
            : 'was already released'
        }`,
      );
    }
    return block as PoolBlock<M>;
  }

  /** Units of the pool's alignment a block's offset must be a multiple of (checks `alignment`). */
  #alignUnits(op: string, alignment: number | undefined): number {
    if (alignment === undefined || alignment === this.alignment) return 1;
    checkAlignment(this.what, op, alignment);
    return alignment > this.alignment ? alignment / this.alignment : 1;
  }

  resetPeaks(): void {
    this.tally.resetPeaks();
  }

  trim(): void {
    this.alive('trim');
    this.compact();
    this.#reportDropFailure('trim');
  }

  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    this.freeAll();
    // Every block is gone.
    this.tally.liveBytes = 0;
    this.tally.liveBlocks = 0;
    this.#reportDropFailure('destroy');
  }

  /** @internal Throws FAILED_PRECONDITION if the pool was destroyed. */
  protected alive(op: string): void {
    if (this.dead) {
      throw new KeelError(ErrorCode.FAILED_PRECONDITION, `${this.what}: ${op}: the pool was destroyed`);
    }
  }

  /** @internal A reserve that failed for lack of room: counted, undefined. */
  protected full(): undefined {
    this.tally.failedReserves++;
    return undefined;
  }

  /** @internal A new slab from the provider (whose exceptions become RESOURCE_EXHAUSTED naming the pool). */
  protected newSlab(byteLength: number): SlabRecord<M> {
    let memory: M;
    try {
      memory = this.provider.createSlab(byteLength);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : describeValue(cause);
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${this.what}: reserve: the slab provider could not create a slab of ${byteLength} bytes (${reason})`,
        { cause },
      );
    }
    this.tally.grown(byteLength, 1);
    return new SlabRecord(byteLength, memory);
  }

  /**
   * @internal Asks a resizable provider to resize `slab` in place to `byteLength` and counts it; false
   * if it cannot (or throws).
   */
  protected resize(slab: SlabRecord<M>, byteLength: number): boolean {
    try {
      if (this.provider.resizeSlab?.(slab.memory, byteLength) !== true) return false;
    } catch {
      return false;
    }
    const delta = byteLength - slab.byteLength;
    slab.byteLength = byteLength;
    if (delta > 0) this.tally.grown(delta, 0);
    else this.tally.shrunk(-delta, 0);
    return true;
  }

  /**
   * @internal Gives a slab back to the provider: counted as given back whatever `destroySlab` does
   * (it is called exactly once per slab, never again). What it throws is kept and reported as INTERNAL
   * by the public call once its bookkeeping is done (#reportDropFailure), so a loop over slabs (trim,
   * destroy) gives every slab back and no counter is left half-updated.
   */
  protected dropSlab(slab: SlabRecord<M>): void {
    this.tally.shrunk(slab.byteLength, 1);
    try {
      this.provider.destroySlab(slab.memory);
    } catch (cause) {
      if (!this.#dropFailed) {
        this.#dropFailed = true;
        this.#dropFailure = cause;
      }
    }
  }

  /**
   * Throws, as INTERNAL naming the pool and `op` (cause: what it threw), the first exception the
   * provider's `destroySlab` threw since the last report. A reserve that gave empty slabs back to make
   * room reports it only when it returns no block (else the block would be lost); a later release, trim
   * or destroy reports it then.
   */
  #reportDropFailure(op: string): void {
    if (!this.#dropFailed) return;
    const cause = this.#dropFailure;
    this.#dropFailed = false;
    this.#dropFailure = undefined;
    const reason = cause instanceof Error ? cause.message : describeValue(cause);
    throw new KeelError(
      ErrorCode.INTERNAL,
      `${this.what}: ${op}: the slab provider threw while destroying a slab (${reason}); the slab counts as given back and is not destroyed again`,
      { cause },
    );
  }

  /**
   * @internal A reserve after the checks, `units` (at least 1) and `alignUnits` in units of the pool's
   * alignment; the caller counts the block.
   */
  protected abstract take(
    byteLength: number,
    units: number,
    alignUnits: number,
    grow: boolean,
  ): PoolBlock<M> | undefined;
  /** @internal A release after the checks (the block is this pool's and live). */
  protected abstract free(block: PoolBlock<M>): void;
  /**
   * @internal A quarantine after the checks (the block is this pool's and live): the block stays
   * reserved for good but must hold no other memory back.
   */
  protected abstract hold(block: PoolBlock<M>): void;
  /**
   * @internal Whether `units` at `alignUnits` (within `maxBlockBytes`) could ever be reserved beside
   * the quarantined blocks, once every other block is released. Called only while some are held.
   */
  protected abstract fitsBeside(units: number, alignUnits: number): boolean;
  /** @internal What trim does after the checks. */
  protected abstract compact(): void;
  /** @internal What destroy does (once): give every slab back. */
  protected abstract freeAll(): void;
}

/**
 * Counts `block` (a live block of one of these pools) in its pool's live bytes as `bytes` (as asked for
 * by its new user, at most its capacity) instead of what it was counted as so far: the queue allocator
 * calls it when it hands a dying block to another request, so that the pool's `liveBytes` stays the
 * sum of what the users of its blocks asked for. Blocks of other pools are left alone.
 */
export function recount(block: Block<unknown>, bytes: number): void {
  if (!(block instanceof PoolBlock) || block.handle < 0 || !(block.pool instanceof PoolBase)) return;
  const tally = block.pool.tally;
  tally.liveBytes += bytes - block.counted;
  if (tally.liveBytes > tally.peakLiveBytes) tally.peakLiveBytes = tally.liveBytes;
  block.counted = bytes;
}

/** True when `value` has the shape of a SlabProvider (resizeSlab is optional). */
function isSlabProvider(value: unknown): boolean {
  const p = value as Partial<SlabProvider<unknown>> | null | undefined;
  return (
    typeof p?.createSlab === 'function' &&
    typeof p.destroySlab === 'function' &&
    (p.resizeSlab === undefined || typeof p.resizeSlab === 'function')
  );
}

/** `value` rounded up to a multiple of `alignUnits`. */
export function alignUp(value: number, alignUnits: number): number {
  return alignUnits === 1 ? value : Math.ceil(value / alignUnits) * alignUnits;
}
