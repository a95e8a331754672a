/**
 * The queue operations a Scheduler accepts: one discriminated union member per queue operation of the
 * Device contract, carrying the same arguments minus `(affinity, wait, signal)`, which travel in
 * SubmitOptions. `Scheduler.submit(op, options)` forwards `op` to the chosen target's device with the
 * affinity of that target's queue.
 */
import type { Fence } from '@keel/fence';
import type {
  AllocaOptions,
  BindingTable,
  Buffer,
  BufferParams,
  CommandBuffer,
  DirectBufferRef,
  QueueAffinity,
} from '@keel/hal';

/** `Device.queueAlloca`: the buffer is created on the chosen target's device. */
export interface AllocaOperation {
  readonly kind: 'alloca';
  readonly params: BufferParams;
  readonly size: number;
  readonly options?: AllocaOptions;
}

/** `Device.queueDealloca`: placed on a target of `buffer.device`. */
export interface DeallocaOperation {
  readonly kind: 'dealloca';
  readonly buffer: Buffer;
}

/**
 * `Device.queueExecute`: placed on a target of the command buffers' device whose queue is in each
 * command buffer's own `affinity`.
 */
export interface ExecuteOperation {
  readonly kind: 'execute';
  readonly commandBuffers: readonly CommandBuffer[];
  readonly bindingTables?: readonly (BindingTable | undefined)[];
}

/** `Device.queueFill`: placed on a target of `target.buffer.device`. */
export interface FillOperation {
  readonly kind: 'fill';
  readonly target: DirectBufferRef;
  readonly pattern: number;
  readonly patternLength: 1 | 2 | 4;
}

/** `Device.queueUpdate` (≤ 64 KiB, copied at the call): placed on a target of `target.buffer.device`. */
export interface UpdateOperation {
  readonly kind: 'update';
  readonly source: ArrayBufferView;
  readonly target: DirectBufferRef;
}

/**
 * `Device.queueCopy`: both buffers must live on one device (INVALID_ARGUMENT otherwise; move data
 * between devices with `copyAcrossDevices`).
 */
export interface CopyOperation {
  readonly kind: 'copy';
  readonly source: DirectBufferRef;
  readonly target: DirectBufferRef;
}

/** `Device.queueRead` (device → host): placed on a target of `source.buffer.device`. */
export interface ReadOperation {
  readonly kind: 'read';
  readonly source: DirectBufferRef;
  readonly target: ArrayBufferView;
}

/** `Device.queueWrite` (host → device): placed on a target of `target.buffer.device`. */
export interface WriteOperation {
  readonly kind: 'write';
  readonly source: ArrayBufferView;
  readonly target: DirectBufferRef;
}

/** `Device.queueBarrier`: names no buffer, so any target may take it. */
export interface BarrierOperation {
  readonly kind: 'barrier';
}

/** `Device.queueHostCall`: names no buffer, so any target may take it. */
export interface HostCallOperation {
  readonly kind: 'host-call';
  readonly callback: () => void | Promise<void>;
}

export type QueueOperation =
  | AllocaOperation
  | DeallocaOperation
  | ExecuteOperation
  | FillOperation
  | UpdateOperation
  | CopyOperation
  | ReadOperation
  | WriteOperation
  | BarrierOperation
  | HostCallOperation;

export type QueueOperationKind = QueueOperation['kind'];

/** Ordering and placement of one submission; every field is optional. */
export interface SubmitOptions {
  /** Scheduler targets the operation may run on (bit i = target i). Defaults to QueueAffinity.ANY. */
  readonly affinity?: QueueAffinity;
  /** Timepoints the operation waits for. Defaults to Fence.empty. */
  readonly wait?: Fence;
  /**
   * Timepoints the operation signals when it completed (the device's positional `signalFence`).
   * Defaults to Fence.empty.
   */
  readonly signalFence?: Fence;
  /**
   * The former name of `signalFence`, kept for one minor release. Giving both with different fences is
   * INVALID_ARGUMENT.
   * @deprecated Use `signalFence` (`signal` reads like the AbortSignal of wait options).
   */
  readonly signal?: Fence;
}
