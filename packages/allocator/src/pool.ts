/**
 * The pool contract shared by PassthroughPool, RingPool and TlsfPool: synchronous reserve/release of
 * blocks of slabs, a byte budget, statistics. Pools know nothing about queues or fences: the
 * QueueAllocator decides when a block may be released or reused.
 */
import type { Block } from './block';

export type PoolKind = 'passthrough' | 'ring' | 'tlsf';

/** A snapshot of a pool's counters. */
export interface PoolStats {
  /**
   * Bytes of live blocks (quarantined ones included), as asked for: a block's `byteLength`, or, once a
   * queue allocator handed the block to another request (reuse before its release), what that request
   * asked for (at most the block's rounded size).
   */
  readonly liveBytes: number;
  /** Live blocks. */
  readonly liveBlocks: number;
  /** Bytes of slabs held from the provider. Never above `budget`. */
  readonly reservedBytes: number;
  /** Slabs held from the provider. */
  readonly slabCount: number;
  /** Highest `liveBytes` since creation (or the last `resetPeaks`). */
  readonly peakLiveBytes: number;
  /** Highest `reservedBytes` since creation (or the last `resetPeaks`). */
  readonly peakReservedBytes: number;
  /** Successful reserves. */
  readonly reserves: number;
  /** Releases. */
  readonly releases: number;
  /** Reserves that returned undefined (no room within the budget). */
  readonly failedReserves: number;
  /** Growths of the pool: slabs created, and slabs grown in place by a resizable provider. */
  readonly growths: number;
  /** Slabs given back to the provider (trim, passthrough release, destroy). */
  readonly slabsDestroyed: number;
  /** The byte budget (`Infinity` when unlimited). */
  readonly budget: number;
}

/**
 * A pool of blocks.
 *
 * - `reserve(byteLength, alignment)` returns a block of at least `byteLength` bytes whose offset is a
 *   multiple of `alignment` (a power of two; defaults to the pool's `alignment`), growing the pool within
 *   its budget if needed; `undefined` when it cannot without exceeding the budget (or, for the ring, its
 *   capacity). Zero bytes is legal (the block still occupies one alignment unit, so offsets are
 *   distinct). Bad arguments throw INVALID_ARGUMENT; a provider that throws is RESOURCE_EXHAUSTED.
 * - `reserveExisting` is the same without growing: only memory the pool already holds.
 * - `release(block)` gives a block back. A block of another pool is INVALID_ARGUMENT; a block released
 *   twice is FAILED_PRECONDITION.
 * - `quarantine(block)` (optional for third-party pools) takes a live block out of circulation for good:
 *   its memory is never handed out again and it stays reserved (counted in `liveBytes`; a later
 *   `release` is FAILED_PRECONDITION), but it holds no other memory back — the ring reclaims past it
 *   and places new blocks around it (a hole, not a wall). The queue allocator quarantines a block whose
 *   dealloca's wait failed (its users' fate is unknown).
 * - `canEverReserve(byteLength, alignment)` (optional) says whether such a reserve could ever succeed:
 *   false when it exceeds `maxBlockBytes`, or when quarantined blocks leave no room for it even once
 *   every other block is released; when true, that reserve succeeds once every other block is
 *   released. The queue allocator refuses (RESOURCE_EXHAUSTED) a request that could never be served
 *   instead of queueing it forever; without the method it assumes it could.
 * - `trim()` gives every slab without live blocks back to the provider.
 * - `destroy()` gives every slab back; live blocks become invalid. Any later call is FAILED_PRECONDITION
 *   (`destroy` itself is idempotent).
 * - A provider whose `destroySlab` throws (release, trim, destroy) is INTERNAL, reported once the call
 *   is done: the slab counts as given back, every other slab is still given back, nothing is counted
 *   twice and `destroySlab` is never called again for it.
 */
export interface Pool<M> {
  readonly kind: PoolKind;
  /** A name for error messages. */
  readonly label: string;
  /** The default (and smallest) alignment of blocks, a power of two; sizes are rounded up to it. */
  readonly alignment: number;
  /** The largest `byteLength` a reserve can ever succeed with (budget or capacity permitting). */
  readonly maxBlockBytes: number;
  reserve(byteLength: number, alignment?: number): Block<M> | undefined;
  reserveExisting(byteLength: number, alignment?: number): Block<M> | undefined;
  release(block: Block<M>): void;
  /** Takes a live block out of circulation for good (see above); optional for third-party pools. */
  quarantine?(block: Block<M>): void;
  /** Whether a reserve of `byteLength` bytes could ever succeed (see above); optional. */
  canEverReserve?(byteLength: number, alignment?: number): boolean;
  readonly stats: PoolStats;
  /** Sets the peaks to the current values (e.g. between benchmark phases). */
  resetPeaks(): void;
  trim(): void;
  destroy(): void;
}
