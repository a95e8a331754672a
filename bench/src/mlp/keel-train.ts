/**
 * The Keel side of the `mlp` benchmark: the demo's own training run (`trainMlp` from `@keel/mlp`,
 * exactly what `keel demo` runs) on pre-generated batches, as the TensorFlow.js side
 * does, so data generation is not timed; uploading each batch is, on both sides. On the CPU, `cpuMode`
 * picks the device's task mode (the demo's, default) or sync mode.
 */
import { type TrainDeviceKind, trainMlp } from '@keel/mlp';

export interface KeelTrainRun {
  /** Wall time of every timed step (after the warm-up), in order. */
  readonly stepMs: number[];
  /** Every step's loss, warm-up included. */
  readonly losses: number[];
  /**
   * CPU time of this process (every thread) per timed step, from the end of the warm-up to the end of
   * the last step. In sync mode only the calling thread works, so it is the step's work alone.
   */
  readonly cpuMsPerStep: number;
  readonly deviceName: string;
}

function cpuNowMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Trains `warmup + steps` steps on `device` and returns the timed steps. `overlap` (default true, as
 * the demo runs) submits step k+1 before waiting for the loss of step k; false waits for every loss
 * first, like TensorFlow.js's loop.
 */
export async function runKeelTraining(
  device: TrainDeviceKind,
  steps: number,
  warmup: number,
  overlap = true,
  cpuMode: 'task' | 'sync' = 'task',
): Promise<KeelTrainRun> {
  let cpuStart = cpuNowMs();
  let cpuEnd = 0;
  const r = await trainMlp({
    device,
    steps: warmup + steps,
    warmup,
    pregeneratedBatches: 8,
    overlap,
    ...(device === 'cpu' ? { cpuMode } : {}),
    onStep: (p) => {
      if (p.step === warmup) cpuStart = cpuNowMs();
      if (p.step === warmup + steps) cpuEnd = cpuNowMs();
    },
  });
  return {
    stepMs: r.stepMs.slice(warmup),
    losses: Array.from(r.losses),
    deviceName: r.deviceName,
    cpuMsPerStep: (cpuEnd - cpuStart) / steps,
  };
}
