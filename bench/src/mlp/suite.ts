/**
 * The `mlp` benchmark suite: the reference MLP's training step (784-512-512-10, batch 256, SGD lr 0.05,
 * loss read back every step, same data and initial weights everywhere) on Keel — the demo's own
 * `trainMlp` from `@keel/mlp`, on the CPU device and on WebGPU — against TensorFlow.js's
 * `cpu`, `wasm` and `webgpu` backends (webgpu on the same Dawn adapter), in one run.
 *
 * Method: CPU sides alternate in rounds (Keel CPU, numpy, TF.js wasm, ...), WebGPU sides likewise; each round is
 * a short training run per side (a few untimed warm-up steps, then timed steps), and every figure is the
 * median over all timed steps of all rounds. Data generation is untimed on every side (8 batches
 * generated up front and cycled); uploading each batch and reading the loss back are timed.
 *
 * Keel is measured as the demo runs (`overlap`: step k+1 is submitted before the host waits for the
 * loss of step k; ms/step = interval between losses) and, as `*_sequential`, waiting for every loss
 * before submitting the next step — TF.js's loop (`await loss.data()`) always does the latter.
 *
 * Metrics (ms unless noted): keel_cpu_ms_per_step, keel_webgpu_ms_per_step, tfjs_cpu_ms_per_step,
 * tfjs_wasm_ms_per_step, tfjs_webgpu_ms_per_step, cpu_vs_tfjs_wasm (tfjs wasm / Keel CPU, ×),
 * webgpu_vs_tfjs_webgpu (tfjs webgpu / Keel WebGPU, ×), keel_{cpu,webgpu}_ms_per_step_sequential,
 * keel_cpu_sync_ms_per_step (the CPU device in sync mode), keel_cpu_simd_ms_per_step (task mode with
 * the plain-SIMD GEMM; the other Keel CPU sides run the relaxed-SIMD one where the engine has it, see
 * relaxed-simd.ts; metric keel_cpu_relaxed_simd says 1 or 0), numpy_ms (bench/py/mlp_numpy.py through
 * `python3`, OpenBLAS on every core, on Keel's own data: see numpy-peer.ts; skipped with one log line when
 * python3 or numpy is absent), keel_cpu_vs_numpy and keel_cpu_sync_vs_numpy (Keel ms / numpy ms, ×);
 * per core, robust on a shared machine: numpy_1thread_ms (one BLAS thread), keel_cpu_sync_cpu_ms and
 * numpy_1thread_cpu_ms (CPU time per step of the one-thread sides) and keel_vs_numpy_per_core_cpu
 * (their ratio); the 128-bit WebAssembly SIMD fused multiply-add peak measured in each CPU round
 * (wasm-fma-peak.ts: wasm_simd128_fma_gflops on every core at once and _1thread, the best round;
 * wasm_simd128_fma_relaxed 1 when it is relaxed_madd) and the floor it sets, wasm_simd128_step_floor_ms
 * (the step's GEMM FLOPs all at that peak, nothing else) and wasm_simd128_floor_vs_numpy (that floor /
 * numpy_ms: no Wasm SIMD128 CPU step can have a lower keel_cpu_vs_numpy);
 * loss_step_3_<side> (the same loss everywhere shows the same workload), mlp_step_gflop. WebGPU metrics
 * are absent when there is no adapter (the log says why). Writes the chart (chart.ts) to
 * bench/mlp-chart.svg.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { TrainDeviceKind } from '@keel/mlp';
import { type MachineInfo, type Metrics, median, metric, type Suite } from '../harness.ts';
import { type ChartBar, mlpChartSvg } from './chart.ts';
import { REFERENCE_MLP, stepMultiplyAdds } from './keel-mlp.ts';
import { runKeelTraining } from './keel-train.ts';
import { openNumpyPeer } from './numpy-peer.ts';
import { setRelaxedSimd } from './relaxed-simd.ts';
import { runTfjsMlp, type TfjsBackend } from './tfjs.ts';
import { fmaPeakModule, measureFmaPeak } from './wasm-fma-peak.ts';

export interface MlpSuiteOptions {
  /**
   * 'all' (default); 'webgpu': only Keel WebGPU and TF.js webgpu (the GPU machine's entry); 'cpu': only
   * the CPU sides; 'cpu-native': only Keel CPU (task and sync) and numpy. `pnpm bench mlp` takes it
   * from the environment variable `KEEL_BENCH_MLP_SIDES`.
   */
  readonly sides?: MlpSides;
  /** Rounds of the CPU sides (default 3). */
  readonly cpuRounds?: number;
  /** Timed steps per round: Keel CPU (default 10), TF.js wasm (default 4). */
  readonly keelCpuSteps?: number;
  readonly wasmSteps?: number;
  /** Timed steps of numpy per round (default 20). */
  readonly numpySteps?: number;
  /** Timed steps of TF.js cpu, one round: it is two orders of magnitude slower (default 2). */
  readonly tfjsCpuSteps?: number;
  /** Rounds and timed steps per round of the WebGPU sides (default 2 × 4: lavapipe is slow). */
  readonly gpuRounds?: number;
  readonly gpuSteps?: number;
  /**
   * Untimed steps before the timed ones of every WebGPU side (default 2). Each side's run creates its
   * device and pipelines anew, so these steps also let V8 re-optimise the step's code after the other
   * sides ran in the same process.
   */
  readonly gpuWarmup?: number;
  /**
   * Run the TF.js webgpu side between Keel's WebGPU sides (default true). False measures Keel's
   * sides alone, in the same round structure: whether the peer sharing the process changes Keel's figure.
   */
  readonly tfjsWebgpu?: boolean;
  /** Run Keel's sequential WebGPU side (`keel_webgpu_ms_per_step_sequential`) in each round (default true). */
  readonly keelSequential?: boolean;
  /** Where to write the chart (default bench/mlp-chart.svg); null: no chart. */
  readonly chartPath?: string | null;
  /** The command the chart names as its source (default 'pnpm bench mlp'). */
  readonly command?: string;
}

export type MlpSides = 'all' | 'webgpu' | 'cpu' | 'cpu-native';
const SIDE_CHOICES: readonly MlpSides[] = ['all', 'webgpu', 'cpu', 'cpu-native'];

/** Sides: their metric and chart label. */
const SIDES = {
  keel_cpu: { metric: 'keel_cpu_ms_per_step', label: 'Keel CPU device', keel: true },
  keel_cpu_sync: { metric: 'keel_cpu_sync_ms_per_step', label: 'Keel CPU, sync mode', keel: true },
  keel_cpu_simd: { metric: 'keel_cpu_simd_ms_per_step', label: 'Keel CPU, plain SIMD', keel: true },
  numpy: { metric: 'numpy_ms', label: 'numpy (OpenBLAS)', keel: false },
  numpy_1thread: { metric: 'numpy_1thread_ms', label: 'numpy, 1 BLAS thread', keel: false },
  keel_cpu_sequential: {
    metric: 'keel_cpu_ms_per_step_sequential',
    label: 'Keel CPU, awaiting each loss',
    keel: true,
  },
  tfjs_wasm: { metric: 'tfjs_wasm_ms_per_step', label: 'TF.js wasm', keel: false },
  tfjs_cpu: { metric: 'tfjs_cpu_ms_per_step', label: 'TF.js cpu', keel: false },
  keel_webgpu: { metric: 'keel_webgpu_ms_per_step', label: 'Keel WebGPU device', keel: true },
  keel_webgpu_sequential: {
    metric: 'keel_webgpu_ms_per_step_sequential',
    label: 'Keel WebGPU, awaiting each loss',
    keel: true,
  },
  tfjs_webgpu: { metric: 'tfjs_webgpu_ms_per_step', label: 'TF.js webgpu', keel: false },
} as const;
type Side = keyof typeof SIDES;

const DEFAULT_CHART = fileURLToPath(new URL('../../mlp-chart.svg', import.meta.url));

interface Samples {
  readonly ms: Partial<Record<Side, number[]>>;
  readonly losses: Partial<Record<Side, number[]>>;
  /** CPU time per step (ms) of the one-thread sides: Keel sync mode, numpy with one BLAS thread. */
  readonly cpuMs: Partial<Record<Side, number[]>>;
  /** 128-bit Wasm SIMD FMA peak (GFLOP/s) per CPU round: every core at once, one thread. */
  readonly fmaPeak: { all: number[]; one: number[]; relaxed: boolean };
}

function add(
  samples: Samples,
  side: Side,
  r: { stepMs: readonly number[]; losses: readonly number[] },
): void {
  const ms = samples.ms[side] ?? [];
  ms.push(...r.stepMs);
  samples.ms[side] = ms;
  samples.losses[side] ??= [...r.losses];
}

function addCpu(samples: Samples, side: Side, values: readonly number[]): void {
  const list = samples.cpuMs[side] ?? [];
  list.push(...values);
  samples.cpuMs[side] = list;
}

const med = (samples: Samples, side: Side): number => median(samples.ms[side] ?? []);

async function keel(
  device: TrainDeviceKind,
  steps: number,
  warmup: number,
  overlap: boolean,
  cpuMode: 'task' | 'sync' = 'task',
) {
  return runKeelTraining(device, steps, warmup, overlap, cpuMode);
}

async function tfjs(backend: TfjsBackend, steps: number, warmup: number) {
  const r = await runTfjsMlp(backend, { steps, warmup });
  return { stepMs: r.stepMs, losses: r.losses, adapter: r.adapter };
}

async function runCpuSides(
  samples: Samples,
  o: MlpSuiteOptions,
  sides: MlpSides,
  log: (line: string) => void,
): Promise<void> {
  const rounds = o.cpuRounds ?? 3;
  const keelSteps = o.keelCpuSteps ?? 10;
  const tfjsSides = sides !== 'cpu-native';
  // Relaxed SIMD on (Node 20: through V8's flag) for the Keel sides; one side runs plain SIMD.
  const relaxed = setRelaxedSimd(true);
  log(
    relaxed
      ? 'Keel CPU sides run the relaxed-SIMD GEMM (keel_cpu_simd: the plain-SIMD one)'
      : 'relaxed SIMD unavailable: every Keel CPU side runs the plain-SIMD GEMM',
  );
  const load = (): string => os.loadavg()[0]!.toFixed(1);
  log(`load average (1 min) at the start of the CPU sides: ${load()} on ${os.cpus().length} cores`);
  const opened = await openNumpyPeer();
  const numpy = 'peer' in opened ? opened.peer : undefined;
  log('peer' in opened ? `numpy peer: ${opened.peer.description}` : `numpy skipped: ${opened.skipped}`);
  const opened1 = numpy === undefined ? undefined : await openNumpyPeer({ threads: 1 });
  const numpy1 = opened1 !== undefined && 'peer' in opened1 ? opened1.peer : undefined;
  if (numpy1 !== undefined) log(`numpy one-thread peer: ${numpy1.description}`);
  const fma = await fmaPeakModule();
  samples.fmaPeak.relaxed = fma.relaxed;
  try {
    for (let round = 0; round < rounds; round++) {
      samples.fmaPeak.all.push((await measureFmaPeak(fma, os.cpus().length)).gflops);
      samples.fmaPeak.one.push((await measureFmaPeak(fma, 1)).gflops);
      add(samples, 'keel_cpu', await keel('cpu', keelSteps, 3, true));
      if (numpy !== undefined) add(samples, 'numpy', await numpy.run(3, o.numpySteps ?? 20));
      if (numpy1 !== undefined) {
        const r = await numpy1.run(3, o.numpySteps ?? 20);
        add(samples, 'numpy_1thread', r);
        addCpu(samples, 'numpy_1thread', r.cpuMs);
      }
      if (tfjsSides) add(samples, 'tfjs_wasm', await tfjs('wasm', o.wasmSteps ?? 4, 1));
      add(samples, 'keel_cpu_sequential', await keel('cpu', keelSteps, 3, false));
      const sync = await keel('cpu', keelSteps, 3, true, 'sync');
      add(samples, 'keel_cpu_sync', sync);
      addCpu(samples, 'keel_cpu_sync', [sync.cpuMsPerStep]);
      if (relaxed) {
        setRelaxedSimd(false);
        add(samples, 'keel_cpu_simd', await keel('cpu', keelSteps, 3, true));
        setRelaxedSimd(true);
      }
      const f = (side: Side): string =>
        samples.ms[side] === undefined ? '' : `, ${side} ${med(samples, side).toFixed(1)} ms`;
      log(
        `cpu round ${round + 1}/${rounds}: ${(Object.keys(SIDES) as Side[]).map(f).join('').slice(2)}, Wasm FMA peak ${samples.fmaPeak.all.at(-1)?.toFixed(1)} GFLOP/s (${samples.fmaPeak.one.at(-1)?.toFixed(1)} on one thread)`,
      );
    }
  } finally {
    numpy?.close();
    numpy1?.close();
  }
  log(`load average (1 min) after the CPU rounds: ${load()}`);
  if (tfjsSides) {
    add(samples, 'tfjs_cpu', await tfjs('cpu', o.tfjsCpuSteps ?? 2, 1));
    log(`tfjs_cpu ${med(samples, 'tfjs_cpu').toFixed(0)} ms/step`);
  }
}

async function runGpuSides(
  samples: Samples,
  o: MlpSuiteOptions,
  machine: MachineInfo,
  log: (line: string) => void,
): Promise<void> {
  const rounds = o.gpuRounds ?? 2;
  const steps = o.gpuSteps ?? 4;
  const warmup = o.gpuWarmup ?? 2;
  try {
    for (let round = 0; round < rounds; round++) {
      const k = await keel('webgpu', steps, warmup, true);
      add(samples, 'keel_webgpu', k);
      const gpu = o.tfjsWebgpu === false ? undefined : await tfjs('webgpu', steps, warmup);
      if (gpu !== undefined) add(samples, 'tfjs_webgpu', gpu);
      if (o.keelSequential !== false) {
        add(samples, 'keel_webgpu_sequential', await keel('webgpu', steps, warmup, false));
      }
      machine.adapter ??= gpu?.adapter ?? k.deviceName;
      log(
        `webgpu round ${round + 1}/${rounds} (this round: keel_webgpu ${median([...k.stepMs]).toFixed(3)} ms${gpu === undefined ? '' : `, tfjs_webgpu ${median([...gpu.stepMs]).toFixed(2)} ms`}; medians so far: keel_webgpu ${med(samples, 'keel_webgpu').toFixed(2)} ms, sequential ${med(samples, 'keel_webgpu_sequential').toFixed(2)} ms, tfjs_webgpu ${med(samples, 'tfjs_webgpu').toFixed(2)} ms (${machine.adapter})`,
      );
    }
  } catch (error) {
    log(`webgpu skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The metrics of DESIGN.md § Benchmark output from the samples. */
function metricsOf(samples: Samples): Metrics {
  const metrics: Metrics = {};
  for (const side of Object.keys(SIDES) as Side[]) {
    if (samples.ms[side] !== undefined) metrics[SIDES[side].metric] = metric(med(samples, side), 'ms');
  }
  if (samples.ms.keel_cpu !== undefined && samples.ms.tfjs_wasm !== undefined) {
    metrics.cpu_vs_tfjs_wasm = metric(med(samples, 'tfjs_wasm') / med(samples, 'keel_cpu'), '×');
  }
  if (samples.ms.keel_cpu !== undefined && samples.ms.numpy !== undefined) {
    metrics.keel_cpu_vs_numpy = metric(med(samples, 'keel_cpu') / med(samples, 'numpy'), '×');
  }
  const peak = samples.fmaPeak;
  if (peak.all.length > 0) {
    // The best round: the floor is then a lower bound for any 128-bit Wasm SIMD step.
    const best = Math.max(...peak.all);
    metrics.wasm_simd128_fma_gflops = metric(best, 'GFLOP/s');
    metrics.wasm_simd128_fma_gflops_1thread = metric(Math.max(...peak.one), 'GFLOP/s');
    metrics.wasm_simd128_fma_relaxed = metric(peak.relaxed ? 1 : 0, 'bool');
    const floorMs = ((2 * stepMultiplyAdds(REFERENCE_MLP)) / (best * 1e9)) * 1e3;
    metrics.wasm_simd128_step_floor_ms = metric(floorMs, 'ms');
    if (samples.ms.numpy !== undefined) {
      metrics.wasm_simd128_floor_vs_numpy = metric(floorMs / med(samples, 'numpy'), '×');
    }
  }
  if (samples.ms.keel_cpu_simd !== undefined && samples.ms.numpy !== undefined) {
    metrics.keel_cpu_simd_vs_numpy = metric(med(samples, 'keel_cpu_simd') / med(samples, 'numpy'), '×');
  }
  const syncCpu = samples.cpuMs.keel_cpu_sync;
  const numpyCpu = samples.cpuMs.numpy_1thread;
  if (syncCpu !== undefined) metrics.keel_cpu_sync_cpu_ms = metric(median(syncCpu), 'ms');
  if (numpyCpu !== undefined) metrics.numpy_1thread_cpu_ms = metric(median(numpyCpu), 'ms');
  if (syncCpu !== undefined && numpyCpu !== undefined) {
    metrics.keel_vs_numpy_per_core_cpu = metric(median(syncCpu) / median(numpyCpu), '×');
  }
  if (samples.ms.keel_cpu_sync !== undefined && samples.ms.numpy !== undefined) {
    metrics.keel_cpu_sync_vs_numpy = metric(med(samples, 'keel_cpu_sync') / med(samples, 'numpy'), '×');
  }
  if (samples.ms.keel_webgpu !== undefined && samples.ms.tfjs_webgpu !== undefined) {
    metrics.webgpu_vs_tfjs_webgpu = metric(med(samples, 'tfjs_webgpu') / med(samples, 'keel_webgpu'), '×');
  }
  for (const side of Object.keys(SIDES) as Side[]) {
    const l = samples.losses[side];
    if (l !== undefined && l.length >= 3) metrics[`loss_step_3_${side}`] = metric(l[2]!, '');
  }
  if (samples.ms.keel_cpu !== undefined) {
    metrics.keel_cpu_relaxed_simd = metric(samples.ms.keel_cpu_simd === undefined ? 0 : 1, 'bool');
  }
  metrics.mlp_step_gflop = metric((2 * stepMultiplyAdds(REFERENCE_MLP)) / 1e9, 'GFLOP');
  return metrics;
}

function writeChart(
  path: string,
  command: string,
  samples: Samples,
  metrics: Metrics,
  machine: MachineInfo,
): void {
  const bar = (side: Side): ChartBar => ({
    label: SIDES[side].label,
    ms: med(samples, side),
    keel: SIDES[side].keel,
  });
  const ratio = (name: string, text: string): string[] =>
    metrics[name] === undefined ? [] : [`${text}: ${metrics[name].value.toFixed(2)}×`];
  const svg = mlpChartSvg({
    title: 'Reference MLP training step: 784-512-512-10, batch 256, SGD, loss read every step',
    notes: [
      `${machine.cpus}, node ${machine.node}${machine.adapter ? `; WebGPU adapter: ${machine.adapter}` : ''}`,
      [
        ...ratio('cpu_vs_tfjs_wasm', 'Keel CPU vs TF.js wasm'),
        ...ratio('keel_cpu_vs_numpy', 'Keel CPU / numpy'),
        ...ratio('webgpu_vs_tfjs_webgpu', 'Keel WebGPU vs TF.js webgpu'),
      ].join(';  ') || 'ratios: not measured',
      `${command}, ${new Date().toISOString().slice(0, 10)}; medians of interleaved rounds`,
    ],
    groups: [
      {
        name: 'CPU',
        bars: (
          ['keel_cpu', 'keel_cpu_sequential', 'keel_cpu_sync', 'numpy', 'tfjs_wasm', 'tfjs_cpu'] as const
        )
          .filter((s) => samples.ms[s])
          .map(bar),
      },
      {
        name: 'WebGPU',
        bars: (['keel_webgpu', 'keel_webgpu_sequential', 'tfjs_webgpu'] as const)
          .filter((s) => samples.ms[s])
          .map(bar),
      },
    ],
  });
  writeFileSync(path, svg);
}

/** `KEEL_BENCH_MLP_SIDES` (default 'all'); an unknown value throws, naming the choices. */
function sidesFromEnv(): MlpSides {
  const v = process.env.KEEL_BENCH_MLP_SIDES;
  if (v === undefined || v === '') return 'all';
  const found = SIDE_CHOICES.find((c) => c === v);
  if (found === undefined) {
    throw new RangeError(`KEEL_BENCH_MLP_SIDES must be one of ${SIDE_CHOICES.join(', ')}; got '${v}'`);
  }
  return found;
}

export function createMlpSuite(options: MlpSuiteOptions = {}): Suite {
  return {
    name: 'mlp',
    description:
      'reference MLP training step: Keel (CPU, WebGPU) vs TensorFlow.js cpu / wasm / webgpu and numpy',
    async run({ machine, log }): Promise<Metrics> {
      const samples: Samples = {
        ms: {},
        losses: {},
        cpuMs: {},
        fmaPeak: { all: [], one: [], relaxed: false },
      };
      const sides = options.sides ?? sidesFromEnv();
      if (sides !== 'webgpu') await runCpuSides(samples, options, sides, log);
      if (sides === 'all' || sides === 'webgpu') await runGpuSides(samples, options, machine, log);
      const metrics = metricsOf(samples);
      const chartPath = options.chartPath === undefined ? DEFAULT_CHART : options.chartPath;
      if (chartPath !== null) {
        writeChart(chartPath, options.command ?? 'pnpm bench mlp', samples, metrics, machine);
        log(`chart written to ${chartPath}`);
      }
      return metrics;
    },
  };
}

/** The suite with its defaults (every side, chart to bench/mlp-chart.svg). */
export const mlpSuite: Suite = createMlpSuite();
