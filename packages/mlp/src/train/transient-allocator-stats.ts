/**
 * The statistics of the queue allocator behind a device's `queueAlloca` (the 'tlsf' pool both devices
 * use by default). hal's Device has no statistics accessor; the CPU and WebGPU devices each expose
 * theirs (`allocatorStats()`), with different signatures.
 *
 * A run reports its own share (`allocatorStatsSince`): the counters of events (allocas, deallocas,
 * reuses, growths, waits, failures, …) are differences between a snapshot taken before the run's first
 * operation on the device and one after its last; the gauges (live, dying, reserved bytes, queued and
 * pending requests, quarantined bytes) are the values after the run. The peaks cannot be differences
 * and the devices offer no way to reset them: they are the device's since its allocator first
 * allocated, which is the run's own only when the allocator had allocated nothing before (`peaksSince`).
 */
import type { AllocatorStats, QueueStats } from '@keel/allocator';
import { CpuDevice } from '@keel/device-cpu';
import { WebGpuDevice } from '@keel/device-webgpu';
import type { Device, QueueAffinity } from '@keel/hal';

/** The transient ('tlsf') allocator's statistics, or undefined when the device does not expose them. */
export function transientAllocatorStats(device: Device): AllocatorStats | undefined {
  if (device instanceof CpuDevice) return device.allocatorStats().get('tlsf');
  if (device instanceof WebGpuDevice) return device.allocatorStats('tlsf');
  return undefined;
}

/**
 * What the allocator's peaks cover: 'run' when it had allocated nothing before the run (the run opened
 * the device, or the caller's device was fresh), 'device' when it had (a caller's device used before:
 * its peaks may come from that earlier work).
 */
export type PeaksSince = 'run' | 'device';

/** Whether the peaks of an allocator whose stats were `before` the run are the run's own. */
export function peaksSince(before: AllocatorStats | undefined): PeaksSince {
  return before === undefined ||
    (before.allocas === 0 && before.peakLiveBytes === 0 && before.peakReservedBytes === 0)
    ? 'run'
    : 'device';
}

/**
 * The run's share of `after`, given the snapshot `before` it (undefined: the allocator did not exist
 * yet, so everything is the run's). Counters are differences, gauges and peaks are `after`'s.
 */
export function allocatorStatsSince(
  before: AllocatorStats | undefined,
  after: AllocatorStats | undefined,
): AllocatorStats | undefined {
  if (after === undefined || before === undefined) return after;
  const queues = new Map<QueueAffinity, QueueStats>();
  for (const [mask, q] of after.queues) {
    const b = before.queues.get(mask);
    queues.set(mask, {
      allocas: q.allocas - (b?.allocas ?? 0),
      deallocas: q.deallocas - (b?.deallocas ?? 0),
      liveBytes: q.liveBytes,
    });
  }
  return {
    ...after,
    allocas: after.allocas - before.allocas,
    deallocas: after.deallocas - before.deallocas,
    failures: after.failures - before.failures,
    reuseFrontierReached: after.reuseFrontierReached - before.reuseFrontierReached,
    reuseDominated: after.reuseDominated - before.reuseDominated,
    growths: after.growths - before.growths,
    waits: after.waits - before.waits,
    queues,
    pool: {
      ...after.pool,
      reserves: after.pool.reserves - before.pool.reserves,
      releases: after.pool.releases - before.pool.releases,
      failedReserves: after.pool.failedReserves - before.pool.failedReserves,
      growths: after.pool.growths - before.pool.growths,
      slabsDestroyed: after.pool.slabsDestroyed - before.pool.slabsDestroyed,
    },
  };
}
