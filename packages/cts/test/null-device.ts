/**
 * A minimal device written only against the driver kit (`@keel/hal/driver`), the way IREE's null and
 * local-sync drivers sit on `hal/device.c`: host memory (one ArrayBuffer per buffer), inline execution
 * on the calling thread once an operation's waits are reached, command buffers executed by replaying
 * them into a CommandSink. The queue front (argument checks, lifecycle, queue methods) is the kit's
 * QueueFront; this file implements only the narrow surface (`record`, `submit`, `submitExecute`,
 * `allocate`, `deallocate`) plus resources, and times its dispatches for traces (the kit records the
 * rest). It exists to prove that the kit is enough: it runs the whole conformance suite
 * (null-device.test.ts).
 *
 * Kernels: a 'js-module' executable whose exported functions are called once per workgroup with
 * `{ workgroupId, workgroupCount, bindings: [{ bytes, f32, i32, u32 }], constants, constantsF32 }`.
 */
import { createCommandBuffer } from '@keel/command-buffer';
import { type Fence, type Semaphore, TimelineSemaphore } from '@keel/fence';
import {
  type Buffer,
  type BufferParams,
  type BufferPlacement,
  type BufferState,
  type CommandBuffer,
  type CommandBufferOptions,
  type CommandSink,
  createExecutableExports,
  type Device,
  type DeviceInfo,
  describeBuffer,
  ErrorCode,
  type Executable,
  type ExecutableExport,
  type ExecutableSource,
  KeelError,
  lookupExport,
  MemoryType,
  QueueAffinity,
  type ResolvedBindings,
  type TraceOptions,
  type UnhandledFailureHook,
} from '@keel/hal';
import {
  type AllocaRequest,
  abortedBy,
  completeSignal,
  type FrontMethod,
  invalid,
  madeByCreateBuffer,
  OP_NAMES,
  OpKind,
  QueueFront,
  QueueRecord,
  RunList,
  slotsUsedBy,
  snapshotBindingTable,
  type TraceRecorder,
  thrownBy,
  traceNow,
  unhandledFailureReporter,
} from '@keel/hal/driver';

const HOST_MEMORY = MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT | MemoryType.DEVICE_LOCAL;

export class NullBuffer implements Buffer {
  state: BufferState = 'live';
  readonly bytes: Uint8Array;

  constructor(
    readonly device: NullDevice,
    readonly byteLength: number,
    readonly usage: number,
    readonly memoryType: number,
    readonly placement: BufferPlacement,
    readonly label: string | undefined,
  ) {
    this.bytes = new Uint8Array(byteLength);
  }

  destroy(): void {
    if (this.placement.queueAllocated && this.state === 'live') {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${describeBuffer(this)} was made by queueAlloca; release it with queueDealloca`,
      );
    }
    // Submitted work keeps `bytes` alive (the garbage collector frees it).
    if (this.state === 'live') this.state = 'destroyed';
  }
}

type Kernel = (ctx: KernelContext) => void;

interface KernelContext {
  workgroupId: [number, number, number];
  workgroupCount: [number, number, number];
  bindings: { bytes: Uint8Array; f32: Float32Array; i32: Int32Array; u32: Uint32Array }[];
  constants: Uint32Array;
  constantsF32: Float32Array;
}

export class NullExecutable implements Executable {
  constructor(
    readonly device: NullDevice,
    readonly exports: readonly ExecutableExport[],
    readonly kernels: readonly Kernel[],
    readonly label: string,
  ) {}

  lookupExport(entry: string | number): ExecutableExport {
    return lookupExport(this.exports, entry, `executable '${this.label}'`);
  }
}

class NullOp extends QueueRecord<NullBuffer> {
  done = false;
  readonly onReady: (error?: KeelError) => void;

  constructor(
    device: NullDevice,
    /** "null device 'x' queueFill": how messages name it. */
    readonly name: string,
  ) {
    super();
    this.onReady = (error) => device.ready(this, error);
  }
}

/** Executes replayed commands on host memory (timing dispatches for `trace`, while one is set). */
class InlineSink implements CommandSink {
  trace: TraceRecorder | undefined;
  queue = 0;
  execute = 0;

  fill(target: Buffer, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void {
    const bytes = (target as NullBuffer).bytes;
    for (let i = 0; i < length; i++) bytes[offset + i] = (pattern >>> (8 * (i % patternLength))) & 0xff;
  }

  update(source: Uint8Array, target: Buffer, offset: number, length: number): void {
    (target as NullBuffer).bytes.set(source.subarray(0, length), offset);
  }

  copy(source: Buffer, sourceOffset: number, target: Buffer, targetOffset: number, length: number): void {
    const from = (source as NullBuffer).bytes.subarray(sourceOffset, sourceOffset + length);
    (target as NullBuffer).bytes.set(from, targetOffset);
  }

  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
  ): void {
    const kernel = (executable as NullExecutable).kernels[entry] as Kernel;
    const views = [];
    for (let i = 0; i < bindings.count; i++) {
      const b = (bindings.buffers[i] as NullBuffer).bytes;
      const offset = b.byteOffset + (bindings.offsets[i] as number);
      const length = bindings.lengths[i] as number;
      const words = Math.floor(length / 4);
      views.push({
        bytes: new Uint8Array(b.buffer, offset, length),
        f32: new Float32Array(b.buffer, offset, words),
        i32: new Int32Array(b.buffer, offset, words),
        u32: new Uint32Array(b.buffer, offset, words),
      });
    }
    const own = constants.slice();
    const ctx: KernelContext = {
      workgroupId: [0, 0, 0],
      workgroupCount: [x, y, z],
      bindings: views,
      constants: own,
      constantsF32: new Float32Array(own.buffer),
    };
    const start = this.trace === undefined ? 0 : traceNow();
    for (let k = 0; k < z; k++) {
      for (let j = 0; j < y; j++) {
        for (let i = 0; i < x; i++) {
          ctx.workgroupId = [i, j, k];
          kernel(ctx);
        }
      }
    }
    if (this.trace !== undefined) {
      const exe = executable as NullExecutable;
      this.trace.dispatch(this.queue, exe.exports[entry]?.name ?? `entry ${entry}`, start, traceNow(), {
        executable: exe.label,
        execute: this.execute,
        timing: 'cpu-wall',
      });
    }
  }

  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: Buffer,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
  ): void {
    const view = new DataView((params as NullBuffer).bytes.buffer, paramsOffset, 12);
    const [x, y, z] = [0, 4, 8].map((at) => view.getUint32(at, true)) as [number, number, number];
    this.dispatch(executable, entry, x, y, z, constants, bindings);
  }

  barrier(): void {}
  beginDebugGroup(_label: string): void {}
  endDebugGroup(): void {}
}

const SINK = new InlineSink();

export class NullDevice extends QueueFront<NullBuffer, NullOp> implements Device {
  readonly info: DeviceInfo;
  readonly lost: Promise<KeelError>;
  #resolveLost!: (reason: KeelError) => void;
  #destroying: Promise<void> | undefined;
  readonly #pending = new Set<NullOp>();
  readonly #buffers = new Set<NullBuffer>();
  readonly #runList = new RunList<NullOp>((op) => this.#run(op));
  readonly #report: (error: unknown, operation: string) => void;

  constructor(label = 'null', onUnhandledFailure?: UnhandledFailureHook) {
    super(`null device '${label}'`, NullBuffer);
    this.info = Object.freeze({
      backend: 'null',
      name: label,
      queueCount: 2,
      limits: Object.freeze({
        maxBufferSize: 2 ** 28,
        maxWorkgroupCount: Object.freeze([65535, 65535, 65535]) as readonly [number, number, number],
        maxBindings: 16,
        maxConstants: 64,
        minStorageBufferOffsetAlignment: 16,
        maxUpdateSize: 65536,
      }),
      features: Object.freeze([]),
    });
    this.lost = new Promise((resolve) => {
      this.#resolveLost = resolve;
    });
    this.#report = unhandledFailureReporter(onUnhandledFailure, this.deviceName);
  }

  // --- resources -------------------------------------------------------------------------------------

  createBuffer(params: BufferParams & { readonly byteLength: number }): Buffer {
    const usage = this.checkCreateBuffer(params);
    const byteLength = params.byteLength;
    const placement = { affinity: (params.affinity ?? QueueAffinity.ANY) >>> 0, queueAllocated: false };
    const buffer = new NullBuffer(this, byteLength, usage, HOST_MEMORY, placement, params.label);
    this.#buffers.add(buffer);
    return buffer;
  }

  async createExecutable(source: ExecutableSource): Promise<Executable> {
    const what = this.names.createExecutable;
    this.checkUsable('createExecutable');
    if (source === null || typeof source !== 'object') throw invalid(`${what}: source must be an object`);
    if (source.format !== 'js-module') {
      throw new KeelError(ErrorCode.UNIMPLEMENTED, `${what}: the null device takes 'js-module' sources`);
    }
    const label = source.label ?? 'executable';
    const exports = createExecutableExports(source.exports, `'${label}'`);
    const module = (await import(/* @vite-ignore */ String(source.url))) as Record<string, unknown>;
    const kernels = exports.map((e) => {
      const fn = module[e.name];
      if (typeof fn !== 'function') throw invalid(`${what}: '${label}' exports no function '${e.name}'`);
      return fn as Kernel;
    });
    this.checkUsable('createExecutable');
    return new NullExecutable(this, exports, kernels, label);
  }

  createCommandBuffer(options?: CommandBufferOptions): CommandBuffer {
    this.checkUsable('createCommandBuffer');
    return createCommandBuffer(this, options);
  }

  createSemaphore(initialValue = 0): Semaphore {
    return new TimelineSemaphore(initialValue, { label: `${this.info.name} semaphore` });
  }

  // --- the narrow surface ----------------------------------------------------------------------------

  protected record(kind: OpKind, queue: number, wait: Fence, signal: Fence): NullOp {
    const op = new NullOp(this, this.names[OP_NAMES[kind] as FrontMethod]);
    op.kind = kind;
    op.queue = queue;
    op.wait = wait;
    op.signal = signal;
    return op;
  }

  protected submit(op: NullOp): void {
    if (op.kind === OpKind.UPDATE) op.bytes = (op.bytes as Uint8Array).slice();
    this.#pending.add(op);
    const registration = op.wait.onReached(op.onReady);
    if (!op.done) op.registration = registration;
  }

  protected submitExecute(op: NullOp): void {
    for (const cb of op.commandBuffers) cb.markSubmitted();
    // The caller may reuse its arrays once the call returns: keep the entries of the slots each command
    // buffer uses (O(slots used), whatever the slot numbers).
    op.commandBuffers = op.commandBuffers.slice();
    const cbs = op.commandBuffers;
    op.tables = op.tables?.map((table, i) =>
      table ? snapshotBindingTable(table, slotsUsedBy(cbs[i] as CommandBuffer)) : undefined,
    );
    this.submit(op);
  }

  protected allocate(queue: number, wait: Fence, signal: Fence, request: AllocaRequest): Buffer {
    const { params, pool } = request;
    const placement = {
      affinity: (params.affinity ?? QueueAffinity.of(queue)) >>> 0,
      pool,
      queueAllocated: true,
    };
    const buffer = new NullBuffer(this, request.size, request.usage, HOST_MEMORY, placement, params.label);
    this.#buffers.add(buffer);
    // Fresh memory is ready at once: the alloca orders its signal after its wait, like a barrier.
    this.submit(this.record(OpKind.BARRIER, queue, wait, signal));
    return buffer;
  }

  protected deallocate(queue: number, wait: Fence, signal: Fence, buffer: NullBuffer): void {
    if (!buffer.placement.queueAllocated) throw madeByCreateBuffer(buffer, this.names.queueDealloca);
    buffer.state = 'deallocated';
    this.#buffers.delete(buffer);
    this.submit(this.record(OpKind.BARRIER, queue, wait, signal));
  }

  // --- running ---------------------------------------------------------------------------------------

  /** The wait of `op` was reached (or failed). */
  ready(op: NullOp, error: KeelError | undefined): void {
    if (op.done) return;
    op.registration = undefined;
    if (error !== undefined) this.#complete(op, abortedBy(error, op.name));
    else {
      if (op.trace !== undefined) op.traceStarted = traceNow();
      this.#runList.push(op);
    }
  }

  #run(op: NullOp): void {
    if (op.done) return;
    try {
      this.#execute(op);
    } catch (error) {
      this.#complete(op, thrownBy(error, op.name));
    }
  }

  #execute(op: NullOp): void {
    const t = op.target;
    const s = op.source;
    switch (op.kind) {
      case OpKind.FILL:
        SINK.fill(t as NullBuffer, op.targetOffset, op.length, op.pattern, op.patternLength as 1 | 2 | 4);
        break;
      case OpKind.UPDATE:
      case OpKind.WRITE:
        (t as NullBuffer).bytes.set((op.bytes as Uint8Array).subarray(0, op.length), op.targetOffset);
        break;
      case OpKind.COPY:
        SINK.copy(s as NullBuffer, op.sourceOffset, t as NullBuffer, op.targetOffset, op.length);
        break;
      case OpKind.READ:
        (op.bytes as Uint8Array).set(
          (s as NullBuffer).bytes.subarray(op.sourceOffset, op.sourceOffset + op.length),
        );
        break;
      case OpKind.HOST_CALL: {
        const result = (op.callback as () => void | Promise<void>)();
        if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
          (result as Promise<void>).then(
            () => this.#complete(op, undefined),
            (error: unknown) => this.#complete(op, thrownBy(error, op.name)),
          );
          return;
        }
        break;
      }
      case OpKind.EXECUTE: {
        const trace = op.trace?.dispatches ? op.trace : undefined;
        SINK.trace = trace;
        SINK.queue = op.queue;
        SINK.execute = trace === undefined ? 0 : trace.nextExecute();
        try {
          op.commandBuffers.forEach((cb, i) => {
            cb.replay(SINK, op.tables?.[i] ?? undefined);
          });
        } finally {
          SINK.trace = undefined;
        }
        break;
      }
    }
    this.#complete(op, undefined);
  }

  #complete(op: NullOp, error: unknown): void {
    if (op.done) return;
    op.done = true;
    this.#pending.delete(op);
    op.registration?.cancel();
    if (op.trace !== undefined) op.trace.opDone(op, error);
    const signal = op.signal;
    op.resetRecord();
    const gone = this.destroyed || this.lossReason !== undefined;
    completeSignal(signal, error, op.name, gone ? undefined : this.#report);
  }

  /** Traces time dispatches inline, as they run (hal's driver kit does the rest). */
  protected override traceTiming(options: TraceOptions): 'cpu-wall' | 'none' {
    return options.dispatches === false ? 'none' : 'cpu-wall';
  }

  // --- teardown --------------------------------------------------------------------------------------

  destroy(): Promise<void> {
    this.#destroying ??= this.#destroy();
    return this.#destroying;
  }

  async #destroy(): Promise<void> {
    const reason = new KeelError(ErrorCode.UNAVAILABLE, `${this.deviceName}: the device was destroyed`);
    this.markDestroyed(reason);
    for (const op of [...this.#pending]) this.#complete(op, reason);
    for (const buffer of this.#buffers) buffer.state = 'destroyed';
    this.#buffers.clear();
    this.#resolveLost(reason);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}
