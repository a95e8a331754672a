/**
 * The counters of a QueueAllocator (internal): what its `stats` reports of its own history — allocas,
 * deallocas and failures, live bytes and their peak, which rule served each alloca, quarantined blocks —
 * overall and per queue affinity mask. The allocator's engine (queue-allocator.ts) decides what happened
 * and counts it here; the shape of the snapshot is allocator-stats.ts.
 *
 * Promises: counting allocates nothing once a queue mask has been seen (a mask's counters are made at its
 * first alloca or dealloca and kept for the allocator's life); `snapshot` returns a fresh object that
 * later counting does not change (the per-queue counters copied); `resetPeaks` sets the live peak to the
 * live bytes now. The counters only count: they check nothing and never throw.
 */
import type { QueueAffinity } from '@keel/hal';
import type { AllocatorStats, QueueStats } from './allocator-stats';
import type { PoolStats } from './pool';

interface MutableQueueStats {
  allocas: number;
  deallocas: number;
  liveBytes: number;
}

export class AllocatorCounters {
  allocas = 0;
  deallocas = 0;
  failures = 0;
  liveBytes = 0;
  peakLiveBytes = 0;
  /** Rule a. */
  reuseFrontierReached = 0;
  /** Rule b. */
  reuseDominated = 0;
  /** Rule c. */
  growths = 0;
  /** Rule d, and requests queued for memory. */
  waits = 0;
  quarantinedBlocks = 0;
  quarantinedBytes = 0;
  readonly #queues = new Map<number, MutableQueueStats>();

  /** An alloca issued on queue mask `mask`. */
  alloca(mask: number): void {
    this.allocas++;
    this.#queue(mask).allocas++;
  }

  /** A dealloca issued on queue mask `mask`. */
  dealloca(mask: number): void {
    this.deallocas++;
    this.#queue(mask).deallocas++;
  }

  /** `bytes` more live bytes (negative: fewer) of an allocation issued on queue mask `mask`. */
  live(mask: number, bytes: number): void {
    this.liveBytes += bytes;
    this.peakLiveBytes = Math.max(this.peakLiveBytes, this.liveBytes);
    this.#queue(mask).liveBytes += bytes;
  }

  /** A block of `byteLength` bytes was quarantined. */
  quarantined(byteLength: number): void {
    this.quarantinedBlocks++;
    this.quarantinedBytes += byteLength;
  }

  /** Sets the live peak to the live bytes now. */
  resetPeaks(): void {
    this.peakLiveBytes = this.liveBytes;
  }

  /** The allocator's stats: these counters, with what the allocator and its pool hold right now. */
  snapshot(
    pool: PoolStats,
    dyingBytes: number,
    queuedRequests: number,
    pendingAllocas: number,
  ): AllocatorStats {
    const queues = new Map<QueueAffinity, QueueStats>();
    for (const [mask, q] of this.#queues) queues.set(mask, { ...q });
    return {
      allocas: this.allocas,
      deallocas: this.deallocas,
      failures: this.failures,
      liveBytes: this.liveBytes,
      peakLiveBytes: this.peakLiveBytes,
      dyingBytes,
      reservedBytes: pool.reservedBytes,
      peakReservedBytes: pool.peakReservedBytes,
      reuseFrontierReached: this.reuseFrontierReached,
      reuseDominated: this.reuseDominated,
      growths: this.growths,
      waits: this.waits,
      queuedRequests,
      pendingAllocas,
      quarantinedBlocks: this.quarantinedBlocks,
      quarantinedBytes: this.quarantinedBytes,
      queues,
      pool,
    };
  }

  #queue(mask: number): MutableQueueStats {
    let q = this.#queues.get(mask);
    if (!q) {
      q = { allocas: 0, deallocas: 0, liveBytes: 0 };
      this.#queues.set(mask, q);
    }
    return q;
  }
}
