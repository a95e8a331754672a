/**
 * The Keel CPU side of the `mlp` benchmark until the demo's device integration lands: the reference MLP
 * trained by the step program on the WebAssembly kernel module, on a CpuStepPool (all cores). Same data,
 * initial weights and per-step work as tfjs.ts: write the batch, run the step, read the loss back.
 */
import os from 'node:os';
import { median } from '../harness.ts';
import { CpuStepPool } from './cpu-pool.ts';
import {
  biasName,
  initParams,
  type MlpConfig,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
  weightName,
} from './keel-mlp.ts';

export interface KeelCpuRunOptions {
  readonly config?: MlpConfig;
  readonly steps?: number;
  readonly warmup?: number;
  readonly batches?: number;
  /** Worker threads (default: available parallelism). */
  readonly workers?: number;
  /** Zero-copy GEMM through the proposed ABI addition (default false: what the device offers today). */
  readonly zeroCopy?: boolean;
  /** Overrides the matmul family's default tile (for tuning). */
  readonly matmulTile?: { readonly rows: number; readonly cols: number };
}

export interface KeelCpuRunResult {
  readonly msPerStep: number;
  /** Every timed step's wall time, in order. */
  readonly stepMs: number[];
  /** Every timed step's CPU time of the whole process (all threads), in order. */
  readonly stepCpuMs: number[];
  readonly losses: number[];
  readonly workers: number;
  readonly zeroCopy: boolean;
}

export async function runKeelCpuMlp(options: KeelCpuRunOptions = {}): Promise<KeelCpuRunResult> {
  const config = options.config ?? REFERENCE_MLP;
  const steps = options.steps ?? 10;
  const warmup = options.warmup ?? 3;
  const workers = options.workers ?? os.availableParallelism();
  const zeroCopy = options.zeroCopy ?? false;
  const d = config.layers;
  const data = new SyntheticDataset({ inputSize: d[0]!, classes: d[d.length - 1]!, seed: 0x64617461 });
  const batches = Array.from({ length: options.batches ?? 8 }, (_, i) => data.batch(i, config.batch));
  const pool = await CpuStepPool.create(trainingStepProgram(config), {
    workers,
    zeroCopy,
    ...(options.matmulTile === undefined ? {} : { matmulTile: options.matmulTile }),
  });
  try {
    const init = initParams(config);
    for (const [i, w] of init.weights.entries()) pool.views.get(weightName(i))!.f32.set(w);
    for (const [i, b] of init.biases.entries()) pool.views.get(biasName(i))!.f32.set(b);
    const x = pool.views.get('x')!.f32;
    const labels = pool.views.get('labels')!.u32;
    const loss = pool.views.get('loss')!.f32;
    const losses: number[] = [];
    const times: number[] = [];
    const cpuTimes: number[] = [];
    for (let s = 0; s < warmup + steps; s++) {
      const batch = batches[s % batches.length]!;
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      x.set(batch.x);
      labels.set(batch.labels);
      pool.runStep();
      losses.push(loss[0]!);
      if (s >= warmup) {
        times.push(performance.now() - start);
        const cpu = process.cpuUsage(cpuStart);
        cpuTimes.push((cpu.user + cpu.system) / 1000);
      }
    }
    return { msPerStep: median(times), stepMs: times, stepCpuMs: cpuTimes, losses, workers, zeroCopy };
  } finally {
    await pool.destroy();
  }
}
