/** Statistics of a QueueAllocator (DESIGN.md § allocator: live and reserved bytes, peaks, reuses, growths, waits). */
import type { PoolAllocatorStats, QueueAffinity } from '@keel/hal';
import type { PoolStats } from './pool';

/** Counters per queue affinity mask, as given to alloca/dealloca. */
export interface QueueStats {
  readonly allocas: number;
  readonly deallocas: number;
  /** Bytes of allocations issued with this affinity that hold a block and were not deallocated. */
  readonly liveBytes: number;
}

/**
 * A snapshot of a QueueAllocator's counters: hal's PoolAllocatorStats (allocas, deallocas, failures,
 * live/peak live, dying, reserved/peak reserved and quarantined bytes), plus the engine's details.
 */
export interface AllocatorStats extends PoolAllocatorStats {
  /** Rule a: allocas served from free memory the pool already held. */
  readonly reuseFrontierReached: number;
  /** Rule b: allocas that took a dying block whose frontier their wait dominates (no waiting at all). */
  readonly reuseDominated: number;
  /** Rule c: allocas for which the pool grew. */
  readonly growths: number;
  /** Rule d: allocas that had to wait for a pending dealloca. */
  readonly waits: number;
  /** Requests queued for memory right now. */
  readonly queuedRequests: number;
  /** Allocas whose signal was not signalled yet. */
  readonly pendingAllocas: number;
  /** Blocks kept out of the pool forever because their death frontier failed (bytes: quarantinedBytes). */
  readonly quarantinedBlocks: number;
  /** Per affinity mask. */
  readonly queues: ReadonlyMap<QueueAffinity, QueueStats>;
  /** The pool's own counters. */
  readonly pool: PoolStats;
}
