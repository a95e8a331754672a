/**
 * `keel bench` outside a checkout (the installed package): the suites the package can run on its own.
 * Today that is the `mlp` suite's Keel sides — the demo's own `trainMlp` on the CPU device and, where
 * an adapter is found, on WebGPU — measured as the repository's suite measures them (rounds of short
 * runs, A/B interleaved within a round: overlapped as the demo runs, then awaiting every loss; the
 * figure is the median over every timed step of every round). The peers (TensorFlow.js, numpy,
 * PyTorch) and the other suites need the repository and are not run. Output: progress lines on stderr;
 * with `--json` one object on stdout as DESIGN.md § Benchmark output specifies
 * (`{ suite, machine: { cpus, node, adapter? }, metrics }`), with the repository suite's metric names.
 */
import os from 'node:os';
import { REFERENCE_MLP, stepMultiplyAdds, type TrainDeviceKind, trainMlp } from '@keel/mlp';

/** Suites `keel bench` runs from the installed package. */
export const PACKAGED_SUITES: readonly string[] = Object.freeze(['mlp']);

/**
 * The suites of the repository's runner (bench/src/suites/index.ts; a test keeps the two lists equal),
 * so that outside a checkout a name among them is told where it runs and any other name is unknown.
 */
export const REPOSITORY_SUITES: readonly string[] = Object.freeze([
  'allocator',
  'bundle',
  'command-buffer',
  'device-cpu',
  'device-webgpu',
  'fence',
  'mirror',
  'mlp',
  'multi-device',
  'scheduler',
  'tensor-residency',
]);

export interface PackagedBenchOptions {
  /** Which devices to measure: 'all' (default: CPU, and WebGPU where there is an adapter). */
  readonly device: TrainDeviceKind | 'all';
  /** Rounds per device (default 3 on the CPU, 2 on WebGPU). */
  readonly rounds?: number;
  /** Timed steps per run (default 10 on the CPU, 4 on WebGPU); warm-up steps are added. */
  readonly steps?: number;
}

export interface Metric {
  readonly value: number;
  readonly unit: string;
}

export interface BenchResult {
  readonly suite: string;
  readonly machine: { readonly cpus: string; readonly node: string; adapter?: string };
  readonly metrics: Record<string, Metric>;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function metric(value: number, unit: string): Metric {
  return { value: Number.isFinite(value) ? Number(value.toPrecision(6)) : value, unit };
}

interface Side {
  readonly stepMs: number[];
  losses: number[] | undefined;
}

/** keel_cpu → keel_cpu_ms_per_step, keel_cpu_sequential → keel_cpu_ms_per_step_sequential. */
function metricName(side: string): string {
  const sequential = side.endsWith('_sequential');
  const base = sequential ? side.slice(0, -'_sequential'.length) : side;
  return `${base}_ms_per_step${sequential ? '_sequential' : ''}`;
}

/** Runs the mlp suite's Keel sides; `log` receives one progress line per round. */
export async function runPackagedMlp(
  options: PackagedBenchOptions,
  log: (line: string) => void,
): Promise<BenchResult> {
  const cpus = os.cpus();
  const machine: BenchResult['machine'] = {
    cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    node: process.version,
  };
  const sides = new Map<string, Side>();
  const take = (name: string, stepMs: readonly number[], losses: ArrayLike<number>) => {
    let side = sides.get(name);
    if (side === undefined) {
      side = { stepMs: [], losses: undefined };
      sides.set(name, side);
    }
    side.stepMs.push(...stepMs);
    side.losses ??= Array.from(losses);
  };
  const devices: TrainDeviceKind[] = options.device === 'all' ? ['cpu', 'webgpu'] : [options.device];
  for (const device of devices) {
    const rounds = options.rounds ?? (device === 'cpu' ? 3 : 2);
    const steps = options.steps ?? (device === 'cpu' ? 10 : 4);
    const warmup = device === 'cpu' ? 3 : 2;
    try {
      for (let round = 0; round < rounds; round++) {
        for (const overlap of [true, false]) {
          const r = await trainMlp({
            device,
            steps: warmup + steps,
            warmup,
            pregeneratedBatches: 8,
            overlap,
          });
          take(`keel_${device}${overlap ? '' : '_sequential'}`, r.stepMs.slice(warmup), r.losses);
          if (device === 'webgpu') machine.adapter ??= r.deviceName;
        }
        const a = median(sides.get(`keel_${device}`)?.stepMs ?? []);
        const b = median(sides.get(`keel_${device}_sequential`)?.stepMs ?? []);
        log(
          `${device} round ${round + 1}/${rounds}: keel_${device} ${a.toFixed(2)} ms, sequential ${b.toFixed(2)} ms`,
        );
      }
    } catch (error) {
      // Only a missing WebGPU adapter is expected here; anything else is a real failure.
      if (device !== 'webgpu' || options.device === 'webgpu') throw error;
      sides.delete('keel_webgpu');
      sides.delete('keel_webgpu_sequential');
      log(`webgpu skipped: ${error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)}`);
    }
  }
  const metrics: Record<string, Metric> = {};
  for (const [name, side] of sides) metrics[metricName(name)] = metric(median(side.stepMs), 'ms');
  for (const [name, side] of sides) {
    const loss = side.losses?.[2];
    if (loss !== undefined) metrics[`loss_step_3_${name}`] = metric(loss, '');
  }
  metrics.mlp_step_gflop = metric((2 * stepMultiplyAdds(REFERENCE_MLP)) / 1e9, 'GFLOP');
  return { suite: 'mlp', machine, metrics };
}

/** The human-readable form of a result. */
export function formatBenchResult(result: BenchResult): string {
  const lines = [
    `suite ${result.suite} (Keel sides only: the peers and the other suites need the Keel repository)`,
    `machine: ${result.machine.cpus}, node ${result.machine.node}${result.machine.adapter ? `; WebGPU adapter: ${result.machine.adapter}` : ''}`,
  ];
  for (const [name, m] of Object.entries(result.metrics))
    lines.push(`  ${name.padEnd(36)} ${m.value} ${m.unit}`.trimEnd());
  return lines.join('\n');
}
