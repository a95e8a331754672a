/**
 * GPU order for the WebGPU device's scheduler (op-scheduler.ts § Readiness): per semaphore, the highest
 * value that work the device already encoded or submitted will signal (`mark`), and the readiness of a
 * wait fence against it (`check`). A timepoint is reached when its semaphore's value is at least its
 * value, GPU-ordered when it is not but a marked value is.
 *
 * `check(wait, allowOrdered)` is FAILED when the semaphore of any timepoint failed (`failure` then holds
 * the first such failure, for the caller to read and clear), else PENDING when some timepoint is
 * neither reached nor (with `allowOrdered`) GPU-ordered, else ORDERED when some is only GPU-ordered,
 * else READY.
 *
 * Promises: `mark` only ever raises a semaphore's marked value; semaphores are held weakly (one that is
 * collected is forgotten). Nothing allocates but the first mark of a semaphore (its map entry); nothing
 * throws.
 */
import type { Fence, KeelError, Semaphore } from '@keel/fence';

/** Readiness of a wait fence (an enum: esbuild inlines its members). */
export enum Wait {
  READY,
  PENDING,
  FAILED,
  /** Every timepoint reached or GPU-ordered, some only GPU-ordered (with `allowOrdered`). */
  ORDERED,
}

export class GpuOrder {
  /** Per semaphore: the highest value work already submitted to the GPUQueue will signal. */
  readonly #ordered = new WeakMap<Semaphore, number>();
  /** The failure found while checking a fence (set by `check` when it returns FAILED). */
  failure: KeelError | undefined;

  /** READY, ORDERED, PENDING or FAILED (then `failure` holds the failure). */
  check(wait: Fence, allowOrdered: boolean): Wait {
    const timepoints = wait.timepoints;
    let state = Wait.READY;
    for (let i = 0; i < timepoints.length; i++) {
      const tp = timepoints[i] as { semaphore: Semaphore; value: number };
      const semaphore = tp.semaphore;
      const failure = semaphore.failure;
      if (failure !== undefined) {
        this.failure = failure;
        return Wait.FAILED;
      }
      if (semaphore.value >= tp.value) continue;
      if (allowOrdered && (this.#ordered.get(semaphore) ?? -1) >= tp.value) {
        if (state === Wait.READY) state = Wait.ORDERED;
        continue;
      }
      state = Wait.PENDING;
    }
    return state;
  }

  /** Records that work already submitted (or nothing at all) will signal `signal`. */
  mark(signal: Fence): void {
    const timepoints = signal.timepoints;
    for (let i = 0; i < timepoints.length; i++) {
      const tp = timepoints[i] as { semaphore: Semaphore; value: number };
      const known = this.#ordered.get(tp.semaphore);
      if (known === undefined || known < tp.value) this.#ordered.set(tp.semaphore, tp.value);
    }
  }
}
