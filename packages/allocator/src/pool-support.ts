/**
 * Internals shared by the pools: argument checks, slab records, block records, counters. Not exported
 * from the package.
 */
import { describeValue, ErrorCode, KeelError, type OptionRules } from '@keel/hal';
import type { Block, Slab } from './block';
import type { PoolStats } from './pool';
import type { SlabProvider } from './slab-provider';

/** The largest alignment a pool accepts (1 GiB). */
export const MAX_ALIGNMENT = 2 ** 30;

let nextSlabId = 1;

/** A slab as a pool keeps it: the public fields plus the pool's bookkeeping. */
export class SlabRecord<M> implements Slab<M> {
  readonly id: number;
  /** Live blocks in this slab. */
  live = 0;
  /** TLSF: the physically first and last nodes, the heap the slab serves, and whether it is dedicated. */
  first = -1;
  last = -1;
  heap = 0;
  dedicated = false;

  constructor(
    /** Bytes of the slab; grows (or shrinks) when a resizable provider resizes it in place. */
    public byteLength: number,
    readonly memory: M,
    /** Index of the slab in its pool's slab table. */
    readonly index: number,
  ) {
    this.id = nextSlabId++;
  }
}

/**
 * A block as a pool hands it out. `handle` is the pool's record of it (a TLSF node, a ring slot); it is
 * -1 once released, so a second release is caught. One object per reserve: blocks are never recycled,
 * so a stale block can never alias a newer one.
 */
export class PoolBlock<M> implements Block<M> {
  constructor(
    readonly slab: SlabRecord<M>,
    readonly offset: number,
    readonly byteLength: number,
    readonly pool: object,
    public handle: number,
    /** Bytes the pool keeps behind the block (byteLength rounded up to the alignment). */
    readonly capacity: number,
    /** Ring: the reservation's sequence number. */
    readonly seq: number,
  ) {}
}

/** "TlsfPool 'activations'" — how messages name a pool. */
export function describePool(kind: string, label: string): string {
  return `${kind} '${label}'`;
}

let nextPoolId = 1;

/** The caller's label or `<kind>-<n>`. */
export function poolLabel(prefix: string, label: string | undefined): string {
  if (label === undefined) return `${prefix}-${nextPoolId++}`;
  if (typeof label !== 'string') {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${prefix}: label must be a string`);
  }
  return label;
}

export function isPowerOfTwo(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && value <= MAX_ALIGNMENT && (value & (value - 1)) === 0;
}

/**
 * Throws INVALID_ARGUMENT unless `value` is a non-negative safe integer. Messages name `owner` and `op`
 * (joined only when throwing, so hot paths build no strings).
 */
export function checkByteLength(owner: string, op: string, value: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${owner}: ${op}: byteLength ${describeValue(value)} must be a non-negative safe integer`,
    );
  }
}

/** Throws INVALID_ARGUMENT unless `value` is a power of two ≤ MAX_ALIGNMENT. */
export function checkAlignment(owner: string, op: string, value: number): void {
  if (!isPowerOfTwo(value)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${owner}${op === '' ? '' : `: ${op}`}: alignment ${describeValue(value)} must be a power of two between 1 and ${MAX_ALIGNMENT}`,
    );
  }
}

/** Validates a budget option: a positive number of bytes or Infinity. */
export function checkBudget(what: string, value: number): void {
  if (typeof value !== 'number' || !(value > 0) || (Number.isFinite(value) && !Number.isSafeInteger(value))) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: budget ${describeValue(value)} must be a positive integer number of bytes or Infinity`,
    );
  }
}

/** Throws FAILED_PRECONDITION if the pool was destroyed. */
export function checkAlive(destroyed: boolean, owner: string, op: string): void {
  if (destroyed) {
    throw new KeelError(ErrorCode.FAILED_PRECONDITION, `${owner}: ${op}: the pool was destroyed`);
  }
}

/** Asks a resizable provider to resize a slab in place; false if it cannot (or throws). */
export function resizeSlabMemory<M>(provider: SlabProvider<M>, memory: M, byteLength: number): boolean {
  if (provider.resizeSlab === undefined) return false;
  try {
    return provider.resizeSlab(memory, byteLength) === true;
  } catch {
    return false;
  }
}

/** Asks the provider for a slab; its exceptions become RESOURCE_EXHAUSTED naming the pool. */
export function createSlabMemory<M>(provider: SlabProvider<M>, byteLength: number, owner: string): M {
  try {
    return provider.createSlab(byteLength);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : describeValue(cause);
    throw new KeelError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${owner}: reserve: the slab provider could not create a slab of ${byteLength} bytes (${reason})`,
      { cause },
    );
  }
}

/** Checks that `block` is a live block of `pool`; returns it typed. */
export function ownBlock<M>(block: Block<M>, pool: object, owner: string): PoolBlock<M> {
  if (!(block instanceof PoolBlock) || block.pool !== pool) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${owner}: release: the block does not belong to this pool`,
    );
  }
  if (block.handle < 0) {
    throw new KeelError(
      ErrorCode.FAILED_PRECONDITION,
      `${owner}: release: block at offset ${block.offset} of slab ${block.slab.id} was already released`,
    );
  }
  return block as PoolBlock<M>;
}

/** The mutable counters behind PoolStats. */
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
    if (this.liveBytes > this.peakLiveBytes) this.peakLiveBytes = this.liveBytes;
  }

  released(bytes: number): void {
    this.releases++;
    this.liveBlocks--;
    this.liveBytes -= bytes;
  }

  slabCreated(bytes: number): void {
    this.growths++;
    this.slabCount++;
    this.reservedBytes += bytes;
    if (this.reservedBytes > this.peakReservedBytes) this.peakReservedBytes = this.reservedBytes;
  }

  /** A slab grew in place (resizable providers). */
  grown(bytes: number): void {
    this.growths++;
    this.reservedBytes += bytes;
    if (this.reservedBytes > this.peakReservedBytes) this.peakReservedBytes = this.reservedBytes;
  }

  /** A slab shrank in place. */
  shrunk(bytes: number): void {
    this.reservedBytes -= bytes;
  }

  slabDestroyed(bytes: number): void {
    this.slabsDestroyed++;
    this.slabCount--;
    this.reservedBytes -= bytes;
  }

  /** Destroy: every block is gone. */
  dropLive(): void {
    this.liveBytes = 0;
    this.liveBlocks = 0;
  }

  resetPeaks(): void {
    this.peakLiveBytes = this.liveBytes;
    this.peakReservedBytes = this.reservedBytes;
  }

  snapshot(budget: number): PoolStats {
    return {
      liveBytes: this.liveBytes,
      liveBlocks: this.liveBlocks,
      reservedBytes: this.reservedBytes,
      slabCount: this.slabCount,
      peakLiveBytes: this.peakLiveBytes,
      peakReservedBytes: this.peakReservedBytes,
      reserves: this.reserves,
      releases: this.releases,
      failedReserves: this.failedReserves,
      growths: this.growths,
      slabsDestroyed: this.slabsDestroyed,
      budget,
    };
  }
}

/** Option rules of every pool (checkOptions: unknown keys and wrong types are INVALID_ARGUMENT). */
export const POOL_OPTION_RULES: OptionRules = {
  label: { type: 'string' },
  alignment: { type: 'integer', min: 1 },
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
