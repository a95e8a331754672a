/**
 * A task-mode queue: a pool of worker threads that run the queue's execute operations together. The
 * threads come from the platform adapter (platform/platform.ts): worker_threads in Node, module Web
 * Workers in browsers; the protocol and the plans are the same.
 *
 * - The main thread posts each ready operation (plan ids plus resolved tables: a few numbers per slot)
 *   to every worker of the queue; plans are posted once per queue (their arrays live in a
 *   SharedArrayBuffer, so posting shares them instead of copying).
 * - Workers claim work items through the queue's control block; the worker that finishes an operation
 *   signals the queue's SharedTimelineSemaphore (payload = completed operations). The main thread
 *   registers `onReached` on it and completes operations in order; it never blocks.
 * - At most RING_SIZE operations are in flight per queue; more wait in a backlog.
 * - Workers are unref'd while the queue is idle and ref'd while operations or loads are in flight, so
 *   pending work keeps the process alive and an idle device does not.
 * - A worker that exits or crashes loses the device (the run loop's `parts.lose`), which fails all pending work
 *   with UNAVAILABLE and terminates every worker.
 */
import { ErrorCode, KeelError, type Registration, SharedTimelineSemaphore } from '@keel/fence';
import { CTL_FAILED_BASE, CTL_WORDS, RING_MASK, RING_SIZE } from './control-block';
import type { CpuExecutable } from './cpu-executable';
import { encodeExecute } from './cpu-plan';
import type { ProfileRing } from './cpu-profiler';
import type { CpuRunLoop } from './cpu-run-loop';
import type { Operation } from './operation';
import { platform } from './platform/current';
import type { WorkerThread } from './platform/platform';
import { isFromWorker, type ToWorker, type WorkerInit } from './protocol';

interface PendingLoad {
  remaining: number;
  error: KeelError | undefined;
  resolve(): void;
  reject(error: KeelError): void;
}

export class TaskQueue {
  readonly #workers: WorkerThread[] = [];
  /** Workers whose thread has not exited yet. */
  live = 0;
  readonly #control: Int32Array;
  /** @internal The queue's completion timeline (test/release.test.ts reads it). */
  declare readonly timeline: SharedTimelineSemaphore;
  #nextSeq = 0;
  #completedSeq = 0;
  readonly #inflight: (Operation | undefined)[] = new Array<Operation | undefined>(RING_SIZE);
  readonly #backlog: Operation[] = [];
  #backlogHead = 0;
  /**
   * A failed operation completes once both its completion and its 'failed' message arrived, in either
   * order: the first to arrive waits here (by seq) for the other.
   */
  readonly #halves = new Map<number, Operation | KeelError>();
  #registration: Registration | undefined;
  #armed = false;
  #armGeneration = 0;
  #busy = 0;
  readonly #loads = new Map<number, PendingLoad>();
  #terminating = false;
  #termination: Promise<void> | undefined;
  /** The timeline passed the next completion (or failed): completes in order, posts the backlog, re-arms. */
  readonly #onTimeline = (error?: KeelError): void => {
    this.#armed = false;
    this.#registration = undefined;
    if (error || this.#terminating) return;
    const reached = this.timeline.value;
    while (this.#completedSeq < reached) {
      const seq = this.#completedSeq++;
      const op = this.#inflight[seq & RING_MASK]!;
      this.#inflight[seq & RING_MASK] = undefined;
      this.#finish(op, seq);
      this.#releaseBusy();
    }
    while (this.#backlogHead < this.#backlog.length && this.#nextSeq - this.#completedSeq < RING_SIZE) {
      const op = this.#backlog[this.#backlogHead]!;
      this.#backlog[this.#backlogHead++] = undefined as unknown as Operation;
      this.#post(op);
    }
    if (this.#backlogHead === this.#backlog.length) {
      this.#backlog.length = 0;
      this.#backlogHead = 0;
    }
    this.#arm();
  };

  readonly #loop: CpuRunLoop;
  /** The last execute message posted (reused for the next one of the same size). */
  #message: Float64Array | undefined;

  declare readonly index: number;

  constructor(index: number, workerCount: number, loop: CpuRunLoop) {
    this.index = index;
    this.#loop = loop;
    const controlMemory = new SharedArrayBuffer(CTL_WORDS * 4);
    this.#control = new Int32Array(controlMemory);
    this.timeline = new SharedTimelineSemaphore(0, { label: `cpu queue ${index} completions` });
    for (let w = 0; w < workerCount; w++) {
      const init: WorkerInit = { workerIndex: w, control: controlMemory, timeline: this.timeline.handle };
      const worker = platform.spawnWorker(init, `keel-cpu q${index} w${w}`, {
        onMessage: (message: unknown) => this.#onMessage(message),
        onError: (what: string) => this.#workerDied(w, what),
        onExit: (code: number) => {
          this.live--;
          this.#workerDied(w, `exited with code ${code}`);
        },
      });
      worker.unref?.();
      this.live++;
      this.#workers.push(worker);
    }
  }

  /** Posts `message` to every worker of the queue. */
  send(message: ToWorker): void {
    if (this.#terminating) return;
    for (const worker of this.#workers) worker.postMessage(message);
  }

  #retainBusy(): void {
    if (this.#busy++ === 0) for (const worker of this.#workers) worker.ref?.();
  }

  #releaseBusy(): void {
    if (--this.#busy === 0) for (const worker of this.#workers) worker.unref?.();
  }

  #workerDied(worker: number, what: string): void {
    if (this.#terminating) return;
    this.#loop.parts.lose(
      new KeelError(ErrorCode.UNAVAILABLE, `cpu device: worker ${worker} of queue ${this.index} ${what}`),
    );
  }

  /** Imports an executable's module in every worker; rejects with the first worker's error. */
  load(executable: CpuExecutable): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#terminating) {
        reject(new KeelError(ErrorCode.UNAVAILABLE, `cpu device: queue ${this.index} is shut down`));
        return;
      }
      this.#loads.set(executable.id, { remaining: this.#workers.length, error: undefined, resolve, reject });
      this.#retainBusy();
      this.send({
        t: 'load',
        id: executable.id,
        url: executable.url,
        label: executable.label,
        names: executable.exports.map((e) => e.name),
        sizes: executable.exports.flatMap((e) => e.workgroupSize),
      });
    });
  }

  #onMessage(message: unknown): void {
    // A kernel's own message to the parent (progress, logs) is not Keel's: ignored.
    if (!isFromWorker(message)) return;
    if (message.t === 'loaded') {
      const load = this.#loads.get(message.id);
      if (!load) return;
      if (message.error && !load.error) {
        load.error = KeelError.fromStructured(message.error);
      }
      if (--load.remaining > 0) return;
      this.#loads.delete(message.id);
      this.#releaseBusy();
      if (!load.error) load.resolve();
      else load.reject(load.error);
      return;
    }
    // 'failed': arrives before or after the operation's completion.
    this.#meet(message.seq, KeelError.fromStructured(message.error));
  }

  /** One half of failed operation `seq` arrived: completes it if the other half is here. */
  #meet(seq: number, half: Operation | KeelError): void {
    const other = this.#halves.get(seq);
    if (!other) {
      this.#halves.set(seq, half);
      return;
    }
    this.#halves.delete(seq);
    if (KeelError.is(half)) this.#loop.complete(other as Operation, half);
    else this.#loop.complete(half, other);
  }

  /** Starts or stops per-dispatch timing for traces in every worker (cpu-profiler.ts). */
  setProfile(ring: ProfileRing | undefined): void {
    this.send({ t: 'profile', ring });
  }

  /** Runs an execute operation whose waits are reached. */
  execute(op: Operation): void {
    if (this.#nextSeq - this.#completedSeq >= RING_SIZE) {
      this.#backlog.push(op);
      return;
    }
    this.#post(op);
  }

  #post(op: Operation): void {
    const seq = this.#nextSeq;
    let data: Float64Array;
    try {
      data = encodeExecute(op, seq, this.#loop.parts.slabs, this.#loop.parts.device, this.#message);
    } catch (error) {
      this.#loop.complete(op, error);
      return;
    }
    // Posting copies the message: the array is reused for the next one of the same size.
    this.#message = data;
    const plans = op.plans;
    const count = op.planCount;
    const bit = 1 << this.index;
    let scratch: (Int32Array | undefined)[] | undefined;
    for (let p = 0; p < count; p++) {
      const plan = plans[p]!;
      if (!(plan.shippedTo & bit)) {
        this.send({ t: 'plan', id: plan.id, arrays: plan.arrays });
        plan.shippedTo |= bit;
      }
      if (this.#workers.length > 1 && plan.arrays.indirectCount > 0) {
        scratch ??= new Array<Int32Array | undefined>(count);
        scratch[p] = new Int32Array(new SharedArrayBuffer(16 * plan.arrays.indirectCount));
      }
    }
    this.#nextSeq = seq + 1;
    op.seq = seq;
    Atomics.store(this.#control, CTL_FAILED_BASE + (seq & RING_MASK), 0);
    this.#inflight[seq & RING_MASK] = op;
    // The common case travels as a bare Float64Array (cheapest to clone); scratch needs a wrapper.
    this.send(scratch ? { t: 'exec', data, scratch } : data);
    this.#retainBusy();
    this.#arm();
  }

  /** Registers for the next completion, unless registered already or nothing is in flight. */
  #arm(): void {
    if (this.#armed || this.#completedSeq >= this.#nextSeq || this.#terminating) return;
    this.#armed = true;
    const generation = ++this.#armGeneration;
    const registration = this.timeline.onReached(this.#completedSeq + 1, this.#onTimeline);
    // The callback may have run (and re-armed) inside onReached: keep only a registration still pending.
    if (this.#armed && this.#armGeneration === generation) this.#registration = registration;
  }

  #finish(op: Operation, seq: number): void {
    const plans = op.plans;
    for (let p = 0; p < op.planCount; p++) {
      const plan = plans[p]!;
      if (plan.oneShot) this.send({ t: 'plan-free', id: plan.id });
    }
    if (Atomics.load(this.#control, CTL_FAILED_BASE + (seq & RING_MASK)) === 0) this.#loop.complete(op);
    else this.#meet(seq, op);
  }

  /**
   * Terminates the workers; pending loads reject with `reason` (the device fails the operations).
   * Idempotent: later calls return the first call's promise, which resolves once every thread exited.
   */
  terminate(reason: KeelError): Promise<void> {
    this.#termination ??= this.#doTerminate(reason);
    return this.#termination;
  }

  async #doTerminate(reason: KeelError): Promise<void> {
    this.#terminating = true;
    this.#registration?.cancel();
    this.#registration = undefined;
    this.#armed = false;
    for (const load of this.#loads.values()) load.reject(reason);
    this.#loads.clear();
    this.#halves.clear();
    this.#backlog.length = 0;
    this.#inflight.fill(undefined);
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}
