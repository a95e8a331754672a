/**
 * Keel's WebGPU device (see README § Contract).
 *
 * Queues: WebGPU has one GPUQueue; the device exposes `queueCount` logical queues (default 2)
 * multiplexed onto it. An affinity mask selects the lowest set bit below `queueCount`
 * (QueueAffinity.select); the queue index only labels the operation (and is what allocations are
 * tagged with): ordering comes from fences alone, and all work meets in the one GPUQueue in submission
 * order. Operations that become runnable in one synchronous turn share one submission (one command
 * encoder, one `queue.submit`, one set of error scopes: op-scheduler.ts § Batching), submitted at the
 * end of the turn or at `flush`.
 *
 * The queue methods and their argument checks are hal's driver kit (`QueueFront`, @keel/hal/driver);
 * this class implements the kit's narrow surface (`record`: a pooled QueueOp from the scheduler;
 * `submit`/`submitExecute`: issue now or defer, op-scheduler.ts; `allocate`/`deallocate`: the transient
 * pools, @keel/allocator PoolRegistry), resources, statistics, loss and teardown.
 */
import { type AllocatorStats, PoolRegistry } from '@keel/allocator';
import { createCommandBuffer } from '@keel/command-buffer';
import { type Fence, type KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import {
  type Buffer,
  type BufferParams,
  type CommandBuffer,
  type CommandBufferOptions,
  type Device,
  type DeviceInfo,
  type Executable,
  type ExecutableSource,
  QueueAffinity,
  type TraceOptions,
  type UnhandledFailureHook,
} from '@keel/hal';
import * as driver from '@keel/hal/driver';
import { unavailable } from './acquire-gpu-device';
import type { BindingLayouts } from './binding-layouts';
import type { BuiltinKernels } from './builtin-kernels';
import { GpuEncoding } from './gpu-encoding';
import { type ErrorScopes, fromGpuError, inOwnScopes } from './gpu-errors';
import { alignUp, createGpuMemory, type GpuMemory, gpuBufferSize } from './gpu-memory';
import { GpuProfiler } from './gpu-profiler';
import { GpuScratch } from './gpu-scratch';
import { GpuSlabProvider } from './gpu-slab-provider';
import { IndirectValidator } from './indirect-validator';
import { GpuOpRunner } from './op-runner';
import { OpScheduler } from './op-scheduler';
import { PendingWork, type TrackWork } from './pending-work';
import { ReplayPlanner } from './plan-builder';
import { keepExecuteArrays, keepUpdateBytes, type QueueOp } from './queue-op';
import { ReadbackPool } from './readback-pool';
import type { PlanContext } from './replay-plan';
import { ResidentConstants } from './resident-constants';
import { TransferEncoder } from './transfer-encoder';
import { UniformRing } from './uniform-ring';
import { WebGpuBuffer } from './webgpu-buffer';
import type { WebGpuDeviceStats } from './webgpu-device-stats';
import { compileExecutable } from './webgpu-executable';
import { WriteStaging } from './write-staging';

/** Everything the device is made of (built by createWebGpuDevice). */
export interface WebGpuDeviceParts {
  readonly gpu: GPUDevice;
  readonly owned: boolean;
  /** Kept reachable while the device lives (Dawn's instance). */
  readonly instance: GPU | undefined;
  readonly info: DeviceInfo;
  readonly layouts: BindingLayouts;
  /** The device's error scopes around its own WebGPU calls (gpu-errors.ts ErrorScopes). */
  readonly scopes: ErrorScopes;
  readonly kernels: BuiltinKernels;
  readonly transientSlabSize: number;
  readonly transientBudget: number;
  readonly tableCacheSize: number;
  readonly onUncapturedError: ((error: GPUError) => void) | undefined;
  readonly onUnhandledFailure: UnhandledFailureHook | undefined;
}

// The front's record type is the kit's QueueRecord (the device's records are QueueOps): the published
// types then name no internal class of this package.
export class WebGpuDevice
  extends driver.QueueFront<WebGpuBuffer, driver.QueueRecord<WebGpuBuffer>>
  implements Device
{
  declare readonly info: DeviceInfo;
  declare readonly lost: Promise<KeelError>;
  /** The GPUDevice Keel runs on (shared with the caller when one was given). */
  declare readonly gpuDevice: GPUDevice;
  declare readonly name: string;

  readonly #owned: boolean;
  /** The GPU instance the device came from (Dawn's, in Node): held so it outlives the device. */
  readonly #instance: GPU | undefined;
  readonly #layouts: BindingLayouts;
  readonly #ring: UniformRing;
  readonly #scratch: GpuScratch;
  readonly #readback: ReadbackPool;
  readonly #uploads: WriteStaging;
  readonly #resident: ResidentConstants;
  readonly #indirect: IndirectValidator;
  readonly #runner: GpuOpRunner;
  readonly #scheduler: OpScheduler;
  readonly #profiler: GpuProfiler;
  readonly #slabs: GpuSlabProvider;
  readonly #pools: PoolRegistry<GpuMemory>;
  readonly #tableCacheSize: number;
  readonly #storageAlignment: number;
  readonly #uniformAlignment: number;
  /** Dedicated buffers alive (destroyed with the device). */
  readonly #buffers = new Set<WebGpuBuffer>();
  /** Buffers destroyed while operations were deferred: their memory goes once none is deferred. */
  readonly #releases: WebGpuBuffer[] = [];
  /** Builds the device's replay plans (plan-builder.ts). */
  readonly #planner: ReplayPlanner;
  #resolveLost: (reason: KeelError) => void = () => {};
  #destroying: Promise<void> | undefined;
  #deferrals = 0;
  readonly #perQueue: number[];
  readonly #onUncapturedError: (event: Event) => void;
  /** Pipeline compilations and resource error scopes not settled yet (awaited by destroy). */
  readonly #compiles = new PendingWork();

  constructor(parts: WebGpuDeviceParts) {
    super(`webgpu device '${parts.info.name}'`, WebGpuBuffer);
    const gpu = parts.gpu;
    this.gpuDevice = gpu;
    this.info = parts.info;
    this.name = `webgpu device '${parts.info.name}'`;
    this.#owned = parts.owned;
    this.#instance = parts.instance;
    this.#layouts = parts.layouts;
    this.#tableCacheSize = parts.tableCacheSize;
    this.#storageAlignment = parts.info.limits.minStorageBufferOffsetAlignment;
    this.#uniformAlignment = Math.max(16, gpu.limits.minUniformBufferOffsetAlignment);
    this.#perQueue = new Array<number>(parts.info.queueCount).fill(0);
    const names = this.names;
    const encoding = new GpuEncoding(gpu);
    const scopes = parts.scopes;
    const track: TrackWork = (promise) => this.#compiles.track(promise);
    this.#ring = new UniformRing(gpu, parts.layouts.constants, this.#uniformAlignment, scopes, track);
    this.#scratch = new GpuScratch(gpu, track);
    parts.layouts.detours.track = track;
    const transfer = new TransferEncoder(gpu, encoding, this.#ring, parts.kernels, this.#scratch, scopes);
    this.#readback = new ReadbackPool(gpu, scopes);
    this.#uploads = new WriteStaging(gpu, scopes);
    this.#resident = new ResidentConstants(gpu, parts.layouts.constants, this.#uniformAlignment, scopes, {
      what: names.queueExecute,
      track,
    });
    this.#indirect = new IndirectValidator(gpu, parts.kernels, this.#ring);
    const context: PlanContext = {
      gpu,
      what: names.queueExecute,
      encoding,
      ring: this.#ring,
      transfer,
      scratch: this.#scratch,
      resident: this.#resident,
      indirect: this.#indirect,
      detours: parts.layouts.detours,
      profiling: undefined,
    };
    this.#profiler = new GpuProfiler(gpu, this.#readback);
    // A GPUBuffer destroyed before the submit of work that uses it fails that submit: the open batch
    // (operations of this turn, not submitted yet) goes first.
    this.#slabs = new GpuSlabProvider(gpu, 'keel transient slab', undefined, () => this.#scheduler.flush(), {
      what: this.names.queueAlloca,
      track,
      // Later allocas get fresh pools; the broken slab goes once its buffers are deallocated.
      failed: () => {
        if (!this.destroyed && this.lossReason === undefined) this.#pools.retire();
      },
    });
    this.#pools = new PoolRegistry(this.#slabs, {
      poolLabel: 'webgpu alloca',
      deviceLabel: parts.info.name,
      backend: 'webgpu',
      alignment: Math.max(16, this.#storageAlignment),
      slabSize: parts.transientSlabSize,
      ringCapacity: parts.transientSlabSize,
      budget: parts.transientBudget,
    });
    this.#runner = new GpuOpRunner({
      gpu,
      names,
      encoding,
      ring: this.#ring,
      scratch: this.#scratch,
      transfer,
      readback: this.#readback,
      uploads: this.#uploads,
      indirect: this.#indirect,
      context,
      profiler: this.#profiler,
      scopes,
    });
    this.#scheduler = new OpScheduler(
      this.#runner,
      gpu,
      scopes,
      this.name,
      driver.unhandledFailureReporter(parts.onUnhandledFailure, this.name),
    );
    this.#scheduler.onIdle = () => this.#flushReleases();
    this.#planner = new ReplayPlanner(this, {
      uniformAlignment: this.#uniformAlignment,
      tableCacheSize: this.#tableCacheSize,
    });
    this.lost = new Promise<KeelError>((resolve) => {
      this.#resolveLost = resolve;
    });
    const onError = parts.onUncapturedError ?? defaultErrorReporter();
    this.#onUncapturedError = (event) => onError((event as GPUUncapturedErrorEvent).error);
    gpu.addEventListener('uncapturederror', this.#onUncapturedError);
    gpu.lost.then(
      (info) => this.#onLost(info),
      () => this.#onLost(undefined),
    );
  }

  #onLost(info: GPUDeviceLostInfo | undefined): void {
    if (this.destroyed || this.lossReason !== undefined) return;
    const reason = unavailable(
      `${this.name}: the GPU device was lost (${info?.reason ?? 'unknown'}: ${info?.message ?? 'no message'})`,
    );
    this.lossReason = reason;
    this.#runner.gone = true;
    // The allocators stop reacting before pending work fails: their allocas fail with the loss too.
    this.#pools.destroy(false, reason, () => this.#scheduler.failAll(reason));
    this.#resolveLost(reason);
  }

  /** Counts the operations of each logical queue (stats.operationsPerQueue). */
  protected override begin(method: driver.FrontMethod, affinity: number, wait: Fence, signal: Fence): number {
    const queue = super.begin(method, affinity, wait, signal);
    this.#perQueue[queue] = (this.#perQueue[queue] as number) + 1;
    return queue;
  }

  // ---------------------------------------------------------------------------------------------------
  // Resources

  /**
   * A dedicated GPUBuffer (zero-filled by WebGPU). Memory type: DEVICE_LOCAL (WebGPU has no host-visible
   * storage memory; `queueRead`/`queueWrite` stage through mappable buffers), whatever was asked for.
   */
  createBuffer(params: BufferParams & { readonly byteLength: number }): Buffer {
    const what = this.names.createBuffer;
    const usage = this.checkCreateBuffer(params);
    const byteLength = params.byteLength;
    const gpu = this.gpuDevice;
    const [memory, errors] = inOwnScopes(
      gpu,
      () => createGpuMemory(gpu, byteLength, params.label),
      (promise) => this.#compiles.track(promise),
    );
    const buffer = new WebGpuBuffer(
      this,
      byteLength,
      usage,
      { affinity: (params.affinity ?? QueueAffinity.ANY) >>> 0, pool: undefined, queueAllocated: false },
      params.label,
      memory,
      undefined,
    );
    // Out of memory (or any other GPU error) arrives asynchronously: later operations on the buffer
    // fail with it (RESOURCE_EXHAUSTED for GPUOutOfMemoryError) instead of the uncaptured-error handler.
    errors.then((error) => {
      if (error !== undefined) buffer.gpuFailure = fromGpuError(error, what);
      else memory.proven = true;
    });
    this.#buffers.add(buffer);
    return buffer;
  }

  /**
   * INVALID_ARGUMENT when a GPUBuffer for `byteLength` bytes (rounded up to 4, as WebGPU buffers are)
   * would exceed the device's maxBufferSize (WebGPU's validation rule for createBuffer).
   */
  protected override checkSize(byteLength: number, what: string, name: string): void {
    gpuBufferSize(byteLength, this.info.limits.maxBufferSize, `${what}: ${name}`);
  }

  /** @internal BufferOwner: the device was destroyed (its queue-allocated buffers read `destroyed`). */
  get ownerDestroyed(): boolean {
    return this.destroyed;
  }

  /** @internal BufferOwner: a dedicated buffer was destroyed by its owner. */
  releaseBuffer(buffer: WebGpuBuffer): void {
    if (this.destroyed) return;
    this.#buffers.delete(buffer);
    if (this.#scheduler.deferredCount > 0) {
      this.#releases.push(buffer);
    } else {
      // Operations of this turn may use it: their batch is submitted before it is destroyed.
      this.#scheduler.flush();
      buffer.memory?.buffer.destroy();
    }
  }

  #flushReleases(): void {
    if (this.#releases.length === 0) return;
    this.#scheduler.flush();
    for (const buffer of this.#releases) buffer.memory?.buffer.destroy();
    this.#releases.length = 0;
  }

  createExecutable(source: ExecutableSource): Promise<Executable> {
    try {
      this.checkUsable('createExecutable');
    } catch (error) {
      return Promise.reject(error);
    }
    const limits = this.gpuDevice.limits;
    const compiled = compileExecutable(
      this,
      this.gpuDevice,
      this.#layouts,
      {
        maxBindings: this.info.limits.maxBindings,
        maxInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
        maxWorkgroupSize: [
          limits.maxComputeWorkgroupSizeX,
          limits.maxComputeWorkgroupSizeY,
          limits.maxComputeWorkgroupSizeZ,
        ],
      },
      source,
      () => this.#unavailable('createExecutable'),
    );
    return this.#compiles.track(compiled);
  }

  /** UNAVAILABLE when the device was lost or destroyed (else undefined): device loss is never a caller's mistake. */
  #unavailable(what: driver.FrontMethod): KeelError | undefined {
    const reason = this.lossReason;
    if (reason === undefined && !this.destroyed) return undefined;
    return unavailable(
      `${this.name} ${what}: the device was ${reason === undefined ? 'destroyed' : 'lost'}`,
      reason,
    );
  }

  createCommandBuffer(options?: CommandBufferOptions): CommandBuffer {
    this.checkUsable('createCommandBuffer');
    return createCommandBuffer(this, options);
  }

  /** A TimelineSemaphore (WebGPU work completes on this thread's event loop). */
  createSemaphore(initialValue = 0): Semaphore {
    this.checkUsable('createSemaphore');
    return new TimelineSemaphore(initialValue, { label: `${this.info.name} semaphore` });
  }

  // ---------------------------------------------------------------------------------------------------
  // Queue-ordered allocation

  /**
   * Snapshots of the transient pools' allocator statistics, by pool name (hal's one
   * `Device.allocatorStats()` shape; a pool never used is absent).
   */
  allocatorStats(): Map<string, AllocatorStats>;
  /** @deprecated Pass no pool and read the map: `allocatorStats().get(pool)`. */
  allocatorStats(pool: string): AllocatorStats | undefined;
  allocatorStats(pool?: string): Map<string, AllocatorStats> | AllocatorStats | undefined {
    const stats = this.#pools.stats();
    return pool === undefined ? stats : stats.get(pool);
  }

  /**
   * A buffer from the transient pool (TLSF over GPUBuffer slabs by default), usable by operations
   * ordered after `signal`. Offsets are aligned to minStorageBufferOffsetAlignment (at least 16).
   */
  /**
   * queueAlloca: a buffer from the transient pool (TLSF over GPUBuffer slabs by default), usable by
   * operations ordered after `signal`. Offsets are aligned to minStorageBufferOffsetAlignment (at least 16).
   */
  protected allocate(queue: number, wait: Fence, signal: Fence, request: driver.AllocaRequest): Buffer {
    const { params, size, pool } = request;
    const allocator = this.#pools.allocator(pool, this.names.queueAlloca);
    // Sizes are rounded to 4 so every binding and copy of the buffer stays inside its block.
    const allocation = allocator.alloca(QueueAffinity.of(queue), wait, signal, alignUp(size, 4), {
      label: params.label,
    });
    const buffer = new WebGpuBuffer(
      this,
      size,
      request.usage,
      { affinity: (params.affinity ?? QueueAffinity.of(queue)) >>> 0, pool, queueAllocated: true },
      params.label,
      undefined,
      allocation,
    );
    // Memory found at the call and its effective wait already ordered: work ordered after `signal` may
    // be submitted right away (the allocator signals it once that wait is reached). The effective wait,
    // not the call's: a block taken from a pending dealloca (rule d) is safe only after that dealloca's
    // frontier, and the previous owner's work behind it may not even be encoded yet.
    if (allocation.block !== undefined && this.#scheduler.isOrdered(allocation.wait)) {
      this.#scheduler.markOrdered(signal);
    }
    return buffer;
  }

  protected deallocate(queue: number, wait: Fence, signal: Fence, buffer: WebGpuBuffer): void {
    // The allocator signals `signal` once the death frontier is reached: `wait`, joined with the
    // alloca's signal while the alloca is pending (reached once it is live).
    const allocation = buffer.allocation;
    const ordered =
      this.#scheduler.isOrdered(wait) &&
      (allocation === undefined || this.#scheduler.isOrdered(allocation.signal));
    this.#pools.dealloca(queue, wait, signal, buffer, allocation, this.names.queueDealloca);
    buffer.markDeallocated();
    if (ordered) this.#scheduler.markOrdered(signal);
  }

  // ---------------------------------------------------------------------------------------------------
  // Operations

  protected record(
    kind: driver.OpKind,
    queue: number,
    wait: Fence,
    signal: Fence,
  ): driver.QueueRecord<WebGpuBuffer> {
    return this.#scheduler.acquire(kind, queue, wait, signal);
  }

  /**
   * Issues `op`: submitted now when its waits allow, else deferred. A deferred update copies its bytes
   * at the call (prepareDefer); a write's source is read when it runs (into pooled staging buffers,
   * op-runner.ts) and must stay unchanged until its signal.
   */
  protected submit(record: driver.QueueRecord<WebGpuBuffer>): void {
    const op = record as QueueOp;
    this.#issue(op, op.kind === driver.OpKind.UPDATE ? keepUpdateBytes : undefined);
  }

  protected submitExecute(record: driver.QueueRecord<WebGpuBuffer>): void {
    const op = record as QueueOp;
    const commandBuffers = op.commandBuffers;
    const count = commandBuffers.length;
    try {
      for (let i = 0; i < count; i++)
        op.plans.push(
          (commandBuffers[i] as CommandBuffer).devicePlan(this.#planner.key, this.#planner.build),
        );
    } catch (error) {
      op.plans.length = 0;
      throw error;
    }
    for (let i = 0; i < count; i++) (commandBuffers[i] as CommandBuffer).markSubmitted();
    this.#issue(op, keepExecuteArrays);
  }

  /** Submits the operations batched so far in this turn now (else at the end of the turn). */
  override flush(affinity: QueueAffinity): void {
    super.flush(affinity);
    this.#scheduler.flush();
  }

  #issue(op: QueueOp, prepareDefer?: (op: QueueOp) => void): void {
    const before = this.#scheduler.deferredCount;
    this.#scheduler.issue(op, prepareDefer);
    if (this.#scheduler.deferredCount > before) this.#deferrals++;
  }

  // ---------------------------------------------------------------------------------------------------
  // Statistics and teardown

  /** The GPU object the device was requested from (undefined when a GPUDevice or adapter was given). */
  get gpu(): GPU | undefined {
    return this.#instance;
  }

  get stats(): WebGpuDeviceStats {
    let hits = 0;
    let misses = 0;
    let evictions = 0;
    let size = 0;
    for (const layout of this.#layouts.all()) {
      const s = layout.cache.stats;
      hits += s.hits;
      misses += s.misses;
      evictions += s.evictions;
      size += s.size;
    }
    return {
      submissions: this.#runner.submissions,
      errorScopePops: this.#scheduler.scopePops,
      operationsPerQueue: [...this.#perQueue],
      deferred: this.#deferrals,
      plansBuilt: this.#planner.built,
      bindGroups: { hits, misses, evictions, size },
      uniformRingBytes: this.#ring.capacity,
      readback: this.#readback.stats,
      upload: this.#uploads.stats,
      pending: this.#scheduler.pendingCount,
      gpuBuffers:
        this.#buffers.size +
        this.#releases.length +
        this.#slabs.live +
        this.#uploads.live +
        this.#readback.live +
        this.#ring.live +
        this.#scratch.live +
        this.#resident.live +
        this.#indirect.live +
        this.#layouts.detours.live,
      bindGroupLayouts: this.#layouts.size,
    };
  }

  /** Traces (startTrace is the kit's): GPU timestamps where possible, else host estimates (gpu-profiler.ts). */
  protected override traceTiming(options: TraceOptions): 'gpu-timestamp' | 'host-estimate' | 'none' {
    if (options.dispatches === false) return 'none';
    return options.gpuTimestamps !== false && this.#profiler.hasTimestamps
      ? 'gpu-timestamp'
      : 'host-estimate';
  }

  /**
   * Fails every pending signal with UNAVAILABLE at once, then waits until nothing Keel started on the
   * GPU is in flight (reads' and staging buffers' `mapAsync`, `onSubmittedWorkDone`, pipeline
   * compilations), then destroys every GPU resource Keel created (buffers, slabs, staging, the uniform
   * ring, resident constants; bind group caches are dropped) and the GPUDevice if Keel requested it.
   * The promise resolves when all of that is done (`Symbol.asyncDispose` awaits it). Idempotent; any
   * later call of another method is FAILED_PRECONDITION.
   */
  destroy(): Promise<void> {
    this.#destroying ??= this.#destroy();
    return this.#destroying;
  }

  async #destroy(): Promise<void> {
    const reason = unavailable(`${this.name}: the device was destroyed`);
    this.markDestroyed(reason);
    this.#runner.gone = true;
    // The allocators stop reacting before pending work fails: their allocas fail with `reason` too.
    this.#pools.destroy(true, reason, () => this.#scheduler.failAll(reason));
    // Dawn crashes or hangs when a buffer with a pending map and its device are destroyed and
    // collected: let every map and completion callback settle first.
    await Promise.all([this.#scheduler.whenSettled(), this.#compiles.settled(), this.#profiler.settled()]);
    this.#profiler.destroy();
    for (const buffer of this.#buffers) {
      buffer.markDestroyed();
      buffer.memory?.buffer.destroy();
    }
    this.#buffers.clear();
    for (const buffer of this.#releases) buffer.memory?.buffer.destroy();
    this.#releases.length = 0;
    this.#ring.destroy();
    this.#uploads.destroy();
    this.#resident.destroy();
    this.#scratch.destroy();
    this.#readback.destroy();
    this.#indirect.destroy();
    this.#layouts.destroy();
    this.gpuDevice.removeEventListener('uncapturederror', this.#onUncapturedError);
    if (this.#owned) this.gpuDevice.destroy();
    this.#resolveLost(this.lossReason ?? reason);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}

/** Reports each distinct uncaptured WebGPU error once on the console. */
function defaultErrorReporter(): (error: GPUError) => void {
  const seen = new Set<string>();
  return (error) => {
    if (seen.has(error.message) || seen.size > 100) return;
    seen.add(error.message);
    console.error(`keel webgpu: uncaptured WebGPU error: ${error.message}`);
  };
}
