/**
 * `mirror`: the cost of surviving a lost device. The demo's training run (`trainMlp`, default config:
 * reference MLP, batch 256, loss read back every step) with and without `checkpointEvery` (the
 * parameters mirrored to host memory by @keel/tensor-residency's MirrorPolicy), on the CPU device and
 * on WebGPU (lavapipe here; skipped without an adapter). Variants are interleaved within each round
 * (the order alternates between rounds), and each metric is the median over every timed step of every
 * round, so the ratios come from one run.
 *
 * Metrics (per device prefix `cpu_` / `webgpu_`): `ms_per_step_no_mirror`, `ms_per_step_mirror_10`
 * (every 10 steps), `ms_per_step_mirror_1` (every step: the worst case), `mirror_10_overhead` and
 * `mirror_1_overhead` (ratio to no mirror, ×), `mirrored_bytes_per_checkpoint` (B).
 */
import { trainMlp } from '@keel/mlp';
import { type Metrics, median, type Suite, type SuiteContext } from '../harness.ts';

type Variant = 'no_mirror' | 'mirror_10' | 'mirror_1';
const EVERY: Readonly<Record<Variant, number | undefined>> = {
  no_mirror: undefined,
  mirror_10: 10,
  mirror_1: 1,
};
const VARIANTS: readonly Variant[] = ['no_mirror', 'mirror_10', 'mirror_1'];

interface Plan {
  readonly device: 'cpu' | 'webgpu';
  readonly rounds: number;
  readonly steps: number;
  readonly warmup: number;
}

async function measure(plan: Plan, metrics: Metrics, log: (line: string) => void): Promise<void> {
  const samples: Record<Variant, number[]> = { no_mirror: [], mirror_10: [], mirror_1: [] };
  let bytesPerCheckpoint = 0;
  for (let round = 0; round < plan.rounds; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) {
      const r = await trainMlp({
        device: plan.device,
        steps: plan.warmup + plan.steps,
        warmup: plan.warmup,
        pregeneratedBatches: 8,
        checkpointEvery: EVERY[variant],
      });
      samples[variant].push(...r.stepMs.slice(plan.warmup));
      const cp = r.checkpoint;
      if (cp !== undefined && cp.checkpoints > 0) bytesPerCheckpoint = cp.mirroredBytes / cp.checkpoints;
    }
    log(
      `${plan.device} round ${round + 1}/${plan.rounds}: ${VARIANTS.map((v) => `${v} ${median(samples[v]).toFixed(2)} ms`).join(', ')}`,
    );
  }
  const p = plan.device;
  const base = median(samples.no_mirror);
  for (const v of VARIANTS)
    metrics[`${p}_ms_per_step_${v}`] = { value: round3(median(samples[v])), unit: 'ms' };
  metrics[`${p}_mirror_10_overhead`] = { value: round3(median(samples.mirror_10) / base), unit: '×' };
  metrics[`${p}_mirror_1_overhead`] = { value: round3(median(samples.mirror_1) / base), unit: '×' };
  metrics[`${p}_mirrored_bytes_per_checkpoint`] = { value: bytesPerCheckpoint, unit: 'B' };
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Which sides run, and how long (the GPU machine's entry runs WebGPU only, with more steps). */
export interface MirrorSuiteOptions {
  readonly cpu?: boolean;
  readonly webgpuRounds?: number;
  readonly webgpuSteps?: number;
}

export function createMirrorSuite(o: MirrorSuiteOptions = {}): Suite {
  return {
    name: 'mirror',
    description:
      'trainMlp step time with and without the parameter mirror (checkpointEvery 10 and 1), CPU and WebGPU',
    run: (context) => runMirror(o, context),
  };
}

export const mirrorSuite: Suite = createMirrorSuite();

async function runMirror(o: MirrorSuiteOptions, { machine, log }: SuiteContext): Promise<Metrics> {
  const metrics: Metrics = {};
  if (o.cpu ?? true) await measure({ device: 'cpu', rounds: 4, steps: 50, warmup: 10 }, metrics, log);
  try {
    const steps = o.webgpuSteps ?? 20;
    await measure({ device: 'webgpu', rounds: o.webgpuRounds ?? 3, steps, warmup: 3 }, metrics, log);
    const { createWebGpuDevice } = await import('@keel/device-webgpu');
    const d = await createWebGpuDevice();
    machine.adapter ??= d.info.name;
    await d.destroy();
  } catch (error) {
    log(`webgpu skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
  return metrics;
}
