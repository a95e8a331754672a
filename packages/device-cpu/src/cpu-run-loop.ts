/**
 * The CPU device's run loop: every queue operation after the queue front checked it. An operation
 * waits for its wait fence with the promise-free `onReached`; ready operations go through one run
 * list (hal/driver RunList, a trampoline), so chains of operations completed inside one `signal` never
 * recurse deeply. Transfers, barriers and host calls run here on the main thread; executes go to the
 * selected queue's workers (task mode, task-queue.ts) or run inline (sync mode, sync-queue.ts).
 * Completion releases the buffers the operation retained, then signals its signal fence (timepoints
 * already reached are skipped) or fails it with the operation's error (hal/driver completeSignal).
 * A worker's death reaches the device through `parts.lose`.
 *
 * Records are pooled (`records`, hal/driver RecordPool; the device acquires them): an operation's
 * record goes back to the pool at the end of its completion, the one moment nothing refers to it any
 * more (its wait registration fired or was cancelled, its run list entry ran, its task queue slot and
 * failure half were taken, the sync queue and the executor let go of its arrays, its trace copied what
 * it reports). A callback that may outlive that moment (a host call's promise) checks the record's
 * generation; once the device is destroyed or lost no record goes back (the pool is closed), as work
 * the loss failed may still hold its record. Pending operations form an intrusive list (no Set, whose
 * add/delete churn reallocates its table), so a warm operation allocates nothing here.
 */
import type { KeelError } from '@keel/fence';
import { abortedBy, completeSignal, OpKind, RecordPool, RunList, thrownBy, traceNow } from '@keel/hal/driver';
import { copyView, fillView } from './byte-ops';
import { resolvedLength, resolveTableInto } from './cpu-plan';
import type { KernelNamer, ProfileReader } from './cpu-profiler';
import { isThenable, type PlanRuntime, planRuntime } from './executor';
import { Operation, type OperationSink, OperationState } from './operation';
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
  /** The device's operation records (acquired by the device's `record`, released by `complete`). */
  readonly records = new RecordPool<Operation>(() => new Operation(this));
  /** Operations not completed yet, oldest first (linked through `prev`/`next`). */
  #head: Operation | undefined = undefined;
  #tail: Operation | undefined = undefined;
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
    this.records.close();
    for (const queue of this.syncQueues) queue.stop();
    const pending: Operation[] = [];
    for (let op = this.#head; op !== undefined; op = op.next) pending.push(op);
    for (const op of pending) this.complete(op, reason);
  }

  /**
   * Stops the writing of queue `queue`'s profile ring unless an execute of a trace with dispatch times
   * is still pending on it (that execute's completion calls this again). Called when such a trace
   * stops and, after that, when such an execute completes: never on an untraced path.
   */
  pauseProfile(queue: number): void {
    const reader = this.profiles[queue];
    if (!reader?.writing) return;
    for (let op = this.#head; op !== undefined; op = op.next) {
      if (op.queue === queue && op.kind === OpKind.EXECUTE && op.trace?.dispatches) return;
    }
    reader.pause();
  }

  /**
   * Tracks `op` and registers it on its wait fence. A wait already reached runs it inside this call
   * (unless the run list is busy further up the stack); then it may complete, go back to the pool and
   * even be taken again before onReached returns: the registration is kept only by the same use.
   */
  enqueue(op: Operation): void {
    const tail = this.#tail;
    op.prev = tail;
    op.next = undefined;
    if (tail === undefined) this.#head = op;
    else tail.next = op;
    this.#tail = op;
    const generation = op.generation;
    const registration = op.wait.onReached(op.onReady);
    if (op.generation === generation && op.state === OperationState.WAITING) op.registration = registration;
  }

  /** Takes `op` out of the pending list. */
  #unlink(op: Operation): void {
    const prev = op.prev;
    const next = op.next;
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next === undefined) this.#tail = prev;
    else next.prev = prev;
    op.prev = undefined;
    op.next = undefined;
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
      // Transfers go through the slab table's view of each slab: no view per operation (but a read's
      // host target needs one of the source range).
      case OpKind.FILL: {
        const target = op.target!.resolve(op.name);
        const bytes = this.parts.slabs.bytes(target.slab.memory);
        fillView(bytes, target.offset + op.targetOffset, op.length, op.pattern, op.patternLength);
        break;
      }
      case OpKind.UPDATE:
      case OpKind.WRITE: {
        const target = op.target!.resolve(op.name);
        const host = op.bytes!;
        const bytes = this.parts.slabs.bytes(target.slab.memory);
        // The front checked the lengths equal; a resizable host buffer may have grown since: no overrun.
        if (host.length === op.length) bytes.set(host, target.offset + op.targetOffset);
        else bytes.set(host.subarray(0, op.length), target.offset + op.targetOffset);
        break;
      }
      case OpKind.COPY: {
        const source = op.source!.resolve(op.name);
        const target = op.target!.resolve(op.name);
        const slabs = this.parts.slabs;
        copyView(
          slabs.bytes(source.slab.memory),
          source.offset + op.sourceOffset,
          slabs.bytes(target.slab.memory),
          target.offset + op.targetOffset,
          op.length,
        );
        break;
      }
      case OpKind.READ: {
        const source = op.source!.resolve(op.name);
        const from = source.offset + op.sourceOffset;
        op.bytes!.set(this.parts.slabs.bytes(source.slab.memory).subarray(from, from + op.length));
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
      // The promise may settle after the operation was failed (device lost) and its record reused.
      const generation = op.generation;
      result.then(
        () => {
          if (op.generation === generation) this.complete(op);
        },
        (error: unknown) => {
          if (op.generation === generation) this.complete(op, thrownBy(error, op.name));
        },
      );
    } else {
      this.complete(op);
    }
  }

  #runSync(op: Operation): void {
    // Per plan: its runtime and its resolved table, in the record's arrays (reused while the plans'
    // table sizes stay the same).
    const count = op.planCount;
    const runtimes = op.runtimes;
    const tables = op.resolved;
    if (runtimes.length !== count) runtimes.length = count;
    let base = 0;
    for (let i = 0; i < count; i++) {
      const plan = op.plans[i]!;
      const length = resolvedLength(plan);
      let table = tables[i];
      if (table === undefined || table.length !== length) {
        table = new Float64Array(length);
        tables[i] = table;
      }
      resolveTableInto(table, 0, plan, op, base, this.parts.slabs, this.parts.device);
      base += plan.slots.length;
      plan.runtime ??= planRuntime(plan.arrays);
      runtimes[i] = plan.runtime;
    }
    if (tables.length !== count) tables.length = count;
    this.syncQueues[op.queue]!.run(runtimes as PlanRuntime[], tables, op);
  }

  /**
   * Completes `op` once: releases its buffers, signals its signal fence or fails it, then gives its
   * record back to the pool (nothing refers to it any more; not once the device is gone).
   */
  complete(op: Operation, error?: unknown): void {
    if (op.state === OperationState.DONE) return;
    op.state = OperationState.DONE;
    this.#unlink(op);
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
    op.releaseBuffers();
    const thrown = completeSignal(op.signal, error, op.name, this.gone ? undefined : this.parts.report);
    if (thrown !== undefined && !this.#warnedSemaphore) {
      // A foreign semaphore threw while the operation completed: warned once per device.
      this.#warnedSemaphore = true;
      globalThis.console?.warn(`${this.parts.name}: a semaphore threw while an operation completed:`, thrown);
    }
    // Once the device is gone the record is left alone: work the loss failed (a suspended sync run, a
    // task queue's slots) may still hold it and its arrays.
    if (!this.gone) this.records.release(op);
  }
}
