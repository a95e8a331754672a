/**
 * The CPU device (hal Device). See the package README for modes, affinity policy, memory and failure
 * behaviour; in short:
 *
 * - Every queue operation checks its arguments synchronously (KeelError, nothing enqueued), then waits
 *   for its wait fence with the promise-free `onReached`. Ready operations go through one run list
 *   (a trampoline), so chains of operations completed inside one `signal` never recurse deeply.
 * - Transfers, barriers and host calls run on the main thread in both modes. Executes run inline
 *   (sync mode) or on the selected queue's workers (task mode).
 * - Completion releases the buffers the operation retained, then signals its signal fence (timepoints
 *   already reached are skipped) or fails it with the operation's error.
 */
import { availableParallelism } from 'node:os';
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
  type BindingTable,
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
  type UnhandledFailureHook,
} from '@keel/hal';
import {
  type AllocaRequest,
  abortedBy,
  checkBufferByteLength,
  checkBufferParams,
  completeSignal,
  type FrontMethod,
  invalid,
  madeByCreateBuffer,
  OP_NAMES,
  OpKind,
  QueueFront,
  RunList,
  unhandledFailureReporter,
} from '@keel/hal/driver';
import { copyBytes, fillBytes } from './byte-ops';
import { type BufferOwner, CpuBuffer } from './cpu-buffer';
import { bindKernels, CpuExecutable, moduleUrl } from './cpu-executable';
import { CpuPlan, resolvedLength, resolveTableInto } from './cpu-plan';
import { type LoadedKernel, PlanRuntime } from './executor';
import { Operation } from './operation';
import { buildPlan } from './plan-builder';
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

const MAX_BUFFER_SIZE = 2 ** 30;
const MAX_WORKGROUP_COUNT = 65535;
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

/** Reports what a semaphore threw while the device completed a fence (one warning per device). */
function warnSemaphoreThrew(device: CpuDevice, thrown: unknown): void {
  if (device.warnedSemaphore) return;
  device.warnedSemaphore = true;
  globalThis.console?.warn(`${device.info.name}: a semaphore threw while an operation completed:`, thrown);
}

/** The options `createCpuDevice` takes (unknown keys, wrong types and ranges are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  mode: { type: 'string', oneOf: ['sync', 'task'] },
  queues: { type: 'integer', min: 1, max: 32 },
  workersPerQueue: { type: 'integer', min: 1, max: 256 },
  label: { type: 'string' },
  slabSize: { type: 'integer', min: 4096, max: MAX_BUFFER_SIZE },
  ringCapacity: { type: 'integer', min: 4096, max: MAX_BUFFER_SIZE },
  onUnhandledFailure: { type: 'function' },
};

// OperationSink and TaskQueueHost (internal interfaces) are met structurally, not declared: their
// members are internal and left out of the published types.
export class CpuDevice extends QueueFront<CpuBuffer, Operation> implements Device {
  readonly info: DeviceInfo;
  readonly lost: Promise<KeelError>;
  readonly mode: CpuDeviceMode;
  readonly workersPerQueue: number;
  /** @internal Set once a semaphore threw while an operation completed (warned once). */
  warnedSemaphore = false;
  private resolveLost!: (reason: KeelError) => void;
  private destroyPromise: Promise<void> | undefined;
  private readonly reportUnhandled: (error: unknown, operation: string) => void;

  private readonly slabs: SlabTable;
  private readonly bufferPool: TlsfPool<ArrayBufferLike>;
  private readonly pools: PoolRegistry<ArrayBufferLike>;
  private readonly liveBuffers = new Set<CpuBuffer>();
  private readonly executables: CpuExecutable[] = [];
  private nextPlanId = 0;
  private readonly planKey = {};
  private readonly planRegistry: FinalizationRegistry<CpuPlan> | undefined;

  private readonly taskQueues: TaskQueue[] = [];
  private readonly syncQueues: SyncQueue<Operation>[] = [];
  private readonly pending = new Set<Operation>();
  /** Operations whose waits were reached, run in order by one trampoline (hal/driver RunList). */
  private readonly ready = new RunList<Operation>((op) => this.runReady(op));
  private readonly bufferOwner: BufferOwner = {
    releaseBlock: (block: Block<ArrayBufferLike>) => {
      if (!this.destroyed) this.bufferPool.release(block);
    },
    forget: (buffer: CpuBuffer) => {
      this.liveBuffers.delete(buffer);
    },
  };
  private readonly executableId = (executable: Executable): number => {
    if (!(executable instanceof CpuExecutable) || executable.device !== this) {
      throw invalid(`${this.names.queueExecute}: a dispatch names an executable of another device`);
    }
    return executable.id;
  };
  private readonly syncDone = (op: Operation, failure: { error: unknown } | undefined): void => {
    if (failure === undefined) this.complete(op);
    else this.complete(op, failure.error);
  };
  private readonly syncKernel = (executable: number, entry: number): LoadedKernel | undefined =>
    this.executables[executable]?.kernels?.[entry];

  constructor(rawOptions?: CpuDeviceOptions) {
    const options = checkOptions<CpuDeviceOptions>('createCpuDevice', rawOptions, OPTION_RULES);
    super(`device '${options.label ?? 'cpu'}'`, CpuBuffer);
    const mode = options.mode ?? 'task';
    this.mode = mode;
    const queueCount = options.queues ?? 2;
    const cores = availableParallelism();
    this.workersPerQueue =
      mode === 'sync' ? 0 : (options.workersPerQueue ?? Math.max(1, Math.floor(cores / queueCount)));
    const slabSize = options.slabSize ?? 4 * 1024 * 1024;
    const label = options.label ?? 'cpu';
    this.reportUnhandled = unhandledFailureReporter(options.onUnhandledFailure, this.deviceName);
    this.info = Object.freeze({
      backend: 'cpu',
      name:
        mode === 'sync'
          ? `${label} (sync, ${queueCount} queues)`
          : `${label} (task, ${queueCount}×${this.workersPerQueue} workers)`,
      queueCount,
      limits: LIMITS,
      features: Object.freeze(
        mode === 'sync' ? ['mode:sync', 'host-mapping'] : ['mode:task', 'shared-memory', 'host-mapping'],
      ),
    });
    this.lost = new Promise<KeelError>((resolve) => {
      this.resolveLost = resolve;
    });
    this.slabs = new SlabTable(mode === 'task');
    this.bufferPool = new TlsfPool(this.slabs, {
      label: `${label} buffers`,
      slabSize,
      alignment: BLOCK_ALIGNMENT,
    });
    this.pools = new PoolRegistry(this.slabs, {
      poolLabel: 'alloca',
      deviceLabel: this.info.name,
      backend: 'cpu',
      alignment: BLOCK_ALIGNMENT,
      slabSize,
      ringCapacity: options.ringCapacity ?? 64 * 1024 * 1024,
    });
    if (mode === 'task') {
      const workerUrl = new URL('./worker.js', import.meta.url);
      for (let q = 0; q < queueCount; q++) {
        this.taskQueues.push(
          new TaskQueue(q, this.workersPerQueue, workerUrl, this, MAX_WORKGROUP_COUNT, []),
        );
      }
      this.slabs.setListener({
        slabCreated: (index, memory) => {
          for (const queue of this.taskQueues) {
            queue.broadcast({ t: 'slab', index, memory: memory as SharedArrayBuffer });
          }
        },
        slabDestroyed: (index) => {
          for (const queue of this.taskQueues) queue.broadcast({ t: 'slab-free', index });
        },
      });
      this.planRegistry = new FinalizationRegistry((plan: CpuPlan) => this.freePlan(plan));
    } else {
      for (let q = 0; q < queueCount; q++) {
        this.syncQueues.push(
          new SyncQueue(this.slabs.memories, this.syncKernel, MAX_WORKGROUP_COUNT, this.syncDone),
        );
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Resources

  createBuffer(params: BufferParams & { readonly byteLength: number }): Buffer {
    const what = this.names.createBuffer;
    this.checkUsable('createBuffer');
    if (params === null || typeof params !== 'object') throw invalid(`${what}: params must be an object`);
    const byteLength = checkBufferByteLength(params.byteLength, MAX_BUFFER_SIZE, what);
    const usage = checkBufferParams(params, what);
    const block = this.bufferPool.reserve(byteLength, BLOCK_ALIGNMENT);
    if (block === undefined) {
      throw new KeelError(ErrorCode.RESOURCE_EXHAUSTED, `${what}: no memory for ${byteLength} bytes`);
    }
    fillBytes(block.slab.memory, block.offset, byteLength, 0, 1);
    const buffer = new CpuBuffer(
      this,
      this.bufferOwner,
      byteLength,
      usage,
      params.memoryType ?? MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT,
      { affinity: (params.affinity ?? QueueAffinity.ANY) >>> 0, pool: undefined, queueAllocated: false },
      params.label,
      block,
      undefined,
    );
    this.liveBuffers.add(buffer);
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
      throw invalid(`${what}: the buffer does not belong to this device`);
    }
    if ((buffer.memoryType & MemoryType.HOST_VISIBLE) === 0 || (buffer.usage & BufferUsage.MAPPING) === 0) {
      throw invalid(
        `${what}: ${describeBuffer(buffer)} needs HOST_VISIBLE memory and MAPPING usage to be mapped`,
      );
    }
    if (buffer.state !== 'live') {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${describeBuffer(buffer)} is ${buffer.state}`,
      );
    }
    const { memory, offset } = buffer.resolve(what);
    return new Uint8Array(memory, offset, buffer.byteLength);
  }

  async createExecutable(source: ExecutableSource): Promise<Executable> {
    const what = this.names.createExecutable;
    this.checkUsable('createExecutable');
    if (source === null || typeof source !== 'object') throw invalid(`${what}: source must be an object`);
    if (source.format !== 'js-module') {
      throw new KeelError(
        ErrorCode.UNIMPLEMENTED,
        `${what}: format '${describeValue((source as { format?: unknown }).format)}' is not supported; the cpu device takes 'js-module'`,
      );
    }
    const url = moduleUrl(source.url, what);
    const label = source.label ?? url.slice(url.lastIndexOf('/') + 1);
    const exports = createExecutableExports(source.exports, `'${label}'`);
    // The id is taken now: concurrent createExecutable calls must not share one.
    const id = this.executables.length;
    const executable = new CpuExecutable(this, id, url, exports, label);
    this.executables[id] = executable;
    if (this.mode === 'sync') {
      let namespace: Record<string, unknown>;
      try {
        namespace = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
      } catch (error) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: cannot import ${url}: ${error instanceof Error ? error.message : describeValue(error)}`,
          { cause: error },
        );
      }
      executable.kernels = bindKernels(namespace, source.exports, exports, label, url);
      this.checkUsable('createExecutable');
      return executable;
    }
    try {
      await Promise.all(this.taskQueues.map((queue) => queue.load(executable)));
    } catch (error) {
      for (const queue of this.taskQueues) queue.broadcast({ t: 'unload', id });
      if (KeelError.is(error) && error.code === ErrorCode.INTERNAL) {
        throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: cannot import ${url}: ${error.message}`, {
          cause: error,
        });
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
    return this.mode === 'task'
      ? new SharedTimelineSemaphore(initialValue, { label: `${this.info.name} semaphore` })
      : new TimelineSemaphore(initialValue, { label: `${this.info.name} semaphore` });
  }

  // ---------------------------------------------------------------------------------------------------
  // Queue-ordered allocation

  protected allocate(queue: number, wait: Fence, signal: Fence, request: AllocaRequest): Buffer {
    const { params, size, pool } = request;
    const allocator = this.pools.allocator(pool, this.names.queueAlloca);
    const allocation = allocator.alloca(QueueAffinity.of(queue), wait, signal, size, {
      alignment: BLOCK_ALIGNMENT,
      label: params.label,
    });
    const buffer = new CpuBuffer(
      this,
      this.bufferOwner,
      size,
      request.usage,
      params.memoryType ?? MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT,
      { affinity: (params.affinity ?? QueueAffinity.of(queue)) >>> 0, pool, queueAllocated: true },
      params.label,
      undefined,
      allocation,
    );
    this.liveBuffers.add(buffer);
    return buffer;
  }

  protected deallocate(queue: number, wait: Fence, signal: Fence, buffer: CpuBuffer): void {
    const what = this.names.queueDealloca;
    const allocation = buffer.allocation;
    if (allocation === undefined) throw madeByCreateBuffer(buffer, what);
    const allocator = this.pools.ownerOf(allocation, what);
    allocator.dealloca(QueueAffinity.of(queue), wait, signal, allocation);
    buffer.markDeallocated();
    this.liveBuffers.delete(buffer);
  }

  /** Worker threads of this device still running (0 in sync mode, and after `destroy()` resolved). */
  get liveWorkers(): number {
    let count = 0;
    for (const queue of this.taskQueues) count += queue.liveWorkers;
    return count;
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

  private enqueue(op: Operation, wait: Fence): void {
    this.pending.add(op);
    const registration = wait.onReached(op.onReady);
    if (op.state === 'waiting') op.registration = registration;
  }

  /** @internal OperationSink: the wait of `op` was reached (or failed). */
  operationReady(op: Operation, error: KeelError | undefined): void {
    if (op.state !== 'waiting') return;
    op.registration = undefined;
    if (error !== undefined) {
      this.complete(op, abortedBy(error, op.name));
      return;
    }
    op.state = 'ready';
    this.ready.push(op);
  }

  private runReady(op: Operation): void {
    if (op.state !== 'ready') return;
    op.state = 'running';
    try {
      this.run(op);
    } catch (error) {
      this.complete(op, error);
    }
  }

  private run(op: Operation): void {
    switch (op.kind) {
      case OpKind.FILL: {
        const target = op.target!.resolve(op.name);
        fillBytes(target.memory, target.offset + op.targetOffset, op.length, op.pattern, op.patternLength);
        this.complete(op);
        return;
      }
      case OpKind.UPDATE:
      case OpKind.WRITE: {
        const target = op.target!.resolve(op.name);
        const host = op.bytes!;
        new Uint8Array(target.memory, target.offset + op.targetOffset, op.length).set(host);
        this.complete(op);
        return;
      }
      case OpKind.COPY: {
        const source = op.source!.resolve(op.name);
        const target = op.target!.resolve(op.name);
        copyBytes(
          source.memory,
          source.offset + op.sourceOffset,
          target.memory,
          target.offset + op.targetOffset,
          op.length,
        );
        this.complete(op);
        return;
      }
      case OpKind.READ: {
        const source = op.source!.resolve(op.name);
        op.bytes!.set(new Uint8Array(source.memory, source.offset + op.sourceOffset, op.length));
        this.complete(op);
        return;
      }
      case OpKind.BARRIER:
        this.complete(op);
        return;
      case OpKind.HOST_CALL:
        this.runHostCall(op);
        return;
      case OpKind.EXECUTE:
        if (this.mode === 'task') {
          this.taskQueues[op.queue]!.execute(op);
        } else {
          this.runSync(op);
        }
        return;
    }
  }

  private runHostCall(op: Operation): void {
    const callback = op.callback!;
    op.callback = undefined;
    let result: void | Promise<void>;
    try {
      result = callback();
    } catch (error) {
      this.complete(op, error);
      return;
    }
    if (
      result !== null &&
      typeof result === 'object' &&
      typeof (result as Promise<void>).then === 'function'
    ) {
      (result as Promise<void>).then(
        () => this.complete(op),
        (error: unknown) =>
          this.complete(op, error ?? new KeelError(ErrorCode.INTERNAL, `${op.name}: rejected`)),
      );
      return;
    }
    this.complete(op);
  }

  private runSync(op: Operation): void {
    const tables = this.resolveTables(op);
    const runtimes: PlanRuntime[] = [];
    for (const plan of op.plans!) {
      plan.runtime ??= new PlanRuntime(plan.arrays);
      runtimes.push(plan.runtime);
    }
    this.syncQueues[op.queue]!.run(runtimes, tables, op);
  }

  /** Resolves the binding tables of an execute operation about to run (sync mode: one array each). */
  private resolveTables(op: Operation): Float64Array[] {
    const plans = op.plans!;
    const tables = op.tables!;
    const out: Float64Array[] = [];
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i]!;
      const resolved = new Float64Array(resolvedLength(plan));
      resolveTableInto(resolved, 0, plan, tables[i], this.slabs, this, op.name);
      out.push(resolved);
    }
    return out;
  }

  /**
   * TaskQueueHost: the execute message of an operation about to be posted, in one Float64Array:
   * [seq, plan count, then per plan (id, table words), then the tables back to back]. Throws the
   * reason the operation cannot run.
   * @internal
   */
  encodeExecute(op: Operation, seq: number): Float64Array {
    const plans = op.plans!;
    const tables = op.tables!;
    const count = plans.length;
    let size = 2 + 2 * count;
    for (let i = 0; i < count; i++) size += resolvedLength(plans[i]!);
    const out = new Float64Array(size);
    out[0] = seq;
    out[1] = count;
    let at = 2 + 2 * count;
    for (let i = 0; i < count; i++) {
      const plan = plans[i]!;
      const length = resolvedLength(plan);
      out[2 + 2 * i] = plan.id;
      out[3 + 2 * i] = length;
      resolveTableInto(out, at, plan, tables[i], this.slabs, this, op.name);
      at += length;
    }
    return out;
  }

  /** @internal TaskQueueHost / internal: completes `op` once. */
  complete(op: Operation, error?: unknown): void {
    if (op.state === 'done') return;
    op.state = 'done';
    this.pending.delete(op);
    op.registration?.cancel();
    op.registration = undefined;
    const buffers = op.buffers;
    if (buffers !== undefined) {
      op.buffers = undefined;
      for (let i = 0; i < buffers.length; i++) buffers[i]!.unretain();
    }
    op.plans = undefined;
    const signal = op.signal;
    op.resetRecord();
    const gone = this.destroyed || this.lostReason !== undefined;
    const thrown = completeSignal(signal, error, op.name, gone ? undefined : this.reportUnhandled);
    if (thrown !== undefined) warnSemaphoreThrew(this, thrown);
  }

  protected record(kind: OpKind, queue: number, wait: Fence, signal: Fence): Operation {
    const op = new Operation(kind, this.names[OP_NAMES[kind] as FrontMethod], queue, this);
    op.wait = wait;
    op.signal = signal;
    return op;
  }

  /** Retains the buffers a transfer uses (released at completion), then waits for its wait fence. */
  protected submit(op: Operation): void {
    if (op.kind === OpKind.UPDATE) op.bytes = op.bytes!.slice();
    const source = op.source;
    const target = op.target;
    if (source !== undefined || target !== undefined) {
      const buffers: CpuBuffer[] = [];
      if (source !== undefined) buffers.push(source);
      if (target !== undefined) buffers.push(target);
      for (const buffer of buffers) buffer.retain();
      op.buffers = buffers;
    }
    this.enqueue(op, op.wait);
  }

  protected submitExecute(op: Operation): void {
    const commandBuffers = op.commandBuffers;
    const bindingTables = op.tables;
    const count = commandBuffers.length;
    const plans: CpuPlan[] = [];
    for (let i = 0; i < count; i++) plans.push(commandBuffers[i]!.devicePlan(this.planKey, this.buildPlan));
    for (let i = 0; i < count; i++) commandBuffers[i]!.markSubmitted();
    if (count === 0) {
      this.submit(this.record(OpKind.BARRIER, op.queue, op.wait, op.signal));
      return;
    }
    // Snapshot the tables (the caller may reuse the arrays) and retain what the operation uses.
    const tables: (BindingTable | undefined)[] = [];
    const retained: CpuBuffer[] = [];
    for (let i = 0; i < count; i++) {
      const plan = plans[i]!;
      const table = bindingTables?.[i] ?? undefined;
      const slotCount = plan.arrays.slotCount;
      if (table !== undefined && slotCount > 0) {
        const copy = table.slice(0, slotCount);
        tables.push(copy);
        for (let s = 0; s < copy.length; s++) {
          const buffer = copy[s]?.buffer;
          if (buffer instanceof CpuBuffer) {
            buffer.retain();
            retained.push(buffer);
          }
        }
      } else {
        tables.push(undefined);
      }
      const direct = plan.directBuffers;
      for (let d = 0; d < direct.length; d++) {
        direct[d]!.retain();
        retained.push(direct[d]!);
      }
    }
    op.commandBuffers = commandBuffers.slice();
    op.plans = plans;
    op.tables = tables;
    op.buffers = retained;
    this.enqueue(op, op.wait);
  }

  private readonly buildPlan = (commandBuffer: CommandBuffer): CpuPlan => {
    const built = buildPlan(commandBuffer, this.executableId, MAX_WORKGROUP_COUNT, (n) =>
      this.mode === 'task' ? new SharedArrayBuffer(n) : new ArrayBuffer(n),
    );
    const direct: CpuBuffer[] = [];
    for (const buffer of built.directBuffers) {
      if (!(buffer instanceof CpuBuffer) || buffer.device !== this) {
        throw invalid(`${this.names.queueExecute}: a command references a buffer of another device`);
      }
      direct.push(buffer);
    }
    const plan = new CpuPlan(
      this.nextPlanId++,
      built.arrays,
      direct,
      commandBuffer.mode === 'one-shot',
      commandBuffer.label ?? 'command buffer',
    );
    if (!plan.oneShot) this.planRegistry?.register(commandBuffer, plan);
    return plan;
  };

  /** A reusable command buffer was collected: its plan leaves the workers. */
  private freePlan(plan: CpuPlan): void {
    if (this.destroyed || this.lostReason !== undefined) return;
    for (const queue of this.taskQueues) {
      if ((plan.shippedTo & (1 << queue.index)) !== 0) queue.broadcast({ t: 'plan-free', id: plan.id });
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Loss and destruction

  /** Fails every pending operation with `reason`. */
  private failPending(reason: KeelError): void {
    const ops = [...this.pending];
    for (const op of ops) this.complete(op, reason);
  }

  /** @internal TaskQueueHost: a worker died. The device is lost: pending work fails UNAVAILABLE, workers end. */
  lose(reason: KeelError): void {
    if (this.lostReason !== undefined || this.destroyed) return;
    this.lostReason = reason;
    this.failPending(reason);
    for (const queue of this.taskQueues) void queue.terminate(reason);
    this.resolveLost(reason);
  }

  destroy(): Promise<void> {
    this.destroyPromise ??= this.doDestroy();
    return this.destroyPromise;
  }

  private async doDestroy(): Promise<void> {
    this.destroyed = true;
    const reason = new KeelError(ErrorCode.UNAVAILABLE, `${this.deviceName}: the device was destroyed`);
    this.failPending(reason);
    this.pools.destroy();
    for (const buffer of this.liveBuffers) buffer.markDeviceDestroyed();
    this.liveBuffers.clear();
    this.bufferPool.destroy();
    this.slabs.setListener(undefined);
    await Promise.all(this.taskQueues.map((queue) => queue.terminate(reason)));
    this.resolveLost(this.lostReason ?? reason);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}
