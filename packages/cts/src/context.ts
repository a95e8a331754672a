/**
 * What a conformance case works with: the device under test, its kernels, and helpers that keep the
 * cases short (buffers cleaned up after the case, reads and writes that wait with a timeout, and a
 * Binder that records the same commands with direct refs or with binding-table slots).
 */
import { Fence, type Semaphore } from '@keel/fence';
import {
  type Binding,
  type BindingTable,
  type Buffer,
  type BufferRef,
  BufferUsage,
  type CommandBuffer,
  type CommandBufferMode,
  type Device,
  type Executable,
  QueueAffinity,
  type UnhandledFailureHook,
} from '@keel/hal';
import { CTS_KERNEL_EXPORTS, type CtsKernelName, type CtsKernelSources } from './kernels';

/** How a case that records commands names its buffers: directly, or through binding-table slots. */
export type RefMode = 'direct' | 'slots';

/** What a device package hands the suite. */
export interface CtsDeviceHandle {
  readonly device: Device;
  readonly kernels: CtsKernelSources;
  /**
   * Optional: bytes of queue-allocated memory not available for reuse right now (live allocations,
   * deallocated blocks whose frontier is pending, blocks kept back after a failed dealloca). When
   * given, alloca cases also check that memory comes back and that a failed dealloca frees nothing.
   */
  readonly heldQueueBytes?: () => number;
}

/**
 * Device options every device takes, with the same meaning (hal's contract): a case that passes them
 * gets its own device, created with them (the suite's shared device is created without).
 */
export interface CtsDeviceOptions {
  /** The device's `onUnhandledFailure` option (hal's UnhandledFailureHook). */
  readonly onUnhandledFailure?: UnhandledFailureHook;
}

/**
 * Creates a device of the package under test. `options`, when given, must reach the device's own
 * options (a factory that drops them fails the cases that pass them).
 */
export type CreateCtsDevice = (options?: CtsDeviceOptions) => CtsDeviceHandle | Promise<CtsDeviceHandle>;

/** Slot capacity of command buffers the suite records in 'slots' mode. */
export const CTS_BINDING_CAPACITY = 64;

/**
 * Maps buffers to refs for one recording: in 'direct' mode refs name buffers; in 'slots' mode each
 * distinct buffer gets the next slot and `table()` returns the matching binding table.
 */
export class Binder {
  private readonly slots: Buffer[] = [];

  constructor(readonly mode: RefMode) {}

  /** A ref to bytes [offset, offset + length) of `buffer` (length omitted: to the end). */
  ref(buffer: Buffer, offset?: number, length?: number): BufferRef {
    if (this.mode === 'direct') return { buffer, offset, length };
    let slot = this.slots.indexOf(buffer);
    if (slot < 0) {
      slot = this.slots.length;
      this.slots.push(buffer);
    }
    return { slot, offset, length };
  }

  /** The binding table for the slots handed out (undefined in direct mode). */
  table(): BindingTable | undefined {
    if (this.mode === 'direct') return undefined;
    return this.slots.map((buffer): Binding => ({ buffer }));
  }

  /** A table that binds the same slots to other buffers (same order as first use). */
  tableFor(buffers: readonly Buffer[]): BindingTable {
    return buffers.map((buffer): Binding => ({ buffer }));
  }
}

export class CtsContext {
  /** Per-wait timeout of the helpers: a conformance failure must not hang the run. */
  readonly timeoutMs: number;
  private readonly cleanups: (() => void | Promise<void>)[] = [];
  private static readonly executables = new WeakMap<Device, Map<CtsKernelName, Promise<Executable>>>();

  constructor(
    readonly handle: CtsDeviceHandle,
    readonly refs: RefMode,
    timeoutMs: number,
  ) {
    this.timeoutMs = timeoutMs;
  }

  get device(): Device {
    return this.handle.device;
  }

  get queueCount(): number {
    return this.device.info.queueCount;
  }

  /** The affinity of queue `index` (wrapped to the device's queue count). */
  queue(index: number): QueueAffinity {
    return QueueAffinity.of(index % this.queueCount);
  }

  /** The CTS kernel `name` as an executable of the device (created once per device). */
  executable(name: CtsKernelName): Promise<Executable> {
    let cache = CtsContext.executables.get(this.device);
    if (cache === undefined) {
      cache = new Map();
      CtsContext.executables.set(this.device, cache);
    }
    let executable = cache.get(name);
    if (executable === undefined) {
      const exports = CTS_KERNEL_EXPORTS[name];
      executable = this.device.createExecutable(this.handle.kernels(name, exports));
      cache.set(name, executable);
      executable.catch(() => cache.delete(name));
    }
    return executable;
  }

  semaphore(initialValue = 0): Semaphore {
    return this.device.createSemaphore(initialValue);
  }

  /** A device buffer destroyed after the case. */
  buffer(byteLength: number, usage: number = BufferUsage.DEFAULT, label?: string): Buffer {
    const buffer = this.device.createBuffer({ byteLength, usage, label });
    this.cleanups.push(() => {
      if (buffer.state === 'live') buffer.destroy();
    });
    return buffer;
  }

  /** Runs `fn` after the case (cleanups run in reverse order). */
  defer(fn: () => void | Promise<void>): void {
    this.cleanups.push(fn);
  }

  binder(): Binder {
    return new Binder(this.refs);
  }

  /** A command buffer with room for the suite's slots, in recording state. */
  record(mode: CommandBufferMode = 'one-shot', affinity: QueueAffinity = QueueAffinity.ANY): CommandBuffer {
    const cb = this.device.createCommandBuffer({ mode, bindingCapacity: CTS_BINDING_CAPACITY, affinity });
    cb.begin();
    return cb;
  }

  /** Waits for a fence with the suite's timeout. */
  wait(fence: Fence): Promise<void> {
    return fence.wait({ timeoutMs: this.timeoutMs });
  }

  /** A fence of one fresh semaphore at 1. */
  fresh(): { semaphore: Semaphore; fence: Fence } {
    const semaphore = this.semaphore();
    return { semaphore, fence: Fence.of({ semaphore, value: 1 }) };
  }

  /** Submits command buffers on `affinity` (default queue 0), then waits for completion. */
  async execute(
    commandBuffers: readonly CommandBuffer[],
    tables?: readonly (BindingTable | undefined)[],
    affinity: QueueAffinity = this.queue(0),
  ): Promise<void> {
    const { fence } = this.fresh();
    this.device.queueExecute(affinity, Fence.empty, fence, commandBuffers, tables);
    await this.wait(fence);
  }

  /** Writes `data` at `offset` of `buffer` and waits. */
  async write(buffer: Buffer, data: ArrayBufferView, offset = 0): Promise<void> {
    const { fence } = this.fresh();
    this.device.queueWrite(this.queue(0), Fence.empty, fence, data, {
      buffer,
      offset,
      length: data.byteLength,
    });
    await this.wait(fence);
  }

  /** Reads `length` bytes (default: to the end) at `offset` of `buffer`. */
  async read(buffer: Buffer, offset = 0, length = buffer.byteLength - offset): Promise<Uint8Array> {
    const out = new Uint8Array(length);
    const { fence } = this.fresh();
    this.device.queueRead(this.queue(0), Fence.empty, fence, { buffer, offset, length }, out);
    await this.wait(fence);
    return out;
  }

  async readF32(
    buffer: Buffer,
    offset = 0,
    count = (buffer.byteLength - offset) >>> 2,
  ): Promise<Float32Array> {
    const bytes = await this.read(buffer, offset, count * 4);
    return new Float32Array(bytes.buffer, bytes.byteOffset, count);
  }

  async readU32(
    buffer: Buffer,
    offset = 0,
    count = (buffer.byteLength - offset) >>> 2,
  ): Promise<Uint32Array> {
    const bytes = await this.read(buffer, offset, count * 4);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  }

  async readI32(buffer: Buffer, offset = 0, count = (buffer.byteLength - offset) >>> 2): Promise<Int32Array> {
    const bytes = await this.read(buffer, offset, count * 4);
    return new Int32Array(bytes.buffer, bytes.byteOffset, count);
  }

  /** Runs the cleanups (the suite calls this after each case, even a failing one). */
  async cleanup(): Promise<void> {
    while (this.cleanups.length > 0) {
      const fn = this.cleanups.pop()!;
      try {
        await fn();
      } catch {
        // A cleanup that fails (e.g. the device was lost by the case) must not hide the case's result.
      }
    }
  }
}

/** Resolves after `ms` milliseconds (lets queued work run, to show it does not). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The bit pattern of an f32, for dispatch constants. */
export function f32Bits(value: number): number {
  const f = new Float32Array([value]);
  return new Uint32Array(f.buffer)[0]!;
}
