/**
 * A device's queue-ordered allocators, one per named pool ('tlsf', 'ring', 'passthrough'), created on
 * first use over the device's slab provider. `dealloca` finds the allocator through the allocation's
 * owner (the QueueAllocator that made it), not through a pool name carried by the buffer. Statistics
 * come back in one shape on every device: a map of pool name → AllocatorStats.
 *
 * Retiring (`retire`): a device whose slab turned out broken (a GPUBuffer whose creation ran out of
 * memory is invalid, and a pool would hand out blocks of it forever) retires its allocators: later
 * allocas get fresh allocators over fresh pools, while the retired ones still serve their allocations'
 * deallocas and are destroyed (their slabs given back) once nothing of theirs is live, dying, queued
 * or pending. That check runs at each later `allocator` call.
 */
import type { Fence, KeelError } from '@keel/fence';
import { type Buffer, describeValue, QueueAffinity } from '@keel/hal';
import { invalid, madeByCreateBuffer } from '@keel/hal/driver';
import type { Allocation } from './allocation';
import { QueueAllocation } from './allocation';
import type { AllocatorStats } from './allocator-stats';
import { PassthroughPool } from './passthrough-pool';
import type { Pool } from './pool';
import { QueueAllocator } from './queue-allocator';
import { RingPool } from './ring-pool';
import type { SlabProvider } from './slab-provider';
import { TlsfPool } from './tlsf-pool';

/** The names of the pools a registry makes. */
export const ALLOCA_POOLS = ['tlsf', 'ring', 'passthrough'] as const;

/** How a registry makes its pools. */
export interface PoolRegistryOptions {
  /** Prefixes pool labels ("webgpu alloca tlsf") and names allocators ("<device> tlsf"). */
  readonly poolLabel: string;
  readonly deviceLabel: string;
  /** The backend named in the message of an unknown pool ("the cpu device has …"). */
  readonly backend: string;
  /** Block alignment of every pool. */
  readonly alignment: number;
  /** Bytes a TLSF pool grows by. */
  readonly slabSize: number;
  /** Capacity of the ring pool. */
  readonly ringCapacity: number;
  /** Most bytes the TLSF pool may reserve (unlimited when omitted). */
  readonly budget?: number;
}

export class PoolRegistry<M> {
  readonly #allocators = new Map<string, QueueAllocator<M>>();
  /** Retired allocators not destroyed yet (`retire`). */
  readonly #retired: QueueAllocator<M>[] = [];
  readonly #slabs: SlabProvider<M>;
  readonly #options: PoolRegistryOptions;

  constructor(slabs: SlabProvider<M>, options: PoolRegistryOptions) {
    this.#slabs = slabs;
    this.#options = options;
  }

  /** The allocator of `pool`, created on first use; INVALID_ARGUMENT (naming `what`) for an unknown pool. */
  allocator(pool: string, what: string): QueueAllocator<M> {
    if (this.#retired.length > 0) this.#sweep();
    let allocator = this.#allocators.get(pool);
    if (!allocator) {
      allocator = new QueueAllocator(this.#pool(pool, what), {
        label: `${this.#options.deviceLabel} ${pool}`,
      });
      this.#allocators.set(pool, allocator);
    }
    return allocator;
  }

  #pool(pool: string, what: string): Pool<M> {
    const { poolLabel, alignment, slabSize, budget, ringCapacity, backend } = this.#options;
    const label = `${poolLabel} ${pool}`;
    // An undefined budget counts as omitted (checkOptions): the TLSF pool is then unlimited.
    if (pool === 'tlsf') return new TlsfPool(this.#slabs, { label, slabSize, alignment, budget });
    if (pool === 'passthrough') return new PassthroughPool(this.#slabs, { label, alignment });
    if (pool === 'ring') return new RingPool(this.#slabs, { label, capacity: ringCapacity, alignment });
    throw invalid(
      `${what}: unknown pool '${pool}' (the ${backend} device has 'tlsf', 'ring' and 'passthrough')`,
    );
  }

  /**
   * The allocator that made `allocation` (its owner), when it is one of this registry's; INVALID_ARGUMENT
   * naming `what` otherwise.
   */
  ownerOf(allocation: Allocation<M>, what: string): QueueAllocator<M> {
    const owner = allocation instanceof QueueAllocation ? allocation.owner : undefined;
    for (const allocator of this.#allocators.values()) if (allocator === owner) return allocator;
    for (const allocator of this.#retired) if (allocator === owner) return allocator;
    throw invalid(`${what}: the allocation was not made by this device`);
  }

  /**
   * A device's queueDealloca after the queue front's checks: releases `allocation` (the allocation of
   * `buffer`) through its owner on `queue`, ordered after `wait`, signalling `signal`. INVALID_ARGUMENT
   * naming `what` when `buffer` has no allocation (createBuffer made it) or another device's, or when
   * `queue` is not a queue index (0..31).
   */
  dealloca(
    queue: number,
    wait: Fence,
    signal: Fence,
    buffer: Pick<Buffer, 'byteLength' | 'label'>,
    allocation: Allocation<M> | undefined,
    what: string,
  ): void {
    if (allocation === undefined) throw madeByCreateBuffer(buffer, what);
    if (!Number.isInteger(queue) || queue < 0 || queue > 31) {
      throw invalid(`${what}: queue index ${describeValue(queue)} is outside 0..31`);
    }
    this.ownerOf(allocation, what).dealloca(QueueAffinity.of(queue), wait, signal, allocation);
  }

  /** Snapshots of the allocators' statistics, by pool name (pools never used are absent). */
  stats(): Map<string, AllocatorStats> {
    const out = new Map<string, AllocatorStats>();
    for (const [pool, allocator] of this.#allocators) out.set(pool, allocator.stats);
    return out;
  }

  /**
   * Bytes of queue-allocated memory not available for reuse right now: live allocations, deallocated
   * blocks whose death frontier is pending, and blocks kept back after a failed dealloca.
   */
  heldBytes(): number {
    let bytes = 0;
    for (const allocator of [...this.#allocators.values(), ...this.#retired]) {
      const stats = allocator.stats;
      bytes += stats.liveBytes + stats.dyingBytes + stats.quarantinedBytes;
    }
    return bytes;
  }

  /**
   * Destroys every allocator: pending allocas and deallocas fail with `reason` (a lost device's loss),
   * by default UNAVAILABLE; `forget` (default) drops them too, else their last statistics stay readable
   * (a lost device). `failPending`, if given, is the device failing its own pending work: it runs once
   * every allocator stopped reacting to fences and before their pending fences fail, so nothing they
   * hold reacts to that work's failure (a queued alloca fails with `reason`, not RESOURCE_EXHAUSTED
   * because a dealloca's wait failed and quarantined the memory it waited for).
   */
  destroy(forget = true, reason?: KeelError, failPending?: () => void): void {
    const allocators = [...this.#allocators.values(), ...this.#retired];
    this.#retired.length = 0;
    if (forget) this.#allocators.clear();
    destroyFrom(allocators, 0, reason, failPending);
  }

  /**
   * Retires every allocator: later `allocator` calls make fresh ones (over fresh pools); the retired
   * ones keep serving deallocas of their allocations (`ownerOf`, `dealloca`) and are destroyed, giving
   * their slabs back, once they hold nothing live, dying, queued or pending. Their statistics leave
   * `stats()` at once (their held bytes stay in `heldBytes()` until they are destroyed).
   */
  retire(): void {
    for (const allocator of this.#allocators.values()) this.#retired.push(allocator);
    this.#allocators.clear();
    this.#sweep();
  }

  /** Retired allocators still held (not destroyed yet). */
  get retiredCount(): number {
    return this.#retired.length;
  }

  /** Destroys the retired allocators that hold nothing any more. */
  #sweep(): void {
    const retired = this.#retired;
    for (let i = retired.length - 1; i >= 0; i--) {
      const stats = (retired[i] as QueueAllocator<M>).stats;
      if (stats.liveBytes + stats.dyingBytes === 0 && stats.pendingAllocas + stats.queuedRequests === 0) {
        (retired[i] as QueueAllocator<M>).destroy();
        retired.splice(i, 1);
      }
    }
  }
}

/**
 * Destroys `allocators[i..]` (each stops reacting before the next one is destroyed, all of them before
 * `last` runs; their fences fail after `last`, even when one throws).
 */
function destroyFrom<M>(
  allocators: readonly QueueAllocator<M>[],
  i: number,
  reason: KeelError | undefined,
  last: (() => void) | undefined,
): void {
  const allocator = allocators[i];
  if (allocator === undefined) last?.();
  else allocator.destroy(reason, () => destroyFrom(allocators, i + 1, reason, last));
}
