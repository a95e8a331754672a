/**
 * The device contract. A device owns buffers, executables, command buffers and semaphores and runs
 * queue operations. Every queue operation has the form `(affinity, wait, signalFence, ...)`:
 *
 * - Naming: the positional `signalFence` is the Fence the operation signals (it was named `signal`
 *   before; only the parameter name changed). It is unrelated to the `abortSignal` (an AbortSignal) that
 *   fence waits take in their options.
 * - Ordering comes only from fences: the operation starts once every timepoint of `wait` is reached and
 *   signals every timepoint of `signalFence` once it completed. Operations whose fences do not order them
 *   may run in any order or concurrently, also on one queue.
 * - It never blocks the calling thread: argument errors throw synchronously (a KeelError, nothing is
 *   enqueued and nothing is signalled); everything later is reported through `signalFence`.
 * - Failure propagation: if any wait timepoint fails, the operation does not run and every signal
 *   timepoint fails with ABORTED whose `cause` is the original failure. An operation that fails while
 *   running (a kernel throws, the device is lost) fails its signal timepoints with that error.
 * - Ownership: the device keeps alive every buffer, binding table and command buffer an operation names
 *   until the operation completes; callers may drop their references right after the call returns.
 *   Host memory passed to `queueRead`/`queueWrite` belongs to the device until `signalFence` is reached.
 * - `affinity` selects queues (QueueAffinity); an empty intersection with the device's queues is
 *   INVALID_ARGUMENT. Each device documents how it maps a mask onto its queues.
 * - Lengths: a ref's omitted `length` means "to the end of the buffer", except where the other side of
 *   the operation is host memory (`queueUpdate`, `queueWrite`, `queueRead`): there the host array's
 *   byteLength is the length. An explicit length that differs from the host array's is INVALID_ARGUMENT.
 */
import './disposable-globals';
import type { Fence, KeelError, Semaphore } from '@keel/fence';
import type { BindingTable } from './binding-table';
import type { Buffer, BufferParams } from './buffer';
import type { DirectBufferRef } from './buffer-ref';
import type { CommandBuffer, CommandBufferOptions } from './command-buffer';
import type { Executable, ExecutableSource } from './executable';
import type { QueueAffinity } from './queue-affinity';
import type { Trace, TraceOptions } from './trace';

export interface DeviceLimits {
  /** Largest buffer `createBuffer`/`queueAlloca` accept, in bytes. */
  readonly maxBufferSize: number;
  /** Largest workgroup count per dimension of a dispatch. */
  readonly maxWorkgroupCount: readonly [number, number, number];
  /** Most bindings one dispatch may take. */
  readonly maxBindings: number;
  /** Most 32-bit constants one dispatch may take. */
  readonly maxConstants: number;
  /** Required alignment of storage binding offsets, in bytes. */
  readonly minStorageBufferOffsetAlignment: number;
  /** Largest `update` payload (64 KiB). */
  readonly maxUpdateSize: number;
}

export interface DeviceInfo {
  /** 'cpu', 'webgpu', ... */
  readonly backend: string;
  /** Human-readable device name (adapter name for WebGPU). */
  readonly name: string;
  readonly queueCount: number;
  readonly limits: DeviceLimits;
  readonly features: readonly string[];
}

/**
 * Statistics of one pool's queue-ordered allocator, the same shape on every device (what
 * `Device.allocatorStats()` returns per pool; `@keel/allocator`'s AllocatorStats extends it).
 */
export interface PoolAllocatorStats {
  readonly allocas: number;
  readonly deallocas: number;
  /** Allocas that failed (their wait failed, the provider failed, or the allocator was destroyed). */
  readonly failures: number;
  /** Bytes (as asked for) of allocations that hold a block and were not deallocated, and their peak. */
  readonly liveBytes: number;
  readonly peakLiveBytes: number;
  /** Bytes (as asked for) of deallocated allocations whose death frontier is not reached yet. */
  readonly dyingBytes: number;
  /** The pool's slab bytes, and their peak. */
  readonly reservedBytes: number;
  readonly peakReservedBytes: number;
  /**
   * Bytes (as asked for) of deallocated allocations whose blocks are kept out of the pool forever
   * because their death frontier failed.
   */
  readonly quarantinedBytes: number;
}

export interface AllocaOptions {
  /** Pool to allocate from, when the device has several (e.g. 'tlsf', 'ring'). */
  readonly pool?: string;
}

export interface Device extends AsyncDisposable {
  readonly info: DeviceInfo;
  /** Resolves with the reason once the device is lost or destroyed; never rejects. */
  readonly lost: Promise<KeelError>;
  /**
   * The reason `lost` resolves with, known synchronously: undefined while the device is usable, set
   * the moment the device is lost or `destroy()` is called (`lost` resolves a microtask later at the
   * earliest, after destroy's teardown). Code that learns of a loss through `lost` checks it before
   * using the device, so a call in the same turn as the loss sees it too. Optional for device authors
   * (both Keel devices and the driver kit's `QueueFront` have it); where a device lacks it, only `lost`
   * tells of the loss.
   */
  readonly lostReason?: KeelError | undefined;

  /** A buffer of `byteLength` bytes (contents zeroed), owned by the caller until `destroy()`. */
  createBuffer(params: BufferParams & { readonly byteLength: number }): Buffer;
  /** Compiles or loads a backend-specific source; UNIMPLEMENTED for a format the device does not take. */
  createExecutable(source: ExecutableSource): Promise<Executable>;
  createCommandBuffer(options?: CommandBufferOptions): CommandBuffer;
  /** A timeline semaphore this device's queues can wait on and signal (shared across threads if needed). */
  createSemaphore(initialValue?: number): Semaphore;

  /**
   * Queue-ordered allocation: returns a buffer at once; its memory may be used by operations ordered
   * after `signalFence`. Release it with `queueDealloca`.
   */
  queueAlloca(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    params: BufferParams,
    size: number,
    options?: AllocaOptions,
  ): Buffer;
  /**
   * Releases a queue-allocated buffer once `wait` is reached; the buffer is unusable from this call on
   * (FAILED_PRECONDITION). A failed wait fails `signalFence` and frees nothing.
   */
  queueDealloca(affinity: QueueAffinity, wait: Fence, signalFence: Fence, buffer: Buffer): void;
  /**
   * Executes command buffers in order; `bindingTables[i]` supplies the slots of `commandBuffers[i]`.
   * Validates each submission (see CommandBuffer.validateSubmission) before enqueueing.
   */
  queueExecute(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    commandBuffers: readonly CommandBuffer[],
    bindingTables?: readonly (BindingTable | undefined)[],
  ): void;
  queueFill(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    target: DirectBufferRef,
    pattern: number,
    patternLength: 1 | 2 | 4,
  ): void;
  /** Copies `source` (≤ 64 KiB) at the call; the bytes land in `target` when the operation runs. */
  queueUpdate(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    source: ArrayBufferView,
    target: DirectBufferRef,
  ): void;
  queueCopy(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    source: DirectBufferRef,
    target: DirectBufferRef,
  ): void;
  /** Device → host: fills `target` (same length as the range) by the time `signalFence` is reached. */
  queueRead(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    source: DirectBufferRef,
    target: ArrayBufferView,
  ): void;
  /**
   * Host → device of any size: `source` is read when the operation runs, so it must stay unchanged until
   * `signalFence` is reached (unlike queueUpdate, which copies at the call).
   */
  queueWrite(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    source: ArrayBufferView,
    target: DirectBufferRef,
  ): void;
  /** Orders nothing but fences: signals `signalFence` once `wait` is reached. */
  queueBarrier(affinity: QueueAffinity, wait: Fence, signalFence: Fence): void;
  /**
   * Runs `callback` on the calling thread's event loop once `wait` is reached; `signalFence` is signalled
   * when it returns (or its promise resolves) and failed with its error if it throws.
   */
  queueHostCall(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    callback: () => void | Promise<void>,
  ): void;
  /**
   * Optional capability, advertised as the feature `'host-mapping'`: a synchronous host view of a
   * buffer of this device created with `MemoryType.HOST_VISIBLE` and `BufferUsage.MAPPING`.
   * Returns a Uint8Array of exactly `byteLength` bytes aliasing the buffer's memory (its `byteOffset` a
   * multiple of 8), valid while the buffer is live; host writes through it are seen by queue operations
   * that start after them, and bytes a queue operation writes are visible once its signal fence is reached
   * (coherent: no flush or invalidate). It never blocks and never copies; ordering is the caller's job.
   * Errors: INVALID_ARGUMENT for a foreign buffer or missing bits; FAILED_PRECONDITION once not live.
   * Devices whose host-visible memory maps only asynchronously (WebGPU) do not implement it.
   */
  mapHostView?(buffer: Buffer): Uint8Array;

  /**
   * Optional: snapshots of the device's queue allocators' statistics, by pool name ('tlsf', 'ring',
   * 'passthrough'; a pool never used is absent). Both Keel devices implement it.
   */
  allocatorStats?(): ReadonlyMap<string, PoolAllocatorStats>;

  /**
   * Optional (both Keel devices implement it): starts recording a trace of this device's queue
   * operations, waits, transfers and per-dispatch times (see `Trace`; DESIGN.md § Profiling and
   * traces). Stop it with `trace.stop()` or `using trace = device.startTrace()`; export it with
   * `await trace.toChromeTrace()`. FAILED_PRECONDITION while another trace of the device records.
   */
  startTrace?(options?: TraceOptions): Trace;

  /** Pushes deferred work of the selected queues to the hardware now (a no-op where nothing is deferred). */
  flush(affinity: QueueAffinity): void;

  /**
   * Fails every pending signal with UNAVAILABLE, releases all resources and ends workers. Idempotent.
   * Any later call is FAILED_PRECONDITION.
   */
  destroy(): Promise<void>;
}
