/**
 * The WebGPU device's counters (`device.stats`): submissions, error-scope pops, operations per queue,
 * deferrals, plans, bind group cache, staging and the GPU objects Keel holds. For tests, benchmarks and
 * tuning; a snapshot, read by `WebGpuDevice.stats`.
 */
import type { UploadPoolStats } from './write-staging';

/** Counters of the device (for tests, benchmarks and tuning). */
export interface WebGpuDeviceStats {
  /** `queue.submit` calls (one per submission batch that encoded anything). */
  readonly submissions: number;
  /**
   * `popErrorScope` calls around queue operations: three per submission batch, and three more for an
   * operation whose encoding made a call that reports errors at once (a bind group or buffer made on
   * first use, a `queueUpdate`'s `writeBuffer`); `createBuffer`'s and `createExecutable`'s own scopes are
   * not counted.
   */
  readonly errorScopePops: number;
  /** Operations per logical queue. */
  readonly operationsPerQueue: readonly number[];
  /** Operations deferred behind waits not ready at the call (allocas, deallocas: allocatorStats()). */
  readonly deferred: number;
  /** Replay plans built. */
  readonly plansBuilt: number;
  /** Bind groups created, and device-wide cache hits/misses/evictions over every layout. */
  readonly bindGroups: {
    readonly hits: number;
    readonly misses: number;
    readonly evictions: number;
    readonly size: number;
  };
  readonly uniformRingBytes: number;
  readonly readback: { readonly created: number; readonly reused: number };
  /** `queueWrite`'s staging buffer (write-staging.ts; the names predate it: `remapping` is always 0). */
  readonly upload: UploadPoolStats;
  /** Operations not completed yet (queueAlloca/queueDealloca excepted: see `deferred`). */
  readonly pending: number;
  /**
   * GPUBuffers Keel created on this device and has not destroyed yet (dedicated buffers, slabs,
   * staging, uniform ring, scratch, resident constants): 0 once `destroy()` resolved.
   */
  readonly gpuBuffers: number;
  /** Bind group layouts interned (with their bind group caches); 0 once `destroy()` resolved. */
  readonly bindGroupLayouts: number;
}
