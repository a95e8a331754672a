/**
 * Messages between the main thread and the workers of a task-mode queue. Messages to one worker are
 * handled in the order they were posted, so a slab, kernel or plan message always precedes the
 * operations that use it. Operation completion does not travel as a message: the worker that finishes
 * an operation signals the queue's SharedTimelineSemaphore (see control-block.ts); only failures and
 * load results come back as messages.
 */
import type { SharedSemaphoreHandle, StructuredKeelError } from '@keel/fence';
import type { ProfileRing } from './cpu-profiler';
import type { PlanArrays } from './plan-format';

/** Data every worker of a queue starts with (`workerData`). */
export interface WorkerInit {
  readonly workerIndex: number;
  /** The queue's control block (Int32Array of CTL_WORDS over it). */
  readonly control: SharedArrayBuffer;
  /** The queue's completion timeline: payload = number of completed operations. */
  readonly timeline: SharedSemaphoreHandle;
}

/** A slab of device memory, addressed as `index` by resolved tables. */
export interface SlabMessage {
  readonly t: 'slab';
  readonly index: number;
  readonly memory: SharedArrayBuffer;
}

export interface SlabFreeMessage {
  readonly t: 'slab-free';
  readonly index: number;
}

/** Import `url` (cached per URL) and bind executable `id`'s exports to its named functions. */
export interface LoadMessage {
  readonly t: 'load';
  readonly id: number;
  readonly url: string;
  readonly label: string;
  readonly names: readonly string[];
  /** 3 per export: the workgroup size. */
  readonly sizes: readonly number[];
}

export interface UnloadMessage {
  readonly t: 'unload';
  readonly id: number;
}

export interface PlanMessage {
  readonly t: 'plan';
  readonly id: number;
  readonly arrays: PlanArrays;
}

export interface PlanFreeMessage {
  readonly t: 'plan-free';
  readonly id: number;
}

/**
 * Operation `seq` of the queue, encoded in one Float64Array `data`: [seq, plan count n, then n pairs
 * (plan id, table words), then the n resolved tables back to back]. Sent bare (a Float64Array is the
 * message) unless `scratch` is needed: 4 int32 per indirect dispatch of plan i, when the queue has
 * several workers.
 */
export interface ExecuteMessage {
  readonly t: 'exec';
  readonly data: Float64Array;
  readonly scratch: readonly (Int32Array | undefined)[];
}

/** Start (a ring) or stop (none) writing per-dispatch wall times for traces (cpu-profiler.ts). */
export interface ProfileMessage {
  readonly t: 'profile';
  readonly ring: ProfileRing | undefined;
}

export type ToWorker =
  | Float64Array
  | SlabMessage
  | SlabFreeMessage
  | LoadMessage
  | UnloadMessage
  | PlanMessage
  | PlanFreeMessage
  | ExecuteMessage
  | ProfileMessage;

/**
 * The brand on every message a worker sends: kernels run in the worker and may post messages of their
 * own to the parent (progress, logs), which the queue ignores rather than mistakes for the protocol.
 */
export const FROM_WORKER = 'keel/device-cpu worker';

/** The result of a LoadMessage. */
export interface LoadedMessage {
  readonly from: typeof FROM_WORKER;
  readonly t: 'loaded';
  readonly id: number;
  readonly error?: StructuredKeelError;
}

/** Operation `seq` failed (sent once per operation, before it completes). */
export interface FailedMessage {
  readonly from: typeof FROM_WORKER;
  readonly t: 'failed';
  readonly seq: number;
  readonly error: StructuredKeelError;
}

export type FromWorker = LoadedMessage | FailedMessage;

/** Whether `message` is one of Keel's (a kernel's own message is not: see FROM_WORKER). */
export function isFromWorker(message: unknown): message is FromWorker {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { from?: unknown }).from === FROM_WORKER &&
    ((message as { t?: unknown }).t === 'loaded' || (message as { t?: unknown }).t === 'failed')
  );
}
