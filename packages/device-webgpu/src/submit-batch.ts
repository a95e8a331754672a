/**
 * Submission batches of the WebGPU device (op-scheduler.ts § Batching): the queue operations that
 * become runnable in one synchronous turn (or until a flush) are encoded into one GPUCommandEncoder and
 * submitted with one `queue.submit`.
 *
 * Error scopes (gpu-errors.ts ErrorScopes) are Keel's only while Keel's own code runs: a span is the
 * encoding of one operation (`runSpan`/`endSpan` around it) or the batch's submit. The submit's span
 * always pushes the scopes (three `popErrorScope`s per batch: encoder commands report their errors at
 * `finish()`, inside it); an operation's span pushes them only if its encoding makes a WebGPU call that
 * reports errors at once (a bind group or buffer created, a `writeBuffer` that can fail), and their
 * pops count for the batch too. Nothing Keel pushes stays on the GPUDevice's scope stack between two
 * of Keel's calls, so a caller's own WebGPU calls on a shared GPUDevice, made in the same turn, reach
 * the caller's scopes or uncaptured-error handler, never Keel's batch.
 *
 * A batch record keeps its operations until every scope popped for it settled, because a GPUError
 * they catch fails every one of them (WebGPU drops a command buffer that fails validation whole: none
 * of its operations ran). A batch is flushed by a microtask queued when it opens, or earlier by
 * `flush`. Records are pooled and their pop callbacks bound once, so a warm batch allocates nothing.
 */
import { ERROR_SCOPES, type ErrorScopes } from './gpu-errors';
import type { QueueOp } from './queue-op';

/** One batch: its operations in encoding order, and its error scopes' results. */
export class SubmitBatch {
  readonly ops: QueueOp[] = [];
  /** Error scope pops not settled yet. */
  scopes = 0;
  /** The first GPUError its scopes caught. */
  gpuError: GPUError | undefined;
  /** Submitted, dropped or stopped: its operations settle once `scopes` is back to 0. */
  closed = false;
  // Bound once by the batcher that creates it (declared only: no class-field definitions besides).
  declare onScopePopped: (error: GPUError | null) => void;
  declare onScopeFailed: () => void;
}

/** What the batcher needs from the encoder side (the op runner). */
export interface BatchEncoder {
  /** Opens a command encoder. */
  begin(): void;
  /** Submits the open encoder (throws when WebGPU throws; the encoder is then dropped). */
  submit(): void;
  /** Drops the open encoder. */
  abandon(): void;
}

/** What the batcher tells the scheduler. */
export interface BatchHost {
  /** A batch was submitted: start its operations' completion. */
  submitted(ops: readonly QueueOp[]): void;
  /**
   * The scopes of `op`'s batch were popped (`gpuError`: what they caught, and `size`: how many
   * operations the batch held).
   */
  scopesPopped(op: QueueOp, gpuError: GPUError | undefined, size: number): void;
  /** `op`'s batch was dropped (not submitted) because of `error`. */
  dropped(op: QueueOp, error: unknown): void;
  /** A scope pop settled (the scheduler checks whether anything is left pending). */
  popSettled(): void;
}

export class Batcher {
  readonly #device: GPUDevice;
  readonly #scopes: ErrorScopes;
  readonly #encoder: BatchEncoder;
  readonly #host: BatchHost;
  #batch: SubmitBatch | undefined;
  readonly #pool: SubmitBatch[] = [];
  #flushScheduled = false;
  readonly #flushTask = (): void => {
    this.#flushScheduled = false;
    this.flush();
  };
  /** Error scope pops not settled yet. */
  scopesPending = 0;
  /** `popErrorScope` calls made. */
  scopePops = 0;
  #stopped = false;

  constructor(device: GPUDevice, scopes: ErrorScopes, encoder: BatchEncoder, host: BatchHost) {
    this.#device = device;
    this.#scopes = scopes;
    this.#encoder = encoder;
    this.#host = host;
  }

  /** Operations in the open batch (encoded, not submitted yet). */
  get openCount(): number {
    return this.#batch === undefined ? 0 : this.#batch.ops.length;
  }

  /** The open batch, opened (encoder, flush task) when none is. */
  current(): SubmitBatch {
    const open = this.#batch;
    if (open !== undefined) return open;
    const batch = this.#pool.pop() ?? this.#create();
    batch.closed = false;
    this.#batch = batch;
    this.#encoder.begin();
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushTask);
    }
    return batch;
  }

  /** Adds an encoded operation to the open batch. */
  add(op: QueueOp): void {
    const batch = this.#batch as SubmitBatch;
    op.batch = batch;
    batch.ops.push(op);
  }

  /** Starts the span of an operation's encoding into the open batch (ErrorScopes push on demand). */
  beginSpan(): void {
    this.#scopes.armed = true;
  }

  /**
   * Ends the running span: the scopes it pushed are popped, their results counted for `batch` (the
   * open one by default): a GPUError caught there fails the batch's operations.
   */
  endSpan(batch: SubmitBatch | undefined = this.#batch): void {
    const scopes = this.#scopes;
    scopes.armed = false;
    if (!scopes.pushed) return;
    scopes.pushed = false;
    if (batch !== undefined) {
      this.#pop(batch);
    } else {
      // No batch to fail (not expected): the scopes are still popped, so the stack stays balanced.
      for (let i = 0; i < ERROR_SCOPES.length; i++) this.#device.popErrorScope().catch(() => {});
    }
  }

  /**
   * Submits the open batch, if any, inside a span of its own (its scopes always pushed: the encoder's
   * errors surface at `finish()`), hands its operations to the host (which maps the reads' staging
   * buffers) and pops the scopes.
   */
  flush(): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    const scopes = this.#scopes;
    scopes.armed = true;
    scopes.enter();
    try {
      this.#encoder.submit();
    } catch (error) {
      this.drop(error);
      return;
    }
    this.#batch = undefined;
    batch.closed = true;
    // Inside the span: the reads' `mapAsync` calls report validation errors at once (a staging buffer
    // whose creation failed), and those belong to the batch, not to the uncaptured-error handler.
    this.#host.submitted(batch.ops);
    this.endSpan(batch);
  }

  /** Drops the open batch (nothing of it is submitted): each of its operations goes to `dropped`. */
  drop(error: unknown): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#encoder.abandon();
    this.#batch = undefined;
    this.#close(batch);
    const ops = batch.ops;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as QueueOp;
      op.batch = undefined;
      this.#host.dropped(op, error);
    }
    ops.length = 0;
  }

  /** For good (device lost or destroyed): drops the open batch, calling `visit` on its operations. */
  stop(visit: (op: QueueOp) => void): void {
    this.#stopped = true;
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#encoder.abandon();
    this.#batch = undefined;
    this.#close(batch);
    for (const op of batch.ops) visit(op);
    batch.ops.length = 0;
  }

  /**
   * Closes a batch that is not submitted: a running span's scopes are popped for it, and one more set is
   * pushed and popped at once, so the batch settles (and its record returns to the pool) the way a
   * submitted one does: after its pops.
   */
  #close(batch: SubmitBatch): void {
    const scopes = this.#scopes;
    scopes.armed = true;
    scopes.enter();
    this.endSpan(batch);
    batch.closed = true;
  }

  /** A new batch record, its pop callbacks bound once (records are pooled). */
  #create(): SubmitBatch {
    const batch = new SubmitBatch();
    batch.onScopePopped = (error) => this.#scopePopped(batch, error);
    // A pop that rejects (a lost device) caught nothing this batch can report: loss fails it instead.
    batch.onScopeFailed = () => this.#scopePopped(batch, null);
    return batch;
  }

  #pop(batch: SubmitBatch): void {
    const device = this.#device;
    for (let i = 0; i < ERROR_SCOPES.length; i++) {
      batch.scopes++;
      this.scopesPending++;
      this.scopePops++;
      device.popErrorScope().then(batch.onScopePopped, batch.onScopeFailed);
    }
  }

  /** One of `batch`'s scopes was popped (`error` null when it caught nothing). */
  #scopePopped(batch: SubmitBatch, error: GPUError | null): void {
    this.scopesPending--;
    batch.scopes--;
    if (error !== null && error !== undefined && batch.gpuError === undefined) batch.gpuError = error;
    if (batch.scopes === 0 && batch.closed) {
      const gpuError = batch.gpuError;
      const ops = batch.ops;
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i] as QueueOp;
        op.batch = undefined;
        this.#host.scopesPopped(op, gpuError, ops.length);
      }
      ops.length = 0;
      batch.gpuError = undefined;
      if (!this.#stopped) this.#pool.push(batch);
    }
    this.#host.popSettled();
  }
}
