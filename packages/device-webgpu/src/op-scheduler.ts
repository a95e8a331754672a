/**
 * When queue operations of the WebGPU device run, and when their signals are signalled.
 *
 * Readiness. An operation runs (is encoded into the open submission batch) once each wait timepoint is
 * either reached, or GPU-ordered: promised by work this device already encoded or submitted, whose
 * completion needs nothing but the GPU (commands of one encoder, and a queue's submissions, run in
 * order, so work encoded later sees its results). Operations with GPU work (execute, fill, update,
 * copy, read, write) may run on GPU-ordered waits; host calls wait for their timepoints to be reached.
 * Signals of execute, fill, update, copy and write become GPU-ordered when they are encoded; those of
 * reads and host calls (which touch host memory or run host code) only when actually signalled. A
 * barrier runs when its waits are reached, but its signal is GPU-ordered as soon as its waits are;
 * `markOrdered` lets the device do the same for allocas and deallocas. What is reached or GPU-ordered
 * is kept by gpu-order.ts.
 *
 * Deferral. An operation that is not ready is deferred, never blocked: it registers on its wait fence
 * (promise-free `onReached`) and runs when the fence is reached, or earlier when another operation
 * makes its waits GPU-ordered (the deferred set is re-checked after each such operation).
 *
 * Batching. Operations that run in one synchronous turn are encoded, in the order they run, into one
 * submission batch (submit-batch.ts): one GPUCommandEncoder, one `queue.submit`. The batch is
 * submitted by a microtask queued when it opens, by `flush()` (the device's `flush(affinity)`, and
 * before it destroys a buffer), and before an update, whose `queue.writeBuffer` runs ahead of every
 * encoder not yet submitted. GPU order is thus what it was with one submission per operation. (Writes
 * whose staging regions pass the cap submit part of the batch early, within its error scopes:
 * op-runner.ts.)
 *
 * Completion. Submitted operations queue in submission order (inflight-ring.ts); one
 * `onSubmittedWorkDone` per batch, requested right after its submit, completes every operation
 * submitted before it. A read completes when its staging buffer is mapped (requested after the
 * submit) and copied out (a write's staging needs nothing at completion: write-staging.ts). An operation that ran on GPU-ordered waits signals only after those waits
 * are reached, and checks them first: if one failed, its signals fail with ABORTED (cause: the
 * failure) instead (its GPU effects on device memory are then undefined; host memory is not touched:
 * a read copies out only once its waits are reached).
 *
 * Undeliverable failures. An operation's failure that none of its signal timepoints can deliver (no
 * signal fence, values already passed, semaphores already failed) goes to the device's reporter
 * (`onUnhandledFailure`; hal's failOperation decides, as for every device): not ABORTED propagation,
 * and nothing once the device is lost or destroyed.
 *
 * GPU errors. WebGPU error scopes (internal, out-of-memory, validation) are Keel's only while Keel's
 * code runs (submit-batch.ts): pushed around the batch's submit (three `popErrorScope`s per batch, not
 * per operation), and around an operation's encoding only when it makes a WebGPU call that reports
 * errors at once (a bind group or buffer it creates, a `writeBuffer` that can fail). A GPUError they
 * catch fails the signal of every operation of the batch as a KeelError (gpu-errors.ts):
 * WebGPU drops a command buffer that fails validation whole, so none of them ran. An operation
 * completes, and its record is recycled, only once its batch's scopes were popped. An operation whose
 * encoding throws fails alone when it encoded nothing (replay plans check their bindings first); if it
 * had (an unforeseen error), the batch is dropped and the others fail with ABORTED (cause: the error).
 * No scope of Keel's is open between two of its calls, so a caller's own WebGPU calls on a GPUDevice
 * shared with Keel, in the same turn, reach the caller's scopes or uncaptured-error handler.
 *
 * Loss. `failAll` fails the signals of every deferred, batched, in-flight and future operation
 * (UNAVAILABLE when the device is lost or destroyed), traced ones reporting to their trace first. A read whose staging buffer is still being mapped
 * keeps it until the map settles; `whenSettled()` resolves once no map, completion request or scope
 * pop is pending, so the device can destroy buffers and the GPUDevice with nothing in flight.
 * A map can fail of a loss before `lost` settles (a browser's `destroy()` unmaps every buffer at once;
 * `lost` settles a round trip later): the read then awaits an `onSubmittedWorkDone` requested after
 * the failure, which settles after `lost` on a lost device (failAll fails the read with the loss) and
 * once the queue is idle on a live one (the read fails with the map's error). No timer.
 *
 * This file is the state machine of an operation (the record's state, its waits, its batch), which ties
 * readiness, deferral, completion and failure together. The parts that stand alone live beside it:
 * which timepoints are reached or GPU-ordered (gpu-order.ts), submission batches and their error scopes
 * (submit-batch.ts), the in-flight ring (inflight-ring.ts), the operation record (queue-op.ts), running
 * a host call's callback (host-call.ts) and GPU errors as Keel errors (gpu-errors.ts).
 */
import { ErrorCode, type Fence, KeelError } from '@keel/fence';
import {
  abortedBy,
  failOperation,
  failTimepoints,
  RecordPool,
  signalPendingTimepoints,
  thrownBy,
  traceNow,
  type UnhandledFailureReport,
} from '@keel/hal/driver';
import { describeError, type ErrorScopes, fromGpuError } from './gpu-errors';
import { GpuOrder, Wait } from './gpu-order';
import { runHostCall } from './host-call';
import { InflightRing } from './inflight-ring';
import { IdleLatch } from './pending-work';
import { AfterScopes, OpKind, QueueOp, runsOnGpuOrder, signalsOnGpuOrder } from './queue-op';
import { type BatchEncoder, Batcher, type BatchHost } from './submit-batch';

/** What the device does to run operations: encode them into a batch and submit it (op-runner.ts). */
export interface OpRunner extends BatchEncoder {
  /** Encodes `op` into the open batch; throws a KeelError to fail it. */
  encode(op: QueueOp): void;
  /** After `encode` threw: whether the operation had encoded commands into the batch. */
  readonly touched: boolean;
  /** A traced execute's batch was submitted. */
  profileSubmitted(op: QueueOp): void;
  /** Copies a mapped read's bytes out (after the staging buffer was mapped). */
  finishRead(op: QueueOp): void;
  /**
   * Gives an operation's readback staging buffer back (a read's or an execute's indirect record,
   * mapped or not). Does nothing for an operation without one. `discard`: the operation's batch failed
   * on the GPU or its map failed, so the buffer may be the invalid one (a creation that ran out of
   * memory): destroy it rather than keep it for later reads.
   */
  releaseStaging(op: QueueOp, discard?: boolean): void;
  /** A write's batch failed on the GPU: later writes stage into a new buffer. */
  writeFailed(): void;
  /** A traced operation (`op.trace` set) completed, or failed with `error`. */
  traceDone(op: QueueOp, error: unknown): void;
}

function report(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

export class OpScheduler implements BatchHost {
  readonly #runner: OpRunner;
  /** Names the device in messages of GPU errors ("webgpu device '…'"). */
  readonly #label: string;
  /** Hears of failures no signal timepoint could deliver (the device's `onUnhandledFailure`). */
  readonly #reportUnhandled: UnhandledFailureReport;
  /** The open submission batch, and batches whose error scopes are being popped. */
  readonly #batcher: Batcher;
  /** What is reached or GPU-ordered (gpu-order.ts); its `failure`: what the last FAILED check found. */
  readonly #order = new GpuOrder();
  /** The scheduler's records (hal/driver RecordPool; callbacks bound once per record by #create). */
  readonly #records = new RecordPool<QueueOp>(() => this.#create());
  readonly #deferred = new Set<QueueOp>();
  #rechecking = false;
  #recheckAgain = false;
  /** The failure that ends everything (device lost or destroyed). */
  #lost: KeelError | undefined;
  /** Submitted operations awaiting onSubmittedWorkDone, in order. */
  readonly #inflight: InflightRing;
  /** Reads waiting for their staging buffers, and host calls running. */
  readonly #outside = new Set<QueueOp>();
  /** Called whenever the number of deferred operations drops to zero. */
  onIdle: (() => void) | undefined;
  /** Reads' `mapAsync` calls not settled yet (settled or not, they are counted until their callback). */
  #mapsPending = 0;
  /** `onSubmittedWorkDone` requests of failed maps (#mapFailed) not settled yet. */
  #lossChecks = 0;
  readonly #queue: GPUQueue;
  /** Resolves `whenSettled()`'s promise once nothing is pending on the GPU side. */
  readonly #idle = new IdleLatch(() => this.gpuPending);

  constructor(
    runner: OpRunner,
    device: GPUDevice,
    scopes: ErrorScopes,
    label: string,
    reportUnhandled: UnhandledFailureReport,
  ) {
    this.#runner = runner;
    this.#label = label;
    this.#reportUnhandled = reportUnhandled;
    this.#queue = device.queue;
    this.#batcher = new Batcher(device, scopes, runner, this);
    this.#inflight = new InflightRing(
      device.queue,
      (op) => this.#gpuDone(op),
      () => this.#idle.check(),
    );
  }

  /** "webgpu device '…' queueFill": how messages name `op` (failure paths only: builds a string). */
  #what(op: QueueOp): string {
    return `${this.#label} ${op.method}`;
  }

  /** A KeelError `code` naming `op`: `rule`, then the cause's message in parentheses. */
  #error(code: ErrorCode, op: QueueOp, rule: string, cause: unknown): KeelError {
    return new KeelError(code, `${this.#what(op)}: ${rule} (${describeError(cause)})`, { cause });
  }

  /** Operations not yet completed (deferred, batched, in flight, reading back, running host code). */
  get pendingCount(): number {
    return this.#deferred.size + this.#batcher.openCount + this.#inflight.count + this.#outside.size;
  }

  get deferredCount(): number {
    return this.#deferred.size;
  }

  /** `popErrorScope` calls made for submission batches. */
  get scopePops(): number {
    return this.#batcher.scopePops;
  }

  /** Promises of the GPU not settled yet: reads' `mapAsync` and `onSubmittedWorkDone` requests. */
  get gpuPending(): number {
    return this.#mapsPending + this.#lossChecks + this.#inflight.requests + this.#batcher.scopesPending;
  }

  /**
   * Resolves once every `mapAsync` and `onSubmittedWorkDone` this scheduler started has settled (after
   * `failAll`, nothing new starts). The device awaits it before destroying buffers and the GPUDevice:
   * Dawn crashes or hangs when a buffer with a pending map and its device are destroyed and collected.
   */
  whenSettled(): Promise<void> {
    return this.#idle.whenIdle();
  }

  /** A pooled record, reset. */
  acquire(kind: OpKind, queue: number, wait: Fence, signal: Fence): QueueOp {
    return this.#records.acquire(kind, queue, wait, signal);
  }

  /**
   * A new record, its callbacks bound once (records are pooled: the hot path allocates no closure).
   * Every record gets them in the same order, so records share one shape.
   */
  #create(): QueueOp {
    const op = new QueueOp();
    op.onWaitReached = (error) => this.#waitReached(op, error);
    op.onSettled = () => this.#settled(op);
    op.onMapped = () => this.#mapped(op);
    op.onMapFailed = (error) => this.#mapFailed(op, error);
    op.onLossChecked = () => this.#lossChecked(op);
    op.runHostCall = () => this.#runHostCall(op);
    op.onHostCallDone = () => this.#hostCallDone(op);
    op.onHostCallFailed = (error) => this.#hostCallFailed(op, error);
    return op;
  }

  #recycle(op: QueueOp): void {
    if (op.batch !== undefined) {
      op.afterScopes = AfterScopes.RECYCLE;
      return;
    }
    // After failAll the pool is closed: the record is reset and left to the garbage collector.
    this.#records.release(op);
  }

  /** True when every timepoint of `wait` is reached or GPU-ordered (and none failed). */
  isOrdered(wait: Fence): boolean {
    const state = this.#order.check(wait, true);
    return state === Wait.READY || state === Wait.ORDERED;
  }

  /** Records that work already submitted (or nothing at all) will signal `signal`. */
  markOrdered(signal: Fence): void {
    this.#order.mark(signal);
    if (this.#deferred.size > 0) this.#recheck();
  }

  /**
   * Runs `op` now if ready, else defers it (`prepareDefer` is called first, to copy what the caller may
   * change, e.g. a binding table array). Never throws: failures go to the op's signal.
   */
  issue(op: QueueOp, prepareDefer?: (op: QueueOp) => void): void {
    if (this.#lost !== undefined) {
      this.#finish(op, this.#lost);
      return;
    }
    const order = this.#order;
    const state = order.check(op.wait, runsOnGpuOrder(op.kind));
    if (state === Wait.FAILED) {
      this.#finish(op, abortedBy(order.failure, this.#what(op)));
      order.failure = undefined;
      return;
    }
    if (state === Wait.READY || state === Wait.ORDERED) {
      this.#run(op, state === Wait.ORDERED);
      return;
    }
    prepareDefer?.(op);
    op.deferred = true;
    this.#deferred.add(op);
    const registration = op.wait.onReached(op.onWaitReached);
    if (op.deferred) {
      op.registration = registration;
      // A barrier adds nothing: once its waits are GPU-ordered, so is its signal.
      if (op.kind === OpKind.BARRIER && this.isOrdered(op.wait)) this.markOrdered(op.signal);
    }
  }

  #waitReached(op: QueueOp, error: KeelError | undefined): void {
    if (!op.deferred) return;
    this.#undefer(op);
    if (error !== undefined) {
      this.#finish(op, abortedBy(error, this.#what(op)));
    } else {
      this.#run(op, false);
    }
    this.#checkIdle();
  }

  #undefer(op: QueueOp): void {
    op.deferred = false;
    op.registration?.cancel();
    op.registration = undefined;
    this.#deferred.delete(op);
  }

  /** Tells the device when nothing is deferred any more (after the last deferred op was submitted). */
  #checkIdle(): void {
    if (this.#deferred.size === 0) this.onIdle?.();
  }

  /** Runs deferred operations whose waits became GPU-ordered. */
  #recheck(): void {
    if (this.#rechecking) {
      this.#recheckAgain = true;
      return;
    }
    this.#rechecking = true;
    try {
      do {
        this.#recheckAgain = false;
        for (const op of this.#deferred) {
          if (!runsOnGpuOrder(op.kind)) continue;
          const state = this.#order.check(op.wait, true);
          if (state === Wait.READY || state === Wait.ORDERED) {
            this.#undefer(op);
            this.#run(op, state === Wait.ORDERED);
          }
        }
      } while (this.#recheckAgain && this.#deferred.size > 0);
    } finally {
      this.#rechecking = false;
    }
    this.#checkIdle();
  }

  /** Runs `op`; `early`: some wait timepoint is only GPU-ordered, not reached (checked at completion). */
  #run(op: QueueOp, early: boolean): void {
    if (op.trace !== undefined) op.traceStarted = traceNow();
    op.early = early;
    if (op.kind === OpKind.HOST_CALL) {
      this.#outside.add(op);
      queueMicrotask(op.runHostCall);
      return;
    }
    if (op.kind === OpKind.BARRIER) {
      this.#finish(op, undefined);
      return;
    }
    // queue.writeBuffer runs ahead of every encoder not submitted yet: an update goes into a new batch.
    if (op.kind === OpKind.UPDATE) this.#batcher.flush();
    const batcher = this.#batcher;
    batcher.current();
    batcher.beginSpan();
    try {
      this.#runner.encode(op);
    } catch (error) {
      batcher.endSpan();
      // Commands of `op` in the batch's encoder cannot be taken out: the whole batch is dropped.
      if (this.#runner.touched) batcher.drop(error);
      this.#runner.releaseStaging(op);
      this.#finish(op, error);
      return;
    }
    batcher.add(op);
    batcher.endSpan();
    if (signalsOnGpuOrder(op.kind)) this.markOrdered(op.signal);
  }

  /** Submits the operations encoded so far in this turn now (one `queue.submit`), if any. */
  flush(): void {
    this.#batcher.flush();
  }

  /** BatchHost: a batch was submitted; reads map their staging buffers, the others await the GPU. */
  submitted(ops: readonly QueueOp[]): void {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as QueueOp;
      if (op.profile !== undefined) this.#runner.profileSubmitted(op);
      // A read, or an execute whose indirect counts were validated: its staging buffer is mapped first.
      if (op.staging !== undefined) {
        this.#outside.add(op);
        this.#mapsPending++;
        op.mapping = true;
        (op.staging as GPUBuffer)
          .mapAsync(1 /* GPUMapMode.READ */, 0, op.stagingSize)
          .then(op.onMapped, op.onMapFailed);
      } else {
        this.#inflight.push(op);
      }
    }
    this.#inflight.arm();
  }

  /** BatchHost: `op`'s batch was dropped because another operation's encoding failed (or the submit threw). */
  dropped(op: QueueOp, error: unknown): void {
    this.#runner.releaseStaging(op);
    this.#finish(
      op,
      this.#error(ErrorCode.ABORTED, op, 'not submitted: its submission batch was dropped', error),
    );
  }

  /** BatchHost: the scopes of `op`'s batch were popped. */
  scopesPopped(op: QueueOp, gpuError: GPUError | undefined, size: number): void {
    if (gpuError !== undefined) {
      op.gpuError = gpuError;
      op.batchSize = size;
      if (op.kind === OpKind.WRITE) this.#runner.writeFailed();
    }
    const after = op.afterScopes;
    op.afterScopes = AfterScopes.NOTHING;
    if (after === AfterScopes.COMPLETE) this.#complete(op);
    else if (after === AfterScopes.RECYCLE) this.#recycle(op);
  }

  popSettled(): void {
    this.#idle.check();
  }

  // --- completion -------------------------------------------------------------------------------------

  /**
   * The GPU work of `op` is done. An operation that ran on GPU-ordered waits signals only once those
   * are reached (a read's staging buffer completes before the work it waited on is signalled, say).
   */
  #gpuDone(op: QueueOp): void {
    if (op.early && this.#order.check(op.wait, false) === Wait.PENDING) {
      this.#outside.add(op);
      const registration = op.wait.onReached(op.onSettled);
      if (this.#outside.has(op)) op.registration = registration;
      return;
    }
    this.#complete(op);
  }

  #settled(op: QueueOp): void {
    if (!this.#outside.delete(op)) return;
    op.registration = undefined;
    this.#complete(op);
  }

  /** Signals `op`'s signal (or fails it when a wait failed), finishing a read first, and recycles it. */
  #complete(op: QueueOp): void {
    if (op.batch !== undefined) {
      op.afterScopes = AfterScopes.COMPLETE;
      return;
    }
    let error: unknown = this.#lost;
    if (error === undefined && op.gpuError !== undefined) {
      error = fromGpuError(op.gpuError, this.#what(op), op.batchSize);
    }
    const order = this.#order;
    if (error === undefined && op.early && order.check(op.wait, false) === Wait.FAILED) {
      error = abortedBy(order.failure, this.#what(op));
      order.failure = undefined;
    }
    if (op.staging !== undefined || op.kind === OpKind.READ) {
      if (error === undefined) {
        try {
          this.#runner.finishRead(op);
        } catch (thrown) {
          error = thrown;
        }
      }
      this.#runner.releaseStaging(op, op.gpuError !== undefined);
    }
    this.#finish(op, error);
  }

  /**
   * Signals `op`'s signal, or fails it with `error` (reporting a failure no timepoint could deliver),
   * and recycles it.
   */
  #finish(op: QueueOp, error: unknown): void {
    if (op.trace !== undefined) this.#runner.traceDone(op, error);
    const thrown =
      error === undefined
        ? signalPendingTimepoints(op.signal)
        : failOperation(
            op.signal,
            error,
            this.#what(op),
            this.#lost === undefined ? this.#reportUnhandled : undefined,
          );
    if (thrown !== undefined) report(thrown);
    this.#recycle(op);
  }

  /** A read's map settled after `failAll` failed it: its staging buffer can go now. */
  #mapSettled(op: QueueOp): boolean {
    this.#mapsPending--;
    op.mapping = false;
    if (this.#outside.delete(op)) return true;
    this.#runner.releaseStaging(op);
    this.#idle.check();
    return false;
  }

  #mapped(op: QueueOp): void {
    if (!this.#mapSettled(op)) return;
    this.#gpuDone(op);
  }

  /** The map failed: a loss (known, or not yet reported: § Loss) fails `op`, or the map's failure. */
  #mapFailed(op: QueueOp, error: unknown): void {
    if (!this.#mapSettled(op)) return;
    this.#runner.releaseStaging(op, true);
    if (this.#lost !== undefined) {
      this.#finish(op, this.#lost);
      return;
    }
    // Kept among the pending operations: a loss reported meanwhile fails it (failAll).
    this.#outside.add(op);
    op.mapError = error;
    this.#lossChecks++;
    this.#queue.onSubmittedWorkDone().then(op.onLossChecked, op.onLossChecked);
  }

  #lossChecked(op: QueueOp): void {
    this.#lossChecks--;
    const error = op.mapError;
    op.mapError = undefined;
    if (this.#outside.delete(op)) {
      this.#finish(op, this.#error(ErrorCode.UNAVAILABLE, op, 'mapping the staging buffer failed', error));
    }
    this.#idle.check();
  }

  /** A host call's microtask: runs its callback (host-call.ts) unless a loss failed it meanwhile. */
  #runHostCall(op: QueueOp): void {
    if (this.#outside.has(op)) runHostCall(op);
  }

  #hostCallDone(op: QueueOp): void {
    if (!this.#outside.delete(op)) return;
    this.#finish(op, undefined);
  }

  #hostCallFailed(op: QueueOp, error: unknown): void {
    if (!this.#outside.delete(op)) return;
    // A throw never reads as success (`throw undefined` included); the failure names the operation.
    this.#finish(op, thrownBy(error, this.#what(op)));
  }

  // --- loss ----------------------------------------------------------------------------------------------

  /**
   * Fails every pending and future operation with `error` (a traced one reports its failure to its
   * trace first, as every completion does). Idempotent (the first error stays).
   */
  failAll(error: KeelError): void {
    if (this.#lost !== undefined) return;
    this.#lost = error;
    const toFail: QueueOp[] = [];
    const drop = (op: QueueOp): void => {
      toFail.push(op);
      this.#runner.releaseStaging(op);
    };
    // The open batch is dropped (its scopes are still popped: the scope stack is the GPUDevice's).
    this.#batcher.stop(drop);
    for (const op of this.#deferred) {
      op.deferred = false;
      op.registration?.cancel();
      toFail.push(op);
    }
    this.#deferred.clear();
    this.#inflight.stop(drop);
    for (const op of this.#outside) {
      op.registration?.cancel();
      op.registration = undefined;
      toFail.push(op);
      // A read whose staging buffer is still being mapped keeps it until the map settles (#mapSettled).
      if (!op.mapping) this.#runner.releaseStaging(op);
    }
    this.#outside.clear();
    this.#records.close();
    for (const op of toFail) {
      if (op.trace !== undefined) this.#runner.traceDone(op, error);
      const thrown = failTimepoints(op.signal, error);
      if (thrown !== undefined) report(thrown);
    }
    this.onIdle?.();
  }
}
