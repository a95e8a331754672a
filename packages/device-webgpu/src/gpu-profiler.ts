/**
 * Per-dispatch times of the WebGPU device for traces (hal Trace, `device.startTrace()`).
 *
 * Only executes that a trace with dispatches records are touched; everything else encodes as before
 * (the replay plan checks one field, `PlanContext.profiling`, per dispatch).
 *
 * - With `timestamp-query` (the device requests the feature whenever the adapter has it) and the
 *   trace's `gpuTimestamps` option on, each traced dispatch gets its own compute pass with
 *   `timestampWrites` (begin and end) into one query set used as a ring of QUERY_CAPACITY queries.
 *   At the end of the submission the used range is resolved into one reused QUERY_RESOLVE buffer and
 *   copied into a pooled MAP_READ staging buffer, which is mapped asynchronously after the submit (off
 *   the critical path: nothing waits for it but the trace's export). The GPU clock is aligned to the
 *   host clock at export (hal TraceRecorder). A submission with more dispatches than the ring holds
 *   times the rest as host estimates.
 * - Without it, each traced dispatch is an estimate: the submission's host-observed time (submit to
 *   completion) split evenly over its dispatches, marked `args.timing: 'host-estimate'`.
 */
import { type TraceRecorder, traceNow } from '@keel/hal/driver';
import type { GpuEncoding } from './gpu-encoding';
import { inOwnScopes } from './gpu-errors';
import { MAP_READ, USAGE_COPY_SRC, USAGE_QUERY_RESOLVE } from './gpu-flags';
import { PendingWork } from './pending-work';
import type { QueueOp } from './queue-op';
import { ReadbackPool } from './readback-pool';
import type { CompiledExport } from './webgpu-executable';

/** Queries in the ring (two per timed dispatch). */
const QUERY_CAPACITY = 4096;

/** One traced execute's dispatches. */
export class SubmissionProfile {
  declare readonly trace: TraceRecorder;
  declare readonly queue: number;
  declare readonly timestamps: boolean;
  /** Its dispatches' exports, in encoding order (trace events name them by name and executable). */
  readonly dispatches: CompiledExport[] = [];
  /** Dispatches timed by timestamps: the first `timed` of `dispatches`, queries [first, first + 2·timed). */
  timed = 0;
  first = 0;
  staging: GPUBuffer | undefined;
  stagingSize = 0;
  submitted = 0;
  /** The trace's number of this execute (`args.execute` of its dispatch events). */
  declare readonly execute: number;

  constructor(trace: TraceRecorder, queue: number, timestamps: boolean) {
    this.trace = trace;
    this.queue = queue;
    this.timestamps = timestamps;
    this.execute = trace.nextExecute();
  }
}

export class GpuProfiler {
  readonly #gpu: GPUDevice;
  readonly #readback: ReadbackPool;
  readonly #hasTimestamps: boolean;
  #querySet: GPUQuerySet | undefined;
  #resolve: GPUBuffer | undefined;
  #next = 0;
  /** The profile of the execute being encoded (set between `begin` and `end`). */
  #current: SubmissionProfile | undefined;
  readonly #maps = new PendingWork();
  #destroyed = false;

  constructor(gpu: GPUDevice, readback: ReadbackPool) {
    this.#gpu = gpu;
    this.#readback = readback;
    this.#hasTimestamps = gpu.features.has('timestamp-query');
  }

  /** True when the device can time dispatches on the GPU. */
  get hasTimestamps(): boolean {
    return this.#hasTimestamps;
  }

  /** Starts profiling `op` (a traced execute): the replay plans then call `dispatchPass`. */
  begin(op: QueueOp, trace: TraceRecorder): void {
    const timestamps = trace.dispatchTiming === 'gpu-timestamp' && this.#hasTimestamps;
    if (timestamps && this.#querySet === undefined) this.#createQueries();
    const profile = new SubmissionProfile(trace, op.queue, timestamps);
    // Each submission starts at a multiple of 32 queries (resolve offsets are multiples of 256 bytes)
    // with at least half the ring ahead; earlier submissions' queries were resolved in GPU order.
    let first = Math.ceil(this.#next / 32) * 32;
    if (first > QUERY_CAPACITY / 2) first = 0;
    profile.first = first;
    this.#current = profile;
    op.profile = profile;
  }

  /**
   * Makes the query set and its resolve buffer, in error scopes of their own. If either creation
   * failed (out of memory), the executes that used them fail with their batch's GPU error, and both
   * are dropped once that is known, so the next timed execute makes them again.
   */
  #createQueries(): void {
    const gpu = this.#gpu;
    const [querySet, errors] = inOwnScopes(
      gpu,
      () => {
        this.#resolve = gpu.createBuffer({
          label: 'keel trace resolve',
          size: QUERY_CAPACITY * 8,
          usage: USAGE_QUERY_RESOLVE | USAGE_COPY_SRC,
        });
        return gpu.createQuerySet({ label: 'keel trace', type: 'timestamp', count: QUERY_CAPACITY });
      },
      (promise) => this.#maps.track(promise),
    );
    this.#querySet = querySet;
    errors.then((error) => {
      if (error === undefined || this.#querySet !== querySet) return;
      querySet.destroy();
      this.#resolve?.destroy();
      this.#querySet = undefined;
      this.#resolve = undefined;
    });
  }

  /**
   * The pass dispatch `exp` is encoded in: a fresh pass with timestamp writes when it is timed (the
   * caller ends it after the dispatch: `timed` true), else the open pass (`undefined`).
   */
  dispatchPass(encoding: GpuEncoding, exp: CompiledExport): GPUComputePassEncoder | undefined {
    const profile = this.#current;
    if (profile === undefined) return undefined;
    profile.dispatches.push(exp);
    if (!profile.timestamps || profile.timed !== profile.dispatches.length - 1) return undefined;
    const at = profile.first + 2 * profile.timed;
    if (at + 2 > QUERY_CAPACITY) return undefined;
    profile.timed++;
    return encoding.timedPass({
      querySet: this.#querySet as GPUQuerySet,
      beginningOfPassWriteIndex: at,
      endOfPassWriteIndex: at + 1,
    });
  }

  /** The execute's encoding is complete: resolves its queries into a staging buffer. */
  end(encoder: GPUCommandEncoder): void {
    const profile = this.#current;
    this.#current = undefined;
    if (profile === undefined || profile.timed === 0) return;
    const count = 2 * profile.timed;
    const bytes = count * 8;
    const size = ReadbackPool.sizeFor(bytes);
    const staging = this.#readback.acquire(size);
    profile.staging = staging;
    profile.stagingSize = size;
    const resolve = this.#resolve as GPUBuffer;
    encoder.resolveQuerySet(this.#querySet as GPUQuerySet, profile.first, count, resolve, profile.first * 8);
    encoder.copyBufferToBuffer(resolve, profile.first * 8, staging, 0, bytes);
    this.#next = profile.first + count;
  }

  /** Encoding failed: nothing of the profile is submitted. */
  abandon(op: QueueOp): void {
    this.#current = undefined;
    op.profile = undefined;
  }

  /** The execute was submitted: maps its timestamps asynchronously (they reach the trace then). */
  submitted(op: QueueOp): void {
    const profile = op.profile;
    if (profile === undefined) return;
    profile.submitted = traceNow();
    const staging = profile.staging;
    if (staging === undefined) return;
    const mapped = staging.mapAsync(MAP_READ, 0, profile.stagingSize).then(
      () => this.#read(profile),
      // A failed map: the staging buffer may be invalid, so it is not kept for reuse.
      () => this.#release(profile, true),
    );
    this.#maps.track(mapped);
    profile.trace.track(mapped);
  }

  #read(profile: SubmissionProfile): void {
    const staging = profile.staging as GPUBuffer;
    try {
      const stamps = new BigUint64Array(staging.getMappedRange(0, profile.timed * 16).slice(0));
      for (let i = 0; i < profile.timed; i++) {
        const exp = profile.dispatches[i] as CompiledExport;
        profile.trace.gpuDispatch(
          profile.queue,
          exp.name,
          stamps[2 * i] as bigint,
          stamps[2 * i + 1] as bigint,
          profile.submitted,
          { executable: exp.executable, execute: profile.execute, timing: 'gpu-timestamp' },
        );
      }
    } finally {
      this.#release(profile);
    }
  }

  #release(profile: SubmissionProfile, discard = false): void {
    const staging = profile.staging;
    if (staging === undefined) return;
    profile.staging = undefined;
    this.#readback.release(staging, profile.stagingSize, this.#destroyed || discard);
  }

  /**
   * A traced execute completed (at host time `end`): its untimed dispatches get host estimates (the
   * submission's time split evenly), timed ones arrive with their timestamps.
   */
  completed(op: QueueOp, end: number): void {
    const profile = op.profile;
    if (profile === undefined) return;
    op.profile = undefined;
    const count = profile.dispatches.length;
    if (count === profile.timed) return;
    const start = profile.submitted === 0 ? end : profile.submitted;
    const step = (end - start) / count;
    for (let i = profile.timed; i < count; i++) {
      const exp = profile.dispatches[i] as CompiledExport;
      profile.trace.dispatch(profile.queue, exp.name, start + i * step, start + (i + 1) * step, {
        executable: exp.executable,
        execute: profile.execute,
        timing: 'host-estimate',
      });
    }
  }

  /** Resolves once no timestamp map is pending (the device awaits it before destroying buffers). */
  settled(): Promise<void> {
    return this.#maps.settled();
  }

  destroy(): void {
    this.#destroyed = true;
    this.#querySet?.destroy();
    this.#resolve?.destroy();
    this.#querySet = undefined;
    this.#resolve = undefined;
  }
}
