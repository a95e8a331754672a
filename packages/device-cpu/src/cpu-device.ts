/**
 * The CPU device (hal Device). See the package README for modes, affinity policy, memory and failure
 * behaviour; in short:
 *
 * - The queue methods and their argument checks are hal's driver kit (`QueueFront`, @keel/hal/driver):
 *   a bad argument throws a KeelError synchronously and enqueues nothing. This file implements the
 *   kit's narrow surface (`record`, `submit`, `submitExecute`, `allocate`, `deallocate`), resources
 *   (buffers, executables, command buffers, semaphores), and loss and destruction; plans are built by
 *   cpu-planner.ts.
 * - Accepted operations go to the run loop (cpu-run-loop.ts): it waits for their wait fence, runs them
 *   (transfers on the main thread; executes inline in sync mode or on the queue's workers in task mode,
 *   task-queue.ts) and completes them (buffers released, signal fence signalled or failed).
 */
import { type AllocatorStats, type Block, PoolRegistry, TlsfPool } from '@keel/allocator';
import { createCommandBuffer } from '@keel/command-buffer';
import {
  describeValue,
  ErrorCode,
  type Fence,
  KeelError,
  type Semaphore,
  SharedTimelineSemaphore,
  TimelineSemaphore,
} from '@keel/fence';
import {
  type Buffer,
  type BufferParams,
  BufferUsage,
  type CommandBuffer,
  type CommandBufferOptions,
  checkOptions,
  createExecutableExports,
  type Device,
  type DeviceInfo,
  type DeviceLimits,
  describeBuffer,
  type Executable,
  type ExecutableSource,
  MemoryType,
  type OptionRules,
  QueueAffinity,
  type TraceOptions,
  type UnhandledFailureHook,
} from '@keel/hal';
import * as driver from '@keel/hal/driver';
import { fillBytes } from './byte-ops';
import { type BufferOwner, CpuBuffer } from './cpu-buffer';
import { bindKernels, CpuExecutable, moduleUrl } from './cpu-executable';
import { CpuPlanner } from './cpu-planner';
import { createProfileRing, ProfileReader } from './cpu-profiler';
import { CpuRunLoop } from './cpu-run-loop';
import { type Operation, OperationState } from './operation';
import { MAX_WORKGROUP_COUNT } from './plan-format';
import { platform } from './platform/current';
import type { ToWorker } from './protocol';
import { SlabTable } from './slab-table';
import { SyncQueue } from './sync-queue';
import { TaskQueue } from './task-queue';

/** How a CPU device runs its queues. */
export type CpuDeviceMode = 'sync' | 'task';

export interface CpuDeviceOptions {
  /** 'task' (default): worker threads per queue; 'sync': everything inline on the calling thread. */
  readonly mode?: CpuDeviceMode;
  /** Number of queues, 1..32 (default 2). */
  readonly queues?: number;
  /** Workers per queue in task mode (default max(1, floor(available cores / queues))). */
  readonly workersPerQueue?: number;
  /** Device name in `info.name` and messages (default 'cpu'). */
  readonly label?: string;
  /** Bytes of each slab the device's TLSF pools grow by (default 4 MiB). */
  readonly slabSize?: number;
  /** Capacity of the 'ring' alloca pool, created on first use (default 64 MiB). */
  readonly ringCapacity?: number;
  /**
   * Hears about an operation's failure that no signal timepoint could deliver (an empty signal fence,
   * values something else already passed, semaphores already failed). Default: one console warning per
   * device. Failures propagated from a failed wait (ABORTED) and those of destroy/loss are not reported.
   */
  readonly onUnhandledFailure?: UnhandledFailureHook;
}

const MAX_BUFFER_SIZE = 1 << 30;
const LIMITS: DeviceLimits = Object.freeze({
  maxBufferSize: MAX_BUFFER_SIZE,
  maxWorkgroupCount: Object.freeze([
    MAX_WORKGROUP_COUNT,
    MAX_WORKGROUP_COUNT,
    MAX_WORKGROUP_COUNT,
  ]) as readonly [number, number, number],
  maxBindings: 64,
  maxConstants: 256,
  minStorageBufferOffsetAlignment: 16,
  maxUpdateSize: 65536,
});
const BLOCK_ALIGNMENT = 16;
const NO_COMMAND_BUFFERS: readonly CommandBuffer[] = Object.freeze([]);

const BYTES_OPTION = { type: 'integer', min: 4096, max: MAX_BUFFER_SIZE } as const;
/** The options `createCpuDevice` takes (unknown keys, wrong types and ranges are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  mode: { type: 'string', oneOf: ['sync', 'task'] },
  queues: { type: 'integer', min: 1, max: 32 },
  workersPerQueue: { type: 'integer', min: 1, max: 256 },
  label: { type: 'string' },
  slabSize: BYTES_OPTION,
  ringCapacity: BYTES_OPTION,
  onUnhandledFailure: { type: 'function' },
};

// The front's record type is the kit's QueueRecord (the device's records are Operations): the
// published types then name no internal class of this package.
export class CpuDevice extends driver.QueueFront<CpuBuffer, driver.QueueRecord<CpuBuffer>> implements Device {
  // Fields assigned by the constructor are `declare`d: the bundle then names each field once. State
  // is in TypeScript-private properties, not `#private` fields: methods must also work when called
  // through a Proxy of this object (test/proxy.test.ts).
  declare readonly info: DeviceInfo;
  declare readonly lost: Promise<KeelError>;
  declare readonly mode: CpuDeviceMode;
  declare readonly workersPerQueue: number;
  private resolveLost!: (reason: KeelError) => void;
  private destroying: Promise<void> | undefined;

  private readonly slabs: SlabTable;
  private readonly tlsf: TlsfPool<ArrayBufferLike>;
  private readonly pools: PoolRegistry<ArrayBufferLike>;
  /**
   * Device buffers not destroyed (marked destroyed with the device). Queue-allocated buffers are not
   * kept: a failed alloca's buffer must be collectable once the caller drops it (cpu-buffer.ts).
   */
  private readonly buffers = new Set<CpuBuffer>();
  private readonly executables: CpuExecutable[] = [];
  /** Builds and frees the device's plans (cpu-planner.ts). */
  private readonly planner: CpuPlanner;

  /** Runs operations once their waits are reached, and completes them (cpu-run-loop.ts). */
  private readonly loop: CpuRunLoop;
  /** @internal The loop's task queues (test/release.test.ts reads them). */
  declare readonly tasks: TaskQueue[];
  private readonly owner: BufferOwner = {
    releaseBlock: (block: Block<ArrayBufferLike>) => {
      if (!this.destroyed) this.tlsf.release(block);
    },
    forget: (buffer: CpuBuffer) => {
      this.buffers.delete(buffer);
    },
    destroyed: () => this.destroyed,
  };

  constructor(rawOptions?: CpuDeviceOptions) {
    const options = checkOptions<CpuDeviceOptions>('createCpuDevice', rawOptions, OPTION_RULES);
    super(`device '${options.label ?? 'cpu'}'`, CpuBuffer);
    const mode = options.mode ?? platform.defaultMode();
    const task = mode === 'task';
    const unavailable = task ? platform.taskModeUnavailable() : undefined;
    if (unavailable) throw new KeelError(ErrorCode.UNAVAILABLE, `createCpuDevice: ${unavailable}`);
    this.mode = mode;
    const queueCount = options.queues ?? 2;
    const cores = platform.availableParallelism();
    const workers = task ? (options.workersPerQueue ?? Math.max(1, Math.floor(cores / queueCount))) : 0;
    this.workersPerQueue = workers;
    const slabSize = options.slabSize ?? 4 * 1024 * 1024;
    const label = options.label ?? 'cpu';
    this.info = Object.freeze({
      backend: 'cpu',
      name: task
        ? `${label} (task, ${queueCount}×${workers} workers)`
        : `${label} (sync, ${queueCount} queues)`,
      queueCount,
      limits: LIMITS,
      features: Object.freeze([`mode:${mode}`, ...(task ? ['shared-memory'] : []), 'host-mapping']),
    });
    this.lost = new Promise<KeelError>((resolve) => {
      this.resolveLost = resolve;
    });
    const slabs = new SlabTable(task);
    const name = this.info.name;
    const loop = new CpuRunLoop({
      name,
      device: this,
      slabs,
      report: driver.unhandledFailureReporter(options.onUnhandledFailure, this.deviceName),
      lose: (reason) => this.lose(reason),
    });
    this.slabs = slabs;
    this.loop = loop;
    this.tasks = loop.tasks;
    this.planner = new CpuPlanner(this, this.names.queueExecute, loop, task);
    this.tlsf = new TlsfPool(slabs, {
      label: `${label} buffers`,
      slabSize,
      alignment: BLOCK_ALIGNMENT,
    });
    this.pools = new PoolRegistry(slabs, {
      poolLabel: 'alloca',
      deviceLabel: name,
      backend: 'cpu',
      alignment: BLOCK_ALIGNMENT,
      slabSize,
      ringCapacity: options.ringCapacity ?? 64 * 1024 * 1024,
    });
    if (task) {
      for (let q = 0; q < queueCount; q++) {
        loop.tasks.push(new TaskQueue(q, workers, loop));
      }
      slabs.setListener({
        slabCreated: (index, memory) => this.send({ t: 'slab', index, memory: memory as SharedArrayBuffer }),
        slabDestroyed: (index) => this.send({ t: 'slab-free', index }),
      });
    } else {
      for (let q = 0; q < queueCount; q++) {
        loop.syncQueues.push(
          new SyncQueue(
            slabs.memories,
            (executable, entry) => this.executables[executable]?.kernels?.[entry],
            (op: Operation, error: unknown) => loop.complete(op, error),
          ),
        );
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Resources

  createBuffer(params: BufferParams & { readonly byteLength: number }): Buffer {
    const usage = this.checkCreateBuffer(params);
    const byteLength = params.byteLength;
    const block = this.tlsf.reserve(byteLength, BLOCK_ALIGNMENT);
    if (!block) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${this.names.createBuffer}: no memory for ${byteLength} bytes`,
      );
    }
    fillBytes(block.slab.memory, block.offset, byteLength, 0, 1);
    const buffer = new CpuBuffer(
      this,
      this.owner,
      params,
      byteLength,
      usage,
      QueueAffinity.ANY,
      undefined,
      block,
      undefined,
    );
    this.buffers.add(buffer);
    return buffer;
  }

  /**
   * Host mapping (feature 'host-mapping'): CPU buffers are host memory, so a HOST_VISIBLE buffer with
   * MAPPING usage is viewed in place, without a copy. See hal's Device.mapHostView for the contract.
   */
  mapHostView(buffer: Buffer): Uint8Array {
    const what = this.names.mapHostView;
    this.checkUsable('mapHostView');
    if (!(buffer instanceof CpuBuffer) || buffer.device !== this) {
      throw driver.invalid(`${what}: the buffer does not belong to this device`);
    }
    if (!(buffer.memoryType & MemoryType.HOST_VISIBLE) || !(buffer.usage & BufferUsage.MAPPING)) {
      throw driver.invalid(
        `${what}: ${describeBuffer(buffer)} needs HOST_VISIBLE memory and MAPPING usage to be mapped`,
      );
    }
    if (buffer.state !== 'live') {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${describeBuffer(buffer)} is ${buffer.state}`,
      );
    }
    const block = buffer.resolve(what);
    return new Uint8Array(block.slab.memory, block.offset, buffer.byteLength);
  }

  async createExecutable(source: ExecutableSource): Promise<Executable> {
    const what = this.names.createExecutable;
    this.checkUsable('createExecutable');
    if (source === null || typeof source !== 'object')
      throw driver.invalid(`${what}: source must be an object`);
    if (source.format !== 'js-module') {
      throw new KeelError(
        ErrorCode.UNIMPLEMENTED,
        `${what}: format '${describeValue((source as { format?: unknown }).format)}' is not supported; the cpu device takes 'js-module'`,
      );
    }
    const url = moduleUrl(source.url, what);
    const cannotImport = (message: string, cause: unknown) =>
      driver.invalid(`${what}: cannot import ${url}: ${message}`, cause);
    const label = source.label ?? url.slice(url.lastIndexOf('/') + 1);
    const exports = createExecutableExports(source.exports, `'${label}'`, this.info.limits);
    // The id is taken now: concurrent createExecutable calls must not share one.
    const id = this.executables.length;
    const executable = new CpuExecutable(this, id, url, exports, label);
    this.executables[id] = executable;
    if (this.mode === 'sync') {
      let namespace: Record<string, unknown>;
      try {
        namespace = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
      } catch (error) {
        throw cannotImport(error instanceof Error ? error.message : describeValue(error), error);
      }
      executable.kernels = bindKernels(namespace, source.exports, exports, label, url);
      this.checkUsable('createExecutable');
      return executable;
    }
    try {
      await Promise.all(this.tasks.map((queue) => queue.load(executable)));
    } catch (error) {
      this.send({ t: 'unload', id });
      if (KeelError.is(error) && error.code === ErrorCode.INTERNAL) {
        throw cannotImport(error.message, error);
      }
      throw error;
    }
    return executable;
  }

  createCommandBuffer(options?: CommandBufferOptions): CommandBuffer {
    this.checkUsable('createCommandBuffer');
    return createCommandBuffer(this, options);
  }

  createSemaphore(initialValue = 0): Semaphore {
    const Semaphore = this.mode === 'task' ? SharedTimelineSemaphore : TimelineSemaphore;
    return new Semaphore(initialValue, { label: `${this.info.name} semaphore` });
  }

  /** Posts `message` to every worker of every queue (task mode). */
  private send(message: ToWorker): void {
    for (const queue of this.tasks) queue.send(message);
  }

  // ---------------------------------------------------------------------------------------------------
  // Queue-ordered allocation

  protected allocate(queue: number, wait: Fence, signal: Fence, request: driver.AllocaRequest): Buffer {
    const { params, size, pool } = request;
    const affinity = QueueAffinity.of(queue);
    const allocator = this.pools.allocator(pool, this.names.queueAlloca);
    const allocation = allocator.alloca(affinity, wait, signal, size, {
      alignment: BLOCK_ALIGNMENT,
      label: params.label,
    });
    const buffer = new CpuBuffer(
      this,
      this.owner,
      params,
      size,
      request.usage,
      affinity,
      pool,
      undefined,
      allocation,
    );
    return buffer;
  }

  protected deallocate(queue: number, wait: Fence, signal: Fence, buffer: CpuBuffer): void {
    this.pools.dealloca(queue, wait, signal, buffer, buffer.allocation, this.names.queueDealloca);
    buffer.markDeallocated();
  }

  /** Worker threads of this device still running (0 in sync mode, and after `destroy()` resolved). */
  get liveWorkers(): number {
    return this.tasks.reduce((count, queue) => count + queue.live, 0);
  }

  /**
   * Bytes of queue-allocated memory not available for reuse right now: live allocations, deallocated
   * blocks whose death frontier is pending, and blocks kept back after a failed dealloca.
   */
  heldQueueBytes(): number {
    return this.pools.heldBytes();
  }

  /** Snapshots of the queue allocators' statistics, by pool name. */
  allocatorStats(): Map<string, AllocatorStats> {
    return this.pools.stats();
  }

  // ---------------------------------------------------------------------------------------------------
  // Operations

  /** A pooled Operation (the run loop's RecordPool), named for `kind` and waiting. */
  protected record(
    kind: driver.OpKind,
    queue: number,
    wait: Fence,
    signal: Fence,
  ): driver.QueueRecord<CpuBuffer> {
    const op = this.loop.records.acquire(kind, queue, wait, signal);
    op.begin(this.names[driver.OP_NAMES[kind] as driver.FrontMethod]);
    return op;
  }

  /**
   * Retains the buffers a transfer uses (released at completion), then waits for its wait fence. An
   * update that did not run inside this call keeps a copy of its bytes (the caller may change them
   * once the call returned); one that ran needed none.
   */
  protected submit(record: driver.QueueRecord<CpuBuffer>): void {
    const op = record as Operation;
    const source = op.source;
    const target = op.target;
    if (source) op.retainBuffer(source);
    if (target) op.retainBuffer(target);
    const generation = op.generation;
    this.loop.enqueue(op);
    if (
      op.kind === driver.OpKind.UPDATE &&
      op.generation === generation &&
      op.state < OperationState.RUNNING
    ) {
      op.bytes = op.bytes!.slice();
    }
  }

  /**
   * Plans each command buffer (built on its first submission), snapshots the binding entries each
   * plan uses into the operation (O(slots used), whatever the slot numbers; the caller may reuse the
   * arrays and their entries), retains the buffers they and the plans name, then waits for the wait
   * fence. Allocation-free once the record and its plans are warm.
   */
  protected submitExecute(record: driver.QueueRecord<CpuBuffer>): void {
    const op = record as Operation;
    const commandBuffers = op.commandBuffers;
    const bindingTables = op.tables;
    const count = commandBuffers.length;
    const plans = op.plans;
    for (let i = 0; i < count; i++)
      plans[i] = commandBuffers[i]!.devicePlan(this.planner.key, this.planner.build);
    op.planCount = count;
    for (let i = 0; i < count; i++) commandBuffers[i]!.markSubmitted();
    op.tables = undefined;
    if (count === 0) {
      // Nothing to execute: a barrier (untraced, as an execute of nothing always was).
      op.kind = driver.OpKind.BARRIER;
      op.name = this.names.queueBarrier;
      op.commandBuffers = NO_COMMAND_BUFFERS;
      op.trace = undefined;
      this.submit(op);
      return;
    }
    for (let i = 0; i < count; i++) {
      const plan = plans[i]!;
      const table = bindingTables?.[i];
      const slots = plan.slots;
      for (let k = 0; k < slots.length; k++) {
        const buffer = op.addEntry(table ? table[slots[k]!] : undefined);
        if (buffer instanceof CpuBuffer) op.retainBuffer(buffer);
      }
      const direct = plan.direct;
      for (let d = 0; d < direct.length; d++) op.retainBuffer(direct[d]!);
    }
    op.keepCommandBuffers(commandBuffers);
    this.loop.enqueue(op);
  }

  // ---------------------------------------------------------------------------------------------------
  // Traces (hal Trace; startTrace is the driver kit's)

  protected override traceTiming(options: TraceOptions): 'cpu-wall' | 'none' {
    return options.dispatches === false ? 'none' : 'cpu-wall';
  }

  /**
   * Has each queue's executors write a profile ring (made at the first trace that wants dispatch
   * times) while a trace wants dispatch times, and until the executes it recorded have completed.
   */
  protected override traceChanged(recorder: driver.TraceRecorder, recording: boolean): void {
    if (!recorder.dispatches) return;
    const task = this.mode === 'task';
    this.loop.profiling = recording;
    for (let q = 0; q < this.info.queueCount; q++) {
      if (!recording) {
        this.loop.pauseProfile(q);
        continue;
      }
      let reader = this.loop.profiles[q];
      if (!reader) {
        const executors = task ? this.workersPerQueue : 1;
        const queue = (task ? this.tasks : this.loop.syncQueues)[q];
        reader = new ProfileReader(createProfileRing(executors, task), executors, (ring) =>
          queue?.setProfile(ring),
        );
        this.loop.profiles[q] = reader;
      }
      reader.resume();
    }
    this.loop.namer ??= (executable, entry) => {
      const e = this.executables[executable];
      return {
        name: e?.exports[entry]?.name ?? `entry ${entry}`,
        executable: e?.label ?? `#${executable}`,
      };
    };
  }

  // ---------------------------------------------------------------------------------------------------
  // Loss and destruction

  /** A worker died. The device is lost: pending work fails UNAVAILABLE, workers end. */
  private lose(reason: KeelError): void {
    if (this.lossReason || this.destroyed) return;
    this.lossReason = reason;
    // Pending work fails with the loss, and so do pending and queued allocas and deallocas (statistics
    // stay readable): the allocators stop reacting first, so none of them fails for that work's failure.
    this.pools.destroy(false, reason, () => this.loop.failPending(reason));
    for (const queue of this.tasks) void queue.terminate(reason);
    this.resolveLost(reason);
  }

  destroy(): Promise<void> {
    this.destroying ??= this.doDestroy();
    return this.destroying;
  }

  private async doDestroy(): Promise<void> {
    const reason = new KeelError(ErrorCode.UNAVAILABLE, `${this.deviceName}: the device was destroyed`);
    this.markDestroyed(reason);
    // The allocators stop reacting before pending work fails: their allocas fail with `reason` too.
    this.pools.destroy(true, reason, () => this.loop.failPending(reason));
    for (const buffer of this.buffers) buffer.markDeviceDestroyed();
    this.buffers.clear();
    this.tlsf.destroy();
    this.slabs.setListener(undefined);
    await Promise.all(this.tasks.map((queue) => queue.terminate(reason)));
    this.resolveLost(this.lossReason ?? reason);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}
