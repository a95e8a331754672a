/**
 * One queue operation as the CPU device tracks it: the driver kit's QueueRecord (hal/driver) plus the
 * CPU's state, from the call (WAITING, registered on its wait fence) through READY and RUNNING to
 * DONE (signal signalled or failed, buffers released). One object per operation carries
 * every kind's payload, so a queue call allocates one record and one callback.
 */
import type { Fence, KeelError } from '@keel/fence';
import { type OpKind, QueueRecord } from '@keel/hal/driver';
import type { CpuBuffer } from './cpu-buffer';
import type { CpuPlan } from './cpu-plan';

/** Where an operation is: waiting for its wait fence, ready (in the run list), running, done. */
export enum OperationState {
  WAITING,
  READY,
  RUNNING,
  DONE,
}

/** The device side an operation reports to. */
export interface OperationSink {
  operationReady(op: Operation, error: KeelError | undefined): void;
}

export class Operation extends QueueRecord<CpuBuffer> {
  state = OperationState.WAITING;
  /** Buffers retained until completion (released exactly once). */
  buffers: CpuBuffer[] | undefined;
  /** Executes: sequence number on its queue's executors (workers or sync queue), -1 until it runs. */
  seq = -1;
  /** Executes: the plans of its command buffers, in order. */
  plans: CpuPlan[] | undefined;

  /** "device 'cpu' queueFill": how messages name the operation. */
  declare readonly name: string;
  declare readonly onReady: (error?: KeelError) => void;

  constructor(kind: OpKind, name: string, queue: number, wait: Fence, signal: Fence, sink: OperationSink) {
    super();
    this.kind = kind;
    this.name = name;
    this.queue = queue;
    this.wait = wait;
    this.signal = signal;
    this.onReady = (error?: KeelError) => sink.operationReady(this, error);
  }
}
