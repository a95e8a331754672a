/**
 * Per-device compute time of a data-parallel step: what `balance: 'measured'` sizes shards by and
 * `devices[].rowsPerMs` reports.
 *
 * Taken by two host calls per device per step, on that device (hal `queueHostCall`), never by promise
 * continuations (which bunch up into one task while the main thread is busy, so that start and end
 * were read together and the speed came out up to 1000× too high):
 * - start, submitted just before the device's operations of the step, waiting the step's inputs as
 *   the host makes them ready: the weights of the previous step reduced on the host (the run's
 *   `reduced` timeline; for step 0 the replica's first upload) and the device's shard uploaded;
 * - end, waiting the device's gradients computed (its `exec` timeline) and the start.
 * A host call runs when its wait is reached: on the CPU device synchronously inside the signal that
 * reaches it, or at its submission when already reached (the device's run loop, on the main thread,
 * where its operations waiting that timepoint start too), on WebGPU in a microtask after that (before
 * the submission batch holding the step's work goes to the GPU, which a microtask queued later does).
 * So the time spans the device's share of the step from the moment its work could start (its inputs
 * ready and its operations about to be submitted) to the moment its gradients exist: the write of the
 * reduced weights into the replica (a cost per step, the same for every shard size) and the gradient
 * step. The end is when the host observes the gradients: on the CPU device when the main thread
 * handles the workers' completion, as the device trace's `queueExecute` end is (main-thread work can
 * lengthen the time, not shorten it).
 *
 * Each device gets a timeline (2k+1: step k started, 2k+2: ended) and two callbacks made once; a step
 * allocates only its fences. `measured(k)` resolves false, never rejects, when a wait failed (the run
 * reports the failure through its own waits).
 */
import { Fence, type Semaphore, type Timepoint } from '@keel/fence';
import type { Device } from '@keel/hal';
import { UPLOAD_QUEUE } from '../train/step-pipeline';

export class StepTimer {
  /** Compute milliseconds per device of the last step `measured` resolved true for. */
  readonly computeMs: number[];
  readonly #devices: readonly Device[];
  readonly #timelines: readonly Semaphore[];
  readonly #start: Float64Array;
  readonly #end: Float64Array;
  readonly #onStart: readonly (() => void)[];
  readonly #onEnd: readonly (() => void)[];

  constructor(devices: readonly Device[]) {
    const n = devices.length;
    this.#devices = devices;
    this.#timelines = devices.map((d) => d.createSemaphore(0));
    const start = new Float64Array(n);
    const end = new Float64Array(n);
    this.#start = start;
    this.#end = end;
    this.#onStart = devices.map((_, d) => () => {
      start[d] = performance.now();
    });
    this.#onEnd = devices.map((_, d) => () => {
      end[d] = performance.now();
    });
    this.computeMs = new Array<number>(n).fill(0);
  }

  /** Submits step `k`'s host calls on device `d`: start once `inputs` is reached, end at `gradients`. */
  submit(d: number, k: number, inputs: Fence, gradients: Timepoint): void {
    const timeline = this.#timelines[d]!;
    const started = { semaphore: timeline, value: 2 * k + 1 };
    this.#devices[d]!.queueHostCall(UPLOAD_QUEUE, inputs, Fence.of(started), this.#onStart[d]!);
    this.#devices[d]!.queueHostCall(
      UPLOAD_QUEUE,
      Fence.of(gradients, started),
      Fence.of({ semaphore: timeline, value: 2 * k + 2 }),
      this.#onEnd[d]!,
    );
  }

  /** Resolves true once step `k`'s times are in `computeMs`; false when one of its waits failed. */
  async measured(k: number): Promise<boolean> {
    try {
      await Promise.all(this.#timelines.map((t) => t.wait(2 * k + 2)));
    } catch {
      return false;
    }
    for (let d = 0; d < this.computeMs.length; d++) this.computeMs[d] = this.#end[d]! - this.#start[d]!;
    return true;
  }
}
