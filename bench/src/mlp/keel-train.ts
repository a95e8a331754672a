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
  readonly deviceName: string;
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
  const r = await trainMlp({
    device,
    steps: warmup + steps,
    warmup,
    pregeneratedBatches: 8,
    overlap,
    ...(device === 'cpu' ? { cpuMode } : {}),
  });
  return { stepMs: r.stepMs.slice(warmup), losses: Array.from(r.losses), deviceName: r.deviceName };
}
