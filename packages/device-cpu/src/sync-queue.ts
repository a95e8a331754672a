/**
 * A sync-mode queue (IREE local-sync): runs execute operations inline on the main thread with one
 * Executor over a private control block. Kernels are the main thread's imports.
 *
 * An operation whose kernels are synchronous completes inside `run` (its `done` is called before `run`
 * returns). One with an async kernel suspends the executor: `done` is called once every workgroup's
 * promise settled; operations `run` meanwhile wait their turn in order (one executor, one operation at
 * a time), and nothing of a rejected promise goes unhandled.
 */
import { CTL_FAILED_BASE, CTL_WORDS, RING_MASK } from './control-block';
import type { ProfileRing } from './cpu-profiler';
import {
  Executor,
  type ExecutorHost,
  type LoadedKernel,
  type PlanRuntime,
  type Suspension,
} from './executor';

/** Receives the outcome of run `token`: undefined on success, else the first error. */
export type SyncRunDone<T> = (token: T, error: unknown) => void;

/** A run's arguments, kept while an earlier run is suspended. */
type WaitingRun<T> = [plans: readonly PlanRuntime[], tables: readonly Float64Array[], token: T];

export class SyncQueue<T extends { seq: number }> {
  readonly #control = new Int32Array(CTL_WORDS);
  readonly #executor: Executor;
  #seq = 0;
  /**
   * The first error of the latest run, undefined while it succeeds (the executor reports thrown
   * and rejected kernels as KeelErrors, and other failures as what was thrown: never undefined).
   */
  #error: unknown;
  #busy = false;
  /** Set by `stop()`: no run starts any more. */
  #stopped = false;
  readonly #waiting: WaitingRun<T>[] = [];

  readonly #done: SyncRunDone<T>;

  constructor(
    slabs: readonly (ArrayBufferLike | undefined)[],
    kernel: (executable: number, entry: number) => LoadedKernel | undefined,
    done: SyncRunDone<T>,
  ) {
    this.#done = done;
    const host: ExecutorHost = {
      slabs,
      kernel,
      reportFailure: (_seq: number, error: unknown) => {
        this.#error = error;
      },
      reportComplete: () => {},
    };
    this.#executor = new Executor(this.#control, false, host, 0);
  }

  /** Starts or stops per-dispatch timing for traces (cpu-profiler.ts). */
  setProfile(ring: ProfileRing | undefined): void {
    this.#executor.setProfile(ring);
  }

  /**
   * Runs the plans with their resolved tables and calls `done(token, outcome)` (a kernel that threw or
   * rejected, or a command that could not run): inside this call unless a kernel is async. When the
   * run starts, `token.seq` is set to its sequence number (the seq of its profile entries).
   */
  run(plans: readonly PlanRuntime[], tables: readonly Float64Array[], token: T): void {
    if (this.#stopped) return;
    if (this.#busy) {
      this.#waiting.push([plans, tables, token]);
      return;
    }
    const seq = this.#seq;
    this.#seq = (seq + 1) | 0;
    token.seq = seq;
    this.#control[CTL_FAILED_BASE + (seq & RING_MASK)] = 0;
    this.#error = undefined;
    const pending = this.#executor.execute(seq, plans, tables, undefined);
    if (!pending) {
      this.#done(token, this.#error);
      return;
    }
    this.#busy = true;
    void this.#settle(pending, token);
  }

  /**
   * The device was destroyed or lost (its operations already failed): the runs waiting behind a
   * suspended one are dropped, and no run starts any more, so no kernel runs after its operation failed.
   * A suspended run's pending kernel promises settle on their own; none of its workgroups or commands
   * not started yet runs (its failed flag is raised, as a failing kernel raises it).
   */
  stop(): void {
    this.#stopped = true;
    this.#waiting.length = 0;
    if (this.#busy) this.#control[CTL_FAILED_BASE + ((this.#seq - 1) & RING_MASK)] = 1;
  }

  /** Waits for each suspension of the executor, then reports and starts the next waiting run. */
  async #settle(first: Suspension, token: T): Promise<void> {
    await this.#executor.settle(first);
    this.#busy = false;
    this.#done(token, this.#error);
    while (!this.#busy && this.#waiting.length > 0) {
      this.run(...this.#waiting.shift()!);
    }
  }
}
