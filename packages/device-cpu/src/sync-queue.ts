/**
 * A sync-mode queue (IREE local-sync): runs execute operations inline on the main thread with one
 * Executor over a private control block. Kernels are the main thread's imports.
 */
import { CTL_FAILED_BASE, CTL_WORDS, RING_MASK } from './control-block';
import { Executor, type ExecutorHost, type LoadedKernel, type PlanRuntime } from './executor';

export class SyncQueue {
  private readonly control = new Int32Array(CTL_WORDS);
  private readonly executor: Executor;
  private seq = 0;
  private error: unknown;
  private failed = false;

  constructor(
    slabs: readonly (ArrayBufferLike | undefined)[],
    kernel: (executable: number, entry: number) => LoadedKernel | undefined,
    maxWorkgroupCount: number,
  ) {
    const host: ExecutorHost = {
      slabs,
      kernel,
      reportFailure: (_seq: number, error: unknown) => {
        this.failed = true;
        this.error = error;
      },
      reportComplete: () => {},
    };
    this.executor = new Executor(this.control, false, host, 0, maxWorkgroupCount);
  }

  /**
   * Runs the plans with their resolved tables; returns `undefined` on success, else the first error
   * (a kernel that threw, or a command that could not run).
   */
  run(plans: readonly PlanRuntime[], tables: readonly Float64Array[]): { error: unknown } | undefined {
    const seq = this.seq;
    this.seq = (seq + 1) | 0;
    this.control[CTL_FAILED_BASE + (seq & RING_MASK)] = 0;
    this.failed = false;
    this.error = undefined;
    this.executor.execute(seq, plans, tables, undefined);
    if (!this.failed) return undefined;
    const error = this.error;
    this.error = undefined;
    return { error };
  }
}
