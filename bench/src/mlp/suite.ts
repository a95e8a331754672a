/**
 * The `mlp` benchmark suite: the reference MLP's training step (784-512-512-10, batch 256, SGD, loss
 * read back every step) on Keel's CPU kernels against TensorFlow.js's `cpu`, `wasm` and `webgpu`
 * backends, same data and initial weights. Keel and TF.js wasm run interleaved in rounds (each round a
 * short training run of each), and the reported figures are medians over all rounds' steps.
 *
 * Keel sides are `KeelMlpRunner`s. Defaults: `keel_cpu`, the real CPU device (task mode, all cores;
 * keel-device-cpu.ts; today its kernels copy their GEMM tiles), and `keel_cpu_zero_copy_pool`, the same
 * kernels on the CpuStepPool stand-in with the proposed zero-copy ABI addition (cpu-pool.ts). Others
 * plug in through `createMlpSuite({ keel })`.
 *
 * Metrics: `<side>_ms_per_step` (ms), `keel_cpu_speedup_vs_tfjs_wasm` (×, > 1 means Keel is faster),
 * `keel_cpu_speedup_vs_tfjs_cpu`, `loss_step_<n>_<side>` (the loss after the same number of steps, to
 * show the runs train the same model). With a WebGPU adapter also `keel_webgpu` (Keel's WebGPU device,
 * keel-device-webgpu.ts), `keel_wgsl_raw_webgpu` (the same WGSL on raw WebGPU with pre-built bind
 * groups, webgpu-raw.ts: the floor) and `tfjs_webgpu`, alternated in two rounds, with their ratios.
 */
import os from 'node:os';
import { type Metrics, median, metric, type Suite } from '../harness.ts';
import { runKeelCpuMlp } from './keel-cpu.ts';
import { runKeelDeviceCpuMlp } from './keel-device-cpu.ts';
import { runKeelDeviceWebGpuMlp } from './keel-device-webgpu.ts';
import { REFERENCE_MLP, stepMultiplyAdds } from './keel-mlp.ts';
import { runTfjsMlp, type TfjsBackend } from './tfjs.ts';
import { runWebGpuRawMlp } from './webgpu-raw.ts';

/** Runs `steps` timed steps (after `warmup`) and returns every timed step's ms and every loss. */
export type KeelMlpRunner = (
  steps: number,
  warmup: number,
) => Promise<{ stepMs: number[]; losses: number[] }>;

export interface MlpSuiteOptions {
  /** Keel sides by metric prefix (default: `keel_cpu`, `keel_cpu_zero_copy_pool`). */
  readonly keel?: Readonly<Record<string, KeelMlpRunner>>;
  /** Interleaved rounds of Keel and TF.js wasm. */
  readonly rounds?: number;
  /** Timed steps per round. */
  readonly steps?: number;
}

const deviceRunner: KeelMlpRunner = async (steps, warmup) => {
  const r = await runKeelDeviceCpuMlp({ steps, warmup });
  return { stepMs: r.stepMs, losses: r.losses };
};

function poolRunner(zeroCopy: boolean): KeelMlpRunner {
  return async (steps, warmup) => {
    const r = await runKeelCpuMlp({ steps, warmup, zeroCopy, workers: os.availableParallelism() });
    return { stepMs: r.stepMs, losses: r.losses };
  };
}

async function tfjsRunner(
  backend: TfjsBackend,
  steps: number,
  warmup: number,
): Promise<{ stepMs: number[]; losses: number[]; adapter?: string }> {
  const r = await runTfjsMlp(backend, { steps, warmup });
  return r.adapter === undefined
    ? { stepMs: r.stepMs, losses: r.losses }
    : { stepMs: r.stepMs, losses: r.losses, adapter: r.adapter };
}

export function createMlpSuite(options: MlpSuiteOptions = {}): Suite {
  const keel = options.keel ?? { keel_cpu: deviceRunner, keel_cpu_zero_copy_pool: poolRunner(true) };
  const rounds = options.rounds ?? 3;
  const steps = options.steps ?? 6;
  return {
    name: 'mlp',
    description: 'reference MLP training step: Keel CPU kernels vs TensorFlow.js cpu / wasm / webgpu',
    async run({ machine, log }): Promise<Metrics> {
      const samples: Record<string, number[]> = {};
      const losses: Record<string, number[]> = {};
      const add = (side: string, r: { stepMs: number[]; losses: number[] }): void => {
        samples[side] = [...(samples[side] ?? []), ...r.stepMs];
        losses[side] ??= r.losses;
      };
      for (let round = 0; round < rounds; round++) {
        for (const [side, runner] of Object.entries(keel)) add(side, await runner(steps, 2));
        add('tfjs_wasm', await tfjsRunner('wasm', Math.max(2, steps >> 1), 1));
        log(
          `round ${round + 1}/${rounds}: ${Object.entries(samples)
            .map(([s, v]) => `${s} ${median(v).toFixed(1)} ms`)
            .join(', ')}`,
        );
      }
      add('tfjs_cpu', await tfjsRunner('cpu', 2, 1));
      log(`tfjs_cpu ${median(samples.tfjs_cpu!).toFixed(0)} ms/step`);
      try {
        for (let round = 0; round < 2; round++) {
          const gpuSteps = Math.max(2, steps >> 1);
          add('keel_webgpu', await runKeelDeviceWebGpuMlp({ steps: gpuSteps, warmup: 2 }));
          const raw = await runWebGpuRawMlp({ steps: gpuSteps, warmup: 2 });
          add('keel_wgsl_raw_webgpu', raw);
          const gpu = await tfjsRunner('webgpu', gpuSteps, 2);
          add('tfjs_webgpu', gpu);
          if (gpu.adapter !== undefined) machine.adapter = gpu.adapter;
        }
        log(
          `keel_webgpu ${median(samples.keel_webgpu!).toFixed(1)} ms, keel_wgsl_raw_webgpu ${median(samples.keel_wgsl_raw_webgpu!).toFixed(1)} ms, tfjs_webgpu ${median(samples.tfjs_webgpu!).toFixed(1)} ms/step on ${machine.adapter ?? '?'}`,
        );
      } catch (error) {
        log(`webgpu skipped: ${String(error)}`);
      }
      const metrics: Metrics = {};
      for (const [side, v] of Object.entries(samples))
        metrics[`${side}_ms_per_step`] = metric(median(v), 'ms');
      const keelCpu = samples.keel_cpu ?? Object.values(samples)[0]!;
      metrics.keel_cpu_speedup_vs_tfjs_wasm = metric(median(samples.tfjs_wasm!) / median(keelCpu), '×');
      metrics.keel_cpu_speedup_vs_tfjs_cpu = metric(median(samples.tfjs_cpu!) / median(keelCpu), '×');
      if (samples.keel_webgpu !== undefined && samples.tfjs_webgpu !== undefined) {
        metrics.keel_webgpu_speedup_vs_tfjs_webgpu = metric(
          median(samples.tfjs_webgpu) / median(samples.keel_webgpu),
          '×',
        );
      }
      if (samples.keel_wgsl_raw_webgpu !== undefined && samples.tfjs_webgpu !== undefined) {
        metrics.keel_wgsl_raw_speedup_vs_tfjs_webgpu = metric(
          median(samples.tfjs_webgpu) / median(samples.keel_wgsl_raw_webgpu),
          '×',
        );
      }
      const lossStep = 2; // every side ran at least 3 steps (warm-up included)
      for (const [side, l] of Object.entries(losses)) {
        if (l.length > lossStep) metrics[`loss_step_${lossStep}_${side}`] = metric(l[lossStep]!, '');
      }
      metrics.mlp_step_gflop = metric((2 * stepMultiplyAdds(REFERENCE_MLP)) / 1e9, 'GFLOP');
      return metrics;
    },
  };
}

/** The suite with its default sides. */
export const mlpSuite: Suite = createMlpSuite();
