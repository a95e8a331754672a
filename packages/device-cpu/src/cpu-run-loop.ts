/**
 * The CPU device's run loop: every queue operation after the queue front checked it. An operation
 * waits for its wait fence with the promise-free `onReached`; ready operations go through one run
 * list (hal/driver RunList, a trampoline), so chains of operations completed inside one `signal` never
 * recurse deeply. Transfers, barriers and host calls run here on the main thread; executes go to the
 * selected queue's workers (task mode, task-queue.ts) or run inline (sync mode, sync-queue.ts).
 * Completion releases the buffers the operation retained, then signals its signal fence (timepoints
 * already reached are skipped) or fails it with the operation's error (hal/driver completeSignal).
 * A worker's death reaches the device through `parts.lose`.
 */
import type { KeelError } from '@keel/fence';
import { abortedBy, completeSignal, OpKind, RunList, thrownBy, traceNow } from '@keel/hal/driver';
import { copyBytes, fillBytes } from './byte-ops';
import { resolvedLength, resolveTableInto } from './cpu-plan';
import type { KernelNamer, ProfileReader } from './cpu-profiler';
import { isThenable, type PlanRuntime, planRuntime } from './executor';
import { type Operation, type OperationSink, OperationState } from './operation';
import type { SlabTable } from './slab-table';
import type { SyncQueue } from './sync-queue';
import type { TaskQueue } from './task-queue';

/** What the run loop is given by its device. */
export interface RunLoopParts {
  /** The device's display name (warnings). */
  readonly name: string;
  /** The device (buffers in binding tables must belong to it). */
  readonly device: object;
  readonly slabs: SlabTable;
  /** Reports a failure no signal timepoint could deliver (the device's onUnhandledFailure). */
  readonly report: (error: unknown, operation: string) => void;
  /** A worker died: the device is lost. */
  readonly lose: (reason: KeelError) => void;
}

export class CpuRunLoop implements OperationSink {
  /** Task mode: one queue of workers per device queue (empty in sync mode). */
  readonly tasks: TaskQueue[] = [];
  /** Sync mode: one inline queue per device queue (empty in task mode). */
  readonly syncQueues: SyncQueue<Operation>[] = [];
  /** Per queue: the reader of its dispatch profile ring, made at the first trace with dispatch times. */
  readonly profiles: (ProfileReader | undefined)[] = [];
  /** A trace with dispatch times records (set by the device): profile rings stay written. */
  profiling = false;
  /** Names kernels in trace events (set by the device). */
  namer: KernelNamer | undefined;
  /** Operations not completed yet. */
  readonly #pending = new Set<Operation>();
  /** Operations whose waits were reached, run in order by one trampoline. */
  readonly #ready = new RunList<Operation>((op) => this.#runReady(op));
  #warnedSemaphore = false;
  /** Set by the device once it is destroyed or lost: failures then are not reported. */
  gone = false;

  declare readonly parts: RunLoopParts;

  constructor(parts: RunLoopParts) {
    this.parts = parts;
  }

  /** The device is destroyed or lost: fails every pending operation with `reason`, unreported. */
  failPending(reason: KeelError): void {
    this.gone = true;
    for (const queue of this.syncQueues) queue.stop();
    for (const op of [...this.#pending]) this.complete(op, reason);
  }

  /**
   * Stops the writing of queue `queue`'s profile ring unless an execute of a trace with dispatch times
   * is still pending on it (that execute's completion calls this again). Called when such a trace
   * stops and, after that, when such an execute completes: never on an untraced path.
   */
  pauseProfile(queue: number): void {
    const reader = this.profiles[queue];
    if (!reader?.writing) return;
    for (const op of this.#pending) {
      if (op.queue === queue && op.kind === OpKind.EXECUTE && op.trace?.dispatches) return;
    }
    reader.pause();
  }

  /** Tracks `op` and registers it on its wait fence. */
  enqueue(op: Operation): void {
    this.#pending.add(op);
    const registration = op.wait.onReached(op.onReady);
    if (op.state === OperationState.WAITING) op.registration = registration;
  }

  /** OperationSink: the wait of `op` was reached (or failed). */
  operationReady(op: Operation, error: KeelError | undefined): void {
    if (op.state !== OperationState.WAITING) return;
    op.registration = undefined;
    if (error) {
      this.complete(op, abortedBy(error, op.name));
      return;
    }
    op.state = OperationState.READY;
    if (op.trace) op.traceStarted = traceNow();
    this.#ready.push(op);
  }

  #runReady(op: Operation): void {
    if (op.state !== OperationState.READY) return;
    op.state = OperationState.RUNNING;
    try {
      this.#run(op);
    } catch (error) {
      // A throw never reads as success (`throw undefined` included); the failure names the operation.
      this.complete(op, thrownBy(error, op.name));
    }
  }

  #run(op: Operation): void {
    switch (op.kind) {
      case OpKind.HOST_CALL:
        this.#runHostCall(op);
        return;
      case OpKind.EXECUTE:
        if (this.tasks.length) this.tasks[op.queue]!.execute(op);
        else this.#runSync(op);
        return;
      case OpKind.FILL: {
        const target = op.target!.resolve(op.name);
        fillBytes(target.memory, target.offset + op.targetOffset, op.length, op.pattern, op.patternLength);
        break;
      }
      case OpKind.UPDATE:
      case OpKind.WRITE: {
        const target = op.target!.resolve(op.name);
        new Uint8Array(target.memory, target.offset + op.targetOffset, op.length).set(op.bytes!);
        break;
      }
      case OpKind.COPY: {
        const source = op.source!.resolve(op.name);
        const target = op.target!.resolve(op.name);
        copyBytes(
          source.memory,
          source.offset + op.sourceOffset,
          target.memory,
          target.offset + op.targetOffset,
          op.length,
        );
        break;
      }
      case OpKind.READ: {
        const source = op.source!.resolve(op.name);
        op.bytes!.set(new Uint8Array(source.memory, source.offset + op.sourceOffset, op.length));
        break;
      }
    }
    // Transfers and barriers are done.
    this.complete(op);
  }

  #runHostCall(op: Operation): void {
    const callback = op.callback!;
    op.callback = undefined;
    const result: unknown = callback(); // a throw completes the operation with it (#runReady)
    if (isThenable(result)) {
      result.then(
        () => this.complete(op),
        (error: unknown) => this.complete(op, thrownBy(error, op.name)),
      );
    } else {
      this.complete(op);
    }
  }

  #runSync(op: Operation): void {
    // Per plan: its runtime and its resolved table (one array each).
    const runtimes: PlanRuntime[] = [];
    const tables: Float64Array[] = [];
    const plans = op.plans!;
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i]!;
      const table = new Float64Array(resolvedLength(plan));
      resolveTableInto(table, 0, plan, op.tables![i], this.parts.slabs, this.parts.device, op.name);
      tables.push(table);
      plan.runtime ??= planRuntime(plan.arrays);
      runtimes.push(plan.runtime);
    }
    this.syncQueues[op.queue]!.run(runtimes, tables, op);
  }

  /** Completes `op` once: releases its buffers, then signals its signal fence or fails it. */
  complete(op: Operation, error?: unknown): void {
    if (op.state === OperationState.DONE) return;
    op.state = OperationState.DONE;
    this.#pending.delete(op);
    op.registration?.cancel();
    op.registration = undefined;
    const trace = op.trace;
    if (trace) {
      // A traced operation hands its trace its dispatch times (if any), then its own event.
      const reader = this.profiles[op.queue];
      if (op.kind === OpKind.EXECUTE && reader && this.namer && trace.dispatches) {
        reader.collect(op, trace, this.namer);
        if (!this.profiling) this.pauseProfile(op.queue);
      }
      trace.opDone(op, error);
    }
    const buffers = op.buffers;
    if (buffers) {
      op.buffers = undefined;
      for (let i = 0; i < buffers.length; i++) buffers[i]!.unretain();
    }
    op.plans = undefined;
    const signal = op.signal;
    op.resetRecord();
    const thrown = completeSignal(signal, error, op.name, this.gone ? undefined : this.parts.report);
    if (thrown !== undefined && !this.#warnedSemaphore) {
      // A foreign semaphore threw while the operation completed: warned once per device.
      this.#warnedSemaphore = true;
      globalThis.console?.warn(`${this.parts.name}: a semaphore threw while an operation completed:`, thrown);
    }
  }
}
