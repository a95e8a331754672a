/**
 * One queue operation as the main thread tracks it, from the call (state 'waiting', registered on its
 * wait fence) through 'ready' and 'running' to 'done' (signal signalled or failed, buffers released).
 * One object per operation carries every kind's payload, so the device's queue calls allocate one
 * object and one callback each.
 */
import type { Fence, KeelError, Registration } from '@keel/fence';
import type { BindingTable, CommandBuffer } from '@keel/hal';
import type { CpuBuffer } from './cpu-buffer';
import type { CpuPlan } from './cpu-plan';

export const OpKind = {
  FILL: 0,
  UPDATE: 1,
  COPY: 2,
  READ: 3,
  WRITE: 4,
  BARRIER: 5,
  HOST_CALL: 6,
  EXECUTE: 7,
} as const;
export type OpKind = (typeof OpKind)[keyof typeof OpKind];

export type OperationState = 'waiting' | 'ready' | 'running' | 'done';

/** The device side an operation reports to. */
export interface OperationSink {
  operationReady(op: Operation, error: KeelError | undefined): void;
}

export class Operation {
  state: OperationState = 'waiting';
  registration: Registration | undefined;
  /** Buffers retained until completion (released exactly once). */
  buffers: CpuBuffer[] | undefined;
  /** Sequence number on its queue's workers (task-mode executes). */
  seq = -1;

  // Transfers.
  target: CpuBuffer | undefined;
  targetOffset = 0;
  source: CpuBuffer | undefined;
  sourceOffset = 0;
  length = 0;
  pattern = 0;
  patternLength = 1;
  /** Update: the bytes captured at the call. Read/write: the host memory. */
  host: Uint8Array | undefined;
  callback: (() => void | Promise<void>) | undefined;

  // Executes.
  commandBuffers: readonly CommandBuffer[] | undefined;
  plans: CpuPlan[] | undefined;
  tables: (BindingTable | undefined)[] | undefined;

  readonly onReady: (error?: KeelError) => void;

  constructor(
    readonly kind: OpKind,
    /** "device 'cpu' queueFill": how messages name the operation. */
    readonly name: string,
    readonly queue: number,
    readonly signal: Fence,
    sink: OperationSink,
  ) {
    this.onReady = (error?: KeelError) => sink.operationReady(this, error);
  }
}
