/**
 * One submission batch of the WebGPU device: the queue operations that became runnable in the same
 * synchronous turn (or until a flush), encoded into one GPUCommandEncoder and submitted with one
 * `queue.submit`, inside one set of error scopes (gpu-errors.ts ERROR_SCOPES). The record keeps its
 * operations until the scopes are popped, because a GPUError caught by them fails every one of them
 * (a command buffer that fails validation is dropped whole: none of its operations ran). Records are
 * pooled by the scheduler (op-scheduler.ts) and their pop callbacks are bound once, so a warm batch
 * allocates nothing.
 */
import type { QueueOp } from './queue-op';

/** What the scheduler hears from a batch's error scope pops. */
export interface BatchCallbacks {
  /** One of the batch's error scopes was popped (`error` null when it caught nothing). */
  batchScopePopped(batch: SubmitBatch, error: GPUError | null): void;
}

export class SubmitBatch {
  /** Its operations, in encoding order (kept until its scopes are popped). */
  readonly ops: QueueOp[] = [];
  /** Error scope pops not settled yet. */
  scopes = 0;
  /** The first GPUError its scopes caught. */
  gpuError: GPUError | undefined;
  readonly onScopePopped: (error: GPUError | null) => void;
  readonly onScopeFailed: () => void;

  constructor(callbacks: BatchCallbacks) {
    this.onScopePopped = (error) => callbacks.batchScopePopped(this, error);
    // A pop that rejects (a lost device) caught nothing this batch can report: loss fails it instead.
    this.onScopeFailed = () => callbacks.batchScopePopped(this, null);
  }
}
