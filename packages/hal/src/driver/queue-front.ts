/**
 * The queue front every device shares (the driver kit's counterpart of IREE's `hal/device.c` front):
 * the Device queue methods check their arguments synchronously (a KeelError, nothing enqueued, the
 * message naming the operation and the broken rule), fill one QueueRecord and hand it to the device's
 * narrow surface:
 *
 * - `record(kind, queue, wait, signal)`: a record (new or pooled) for an operation on `queue`;
 * - `submit(op)`: the record is complete; order it after `op.wait` and run it;
 * - `submitExecute(op)`: queueExecute's device part (plans, tables), after the shared checks;
 * - `allocate(...)` / `deallocate(...)`: queueAlloca/queueDealloca's device part, after the checks.
 *
 * Lifecycle state (`destroyed`, `lossReason`, `destroyReason`) lives here too, so that every method
 * refuses a destroyed device (FAILED_PRECONDITION) or a lost one (UNAVAILABLE, cause = the loss) the
 * same way, and `lostReason` (Device.lostReason) reports either synchronously. The front builds no
 * string and allocates nothing on the success path (messages come from a table built once, checked
 * ranges land in one reused ByteRange). It declares no `#private` members, so a device wrapped in a
 * Proxy (methods called with the proxy as `this`) keeps working.
 */
import { describeValue, ErrorCode, type Fence, KeelError } from '@keel/fence';
import type { BindingTable } from '../binding-table';
import { type Buffer, type BufferParams, checkBufferByteLength, checkBufferParams } from '../buffer';
import type { DirectBufferRef } from '../buffer-ref';
import { BufferUsage } from '../buffer-usage';
import type { CommandBuffer } from '../command-buffer';
import type { AllocaOptions, Device, DeviceInfo } from '../device';
import { checkOptions } from '../options';
import { QueueAffinity } from '../queue-affinity';
import {
  allocaPool,
  type BufferClass,
  type ByteRange,
  checkCopyRanges,
  checkDeallocaBuffer,
  checkExecuteArguments,
  checkFillPattern,
  checkFillRange,
  checkHostLength,
  checkQueueFences,
  checkQueueRef,
  hostBytes,
  isFence,
} from '../queue-arguments';
import type { Trace, TraceOptions } from '../trace';
import { invalid } from './invalid';
import { OpKind, type QueueRecord } from './queue-record';
import {
  type DispatchTiming,
  newTracePid,
  TRACE_OPTION_RULES,
  TraceRecorder,
  traceBusy,
} from './trace-recorder';

/** The Device methods whose messages name the device (see `QueueFront.names`). */
export const FRONT_METHODS = [
  'createBuffer',
  'createExecutable',
  'createCommandBuffer',
  'createSemaphore',
  'mapHostView',
  'queueAlloca',
  'queueDealloca',
  'queueExecute',
  'queueFill',
  'queueUpdate',
  'queueCopy',
  'queueRead',
  'queueWrite',
  'queueBarrier',
  'queueHostCall',
  'flush',
  'startTrace',
] as const;
export type FrontMethod = (typeof FRONT_METHODS)[number];

/** queueAlloca's checked arguments, as the front hands them to `allocate`. */
export interface AllocaRequest {
  params: BufferParams;
  /** The checked usage bits of `params`. */
  usage: number;
  /** Bytes, an integer in [0, maxBufferSize]. */
  size: number;
  /** The pool named by the options ('tlsf' when none). */
  pool: string;
}

const NO_PARAMS: BufferParams = Object.freeze({ usage: 0 });

/**
 * The shared queue front. A device extends it, passes its display name ("device 'cpu'") to the
 * constructor, sets `info` and implements the narrow surface (the abstract members below).
 */
export abstract class QueueFront<B extends Buffer, Op extends QueueRecord<B>> {
  abstract readonly info: DeviceInfo;
  /** "device 'cpu' queueFill" per method, built once (messages only). */
  declare protected readonly names: Readonly<Record<FrontMethod, string>>;
  /** Set by destroy() (`markDestroyed`): every later call is FAILED_PRECONDITION. */
  protected destroyed = false;
  /** Set when the device is lost: every later call is UNAVAILABLE with this cause. */
  protected lossReason: KeelError | undefined;
  /** The reason destroy() fails pending work with (`markDestroyed`); `lost` resolves with it unless lost first. */
  protected destroyReason: KeelError | undefined;
  /** Where checkQueueRef leaves a checked range (reused: no allocation per check). */
  protected readonly range: ByteRange = { offset: 0, length: 0 };
  /** The trace recording now (startTrace), else undefined: the one branch tracing costs when off. */
  protected tracer: TraceRecorder | undefined;
  /** The `pid` of this device's trace exports, taken at its first trace (0 before). */
  private tracePid = 0;
  private queueMask = -1;
  private readonly allocaRequest: AllocaRequest = { params: NO_PARAMS, usage: 0, size: 0, pool: 'tlsf' };
  // Declared, assigned in the constructor (the build then emits no field definition besides).
  /** How messages name the device ("device 'cpu'", "webgpu device 'lavapipe'"). */
  declare protected readonly deviceName: string;
  /** The class of the device's buffers (`instanceof` decides whether a buffer is the device's). */
  declare protected readonly bufferClass: BufferClass<B>;

  protected constructor(deviceName: string, bufferClass: BufferClass<B>) {
    this.deviceName = deviceName;
    this.bufferClass = bufferClass;
    const names = {} as Record<FrontMethod, string>;
    for (const method of FRONT_METHODS) names[method] = `${deviceName} ${method}`;
    this.names = names;
  }

  // ---------------------------------------------------------------------------------------------------
  // The narrow surface a device implements

  /** A record (new or pooled) of `kind` on `queue`, ordered after `wait`, signalling `signal`. */
  protected abstract record(kind: OpKind, queue: number, wait: Fence, signal: Fence): Op;
  /** `op` is filled in: order it after `op.wait`, run it, then signal (or fail) `op.signal`. */
  protected abstract submit(op: Op): void;
  /**
   * queueExecute after the shared checks (arguments valid, each submission validated): `op` is an
   * EXECUTE record whose `commandBuffers` and `tables` are the caller's arrays (copy them to keep them).
   */
  protected abstract submitExecute(op: Op): void;
  /** queueAlloca after the shared checks (`request` is reused: read it during the call only). */
  protected abstract allocate(queue: number, wait: Fence, signal: Fence, request: AllocaRequest): Buffer;
  /** queueDealloca after the shared checks: `buffer` is a live queue-allocated buffer of this device. */
  protected abstract deallocate(queue: number, wait: Fence, signal: Fence, buffer: B): void;
  /** Where this device's dispatch times come from for a trace with `options` (none by default). */
  protected traceTiming(_options: TraceOptions): DispatchTiming {
    return 'none';
  }
  /** A trace starts (`tracer` is set) or stops (`tracer` was cleared): device-side set-up. */
  protected traceChanged(_recorder: TraceRecorder, _recording: boolean): void {}
  /** A device-specific size rule of createBuffer/queueAlloca (none by default). */
  protected checkSize(_byteLength: number, _what: string, _name: string): void {}

  /** `record`, stamped for the trace recording now (if any). */
  protected traced(kind: OpKind, queue: number, wait: Fence, signal: Fence): Op {
    const op = this.record(kind, queue, wait, signal);
    this.tracer?.stamp(op);
    return op;
  }

  /**
   * Starts recording a trace of this device's queues (hal Trace): every operation submitted from now
   * until `stop()`/dispose. FAILED_PRECONDITION while another trace records; options as TraceOptions.
   */
  startTrace(options?: TraceOptions): Trace {
    const what = this.names.startTrace;
    this.checkUsable('startTrace');
    const checked = checkOptions<TraceOptions>(what, options, TRACE_OPTION_RULES);
    if (this.tracer) throw traceBusy(what);
    if (this.tracePid === 0) this.tracePid = newTracePid();
    const timing = this.traceTiming(checked);
    const recorder = new TraceRecorder(this.info, checked, timing, this.tracePid, (r) => {
      if (this.tracer !== r) return;
      this.tracer = undefined;
      this.traceChanged(r, false);
    });
    this.tracer = recorder;
    this.traceChanged(recorder, true);
    return recorder;
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Device.lostReason: the loss reason, else the reason destroy() was given, else undefined (usable).
   * Set synchronously, before `lost` resolves with the same object.
   */
  get lostReason(): KeelError | undefined {
    return this.lossReason ?? this.destroyReason;
  }

  /** What a device's destroy() does first, synchronously: marks it destroyed, with `reason`. */
  protected markDestroyed(reason: KeelError): void {
    this.destroyed = true;
    this.destroyReason ??= reason;
  }

  // ---------------------------------------------------------------------------------------------------
  // Checks

  /**
   * createBuffer's shared checks: the device usable, `params` (hal checkBufferParams), `byteLength` an
   * integer in [0, maxBufferSize], then the device's `checkSize`. Returns the checked usage bits.
   */
  protected checkCreateBuffer(params: BufferParams & { readonly byteLength: number }): number {
    const what = this.names.createBuffer;
    this.checkUsable('createBuffer');
    const usage = checkBufferParams(params, what);
    checkBufferByteLength(params.byteLength, this.info.limits.maxBufferSize, what);
    this.checkSize(params.byteLength, what, 'byteLength');
    return usage;
  }

  /** FAILED_PRECONDITION once destroyed, UNAVAILABLE once lost; nothing otherwise. */
  protected checkUsable(method: FrontMethod): void {
    if (this.destroyed) {
      throw new KeelError(ErrorCode.FAILED_PRECONDITION, `${this.names[method]}: the device was destroyed`);
    }
    if (this.lossReason) {
      throw new KeelError(
        ErrorCode.UNAVAILABLE,
        `${this.names[method]}: the device is lost (${this.lossReason.message})`,
        { cause: this.lossReason },
      );
    }
  }

  /**
   * Checks the device, the affinity and both fences; returns the selected queue (the lowest set bit
   * below queueCount, QueueAffinity.select's policy). Builds no string unless it throws.
   */
  protected begin(method: FrontMethod, affinity: number, wait: Fence, signal: Fence): number {
    this.checkUsable(method);
    if (this.queueMask === -1) this.queueMask = QueueAffinity.firstN(this.info.queueCount);
    // Fast path only for a valid 32-bit mask (QueueAffinity.isValid): 2**32 + 1 must not alias queue 0.
    const m = QueueAffinity.isValid(affinity) ? (affinity & this.queueMask) >>> 0 : 0;
    const queue =
      m !== 0
        ? 31 - Math.clz32(m & -m)
        : QueueAffinity.select(affinity, this.info.queueCount, this.names[method]);
    if (!isFence(wait) || !isFence(signal)) checkQueueFences(wait, signal, this.names[method]);
    return queue;
  }

  /**
   * queueExecute's queue choice: the submission mask intersected with every command buffer's affinity
   * (DESIGN.md § hal: a device maps the intersection onto its queues), so a command buffer made for
   * queue 1 runs there when submitted with ANY. When the intersection leaves none of the device's
   * queues, or an argument is malformed, `affinity` is returned unchanged and the argument checks name
   * the problem. Allocation-free.
   */
  private executeAffinity(affinity: number, commandBuffers: unknown): number {
    if (!QueueAffinity.isValid(affinity) || !Array.isArray(commandBuffers)) return affinity;
    let m = affinity >>> 0;
    for (let i = 0; i < commandBuffers.length; i++) {
      const a = (commandBuffers[i] as { affinity?: unknown } | null | undefined)?.affinity;
      if (typeof a !== 'number' || !QueueAffinity.isValid(a)) return affinity;
      m = (m & a) >>> 0;
    }
    if (this.queueMask === -1) this.queueMask = QueueAffinity.firstN(this.info.queueCount);
    return (m & this.queueMask) === 0 ? affinity : m;
  }

  /**
   * Checks a direct ref (hal's checkQueueRef: a live buffer of this device with `usage`, a range inside
   * it; length defaults to `defaultLength` when given, else to the end) and leaves its range in `range`.
   */
  protected ref(
    ref: DirectBufferRef,
    usage: number,
    method: FrontMethod,
    role: string,
    defaultLength?: number,
  ): B {
    return checkQueueRef(
      this as unknown as Device,
      this.bufferClass,
      ref,
      usage,
      this.names[method],
      role,
      defaultLength,
      this.range,
    );
  }

  // ---------------------------------------------------------------------------------------------------
  // Device queue methods

  queueFill(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    target: DirectBufferRef,
    pattern: number,
    patternLength: 1 | 2 | 4,
  ): void {
    const queue = this.begin('queueFill', affinity, wait, signal);
    checkFillPattern(pattern, patternLength, this.names.queueFill);
    const t = this.ref(target, BufferUsage.TRANSFER_TARGET, 'queueFill', 'target');
    const r = this.range;
    checkFillRange(r, patternLength, this.names.queueFill);
    const op = this.traced(OpKind.FILL, queue, wait, signal);
    op.target = t;
    op.targetOffset = r.offset;
    op.length = r.length;
    op.pattern = pattern;
    op.patternLength = patternLength;
    this.submit(op);
  }

  queueUpdate(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    source: ArrayBufferView,
    target: DirectBufferRef,
  ): void {
    this.hostTransfer('queueUpdate', affinity, wait, signal, source, target);
  }

  queueCopy(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    source: DirectBufferRef,
    target: DirectBufferRef,
  ): void {
    const queue = this.begin('queueCopy', affinity, wait, signal);
    const r = this.range;
    const length = source?.length ?? target?.length;
    const s = this.ref(source, BufferUsage.TRANSFER_SOURCE, 'queueCopy', 'source', length);
    const sourceOffset = r.offset;
    const sourceLength = r.length;
    const t = this.ref(target, BufferUsage.TRANSFER_TARGET, 'queueCopy', 'target', sourceLength);
    checkCopyRanges(s, sourceOffset, sourceLength, t, r.offset, r.length, this.names.queueCopy);
    const op = this.traced(OpKind.COPY, queue, wait, signal);
    op.source = s;
    op.sourceOffset = sourceOffset;
    op.target = t;
    op.targetOffset = r.offset;
    op.length = sourceLength;
    this.submit(op);
  }

  queueRead(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    source: DirectBufferRef,
    target: ArrayBufferView,
  ): void {
    this.hostTransfer('queueRead', affinity, wait, signal, target, source);
  }

  queueWrite(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    source: ArrayBufferView,
    target: DirectBufferRef,
  ): void {
    this.hostTransfer('queueWrite', affinity, wait, signal, source, target);
  }

  /**
   * queueUpdate, queueWrite (host bytes into a buffer range) and queueRead (a buffer range into host
   * memory). An update is at most maxUpdateSize bytes (the device copies them if it defers the
   * operation); a write reads `host` when it runs, a read writes it.
   */
  private hostTransfer(
    method: 'queueUpdate' | 'queueWrite' | 'queueRead',
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    host: ArrayBufferView,
    device: DirectBufferRef,
  ): void {
    const what = this.names[method];
    const queue = this.begin(method, affinity, wait, signal);
    const read = method === 'queueRead';
    const bytes = hostBytes(host, what, read ? 'target' : 'source');
    const update = method === 'queueUpdate';
    const max = this.info.limits.maxUpdateSize;
    if (update && bytes.byteLength > max) {
      throw invalid(
        `${what}: ${bytes.byteLength} bytes exceed the device's maxUpdateSize of ${max} bytes (use queueWrite)`,
      );
    }
    const b = read
      ? this.ref(device, BufferUsage.TRANSFER_SOURCE, method, 'source', bytes.byteLength)
      : this.ref(device, BufferUsage.TRANSFER_TARGET, method, 'target', bytes.byteLength);
    const r = this.range;
    checkHostLength(method, r.length, bytes.byteLength, what);
    const op = this.traced(read ? OpKind.READ : update ? OpKind.UPDATE : OpKind.WRITE, queue, wait, signal);
    if (read) {
      op.source = b;
      op.sourceOffset = r.offset;
    } else {
      op.target = b;
      op.targetOffset = r.offset;
    }
    op.length = r.length;
    op.bytes = bytes;
    this.submit(op);
  }

  queueBarrier(affinity: QueueAffinity, wait: Fence, signal: Fence): void {
    const queue = this.begin('queueBarrier', affinity, wait, signal);
    this.submit(this.traced(OpKind.BARRIER, queue, wait, signal));
  }

  queueHostCall(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    callback: () => void | Promise<void>,
  ): void {
    const queue = this.begin('queueHostCall', affinity, wait, signal);
    if (typeof callback !== 'function') {
      throw invalid(
        `${this.names.queueHostCall}: callback must be a function, got ${describeValue(callback)}`,
      );
    }
    const op = this.traced(OpKind.HOST_CALL, queue, wait, signal);
    op.callback = callback;
    this.submit(op);
  }

  queueExecute(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    commandBuffers: readonly CommandBuffer[],
    bindingTables?: readonly (BindingTable | undefined)[],
  ): void {
    const queue = this.begin('queueExecute', this.executeAffinity(affinity, commandBuffers), wait, signal);
    checkExecuteArguments(
      this as unknown as Device,
      queue,
      commandBuffers,
      bindingTables,
      this.names.queueExecute,
    );
    const op = this.traced(OpKind.EXECUTE, queue, wait, signal);
    op.commandBuffers = commandBuffers;
    op.tables = bindingTables ?? undefined;
    this.submitExecute(op);
  }

  queueAlloca(
    affinity: QueueAffinity,
    wait: Fence,
    signal: Fence,
    params: BufferParams,
    size: number,
    options?: AllocaOptions,
  ): Buffer {
    const what = this.names.queueAlloca;
    const queue = this.begin('queueAlloca', affinity, wait, signal);
    const usage = checkBufferParams(params, what);
    const pool = allocaPool(options, what);
    const max = this.info.limits.maxBufferSize;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > max) {
      throw invalid(`${what}: size must be an integer in [0, ${max}], got ${describeValue(size)}`);
    }
    this.checkSize(size, what, 'size');
    const request = this.allocaRequest;
    request.params = params;
    request.usage = usage;
    request.size = size;
    request.pool = pool;
    try {
      const buffer = this.allocate(queue, wait, signal, request);
      this.tracer?.fenceOp('queueAlloca', queue, signal, { queue, bytes: size, pool: request.pool });
      return buffer;
    } finally {
      request.params = NO_PARAMS;
    }
  }

  queueDealloca(affinity: QueueAffinity, wait: Fence, signal: Fence, buffer: Buffer): void {
    const queue = this.begin('queueDealloca', affinity, wait, signal);
    const b = checkDeallocaBuffer(
      this as unknown as Device,
      this.bufferClass,
      buffer,
      this.names.queueDealloca,
    );
    this.deallocate(queue, wait, signal, b);
    this.tracer?.fenceOp('queueDealloca', queue, signal, { queue, bytes: b.byteLength });
  }

  /** Checks the device and the affinity; devices submit as soon as waits allow, so nothing is held. */
  flush(affinity: QueueAffinity): void {
    this.checkUsable('flush');
    QueueAffinity.select(affinity, this.info.queueCount, this.names.flush);
  }
}
