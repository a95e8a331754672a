/**
 * The GPU machine's entry (no Node install there; see ../shared/gpu/README.md): runs every WebGPU
 * measurement in one process, so that one machine start yields all figures.
 *
 *   bash ../shared/gpu/pack.sh bench/src/gpu-entry.ts        # here, from the repo root
 *   bash .device/start.sh [--rounds N] [--steps N] [--gpu-warmup N]   # there, with .device carried along
 *
 * Runs the `device-webgpu` suite, then the `mlp` suite's WebGPU sides (Keel's WebGPU device against
 * TensorFlow.js webgpu on the same Dawn adapter; the CPU sides need files the bundle does not carry)
 * plus its PyTorch peer: bench/py/mlp_torch.py run with `python3` right after Keel's rounds (eager and
 * whole-step CUDA graph; torch_eager_ms, torch_cudagraph_ms, keel_webgpu_vs_torch_eager,
 * keel_webgpu_vs_torch_cudagraph = Keel ms / PyTorch ms; skipped with a one-line reason where python3,
 * torch or CUDA is missing; the script is a tracked file found from the repo root, see torch-peer.ts).
 * Then traces `--trace-steps` Keel WebGPU training steps (after 10 untraced ones) with the device
 * profiler (GPU timestamps where the adapter has timestamp-query) and prints a summary: per-kernel GPU
 * µs, each step's span and the gap between consecutive steps' last and first dispatch, and the
 * `queue.submit` and `popErrorScope` calls per untraced warm step (keel_webgpu_submits_per_step,
 * keel_webgpu_scope_pops_per_step: 1 and 3 with submission batches).
 * Prints each suite's JSON (DESIGN.md § Benchmark output) on stdout and, when OUT is set, writes
 * $OUT/device-webgpu.json, $OUT/mlp.json, $OUT/mlp-chart.svg, $OUT/step-trace.json (Chrome trace JSON:
 * open it in ui.perfetto.dev) and $OUT/mlp-trace.json (the summary's figures). Progress goes to stderr.
 * `--parts device-webgpu,mlp,trace` (default: all three) runs a subset; the part `torch` alone runs
 * only the PyTorch peer (no ratios; a quick check of the machine's python3). `--tfjs 0` leaves the TF.js
 * side out of the mlp suite's rounds (Keel's sides alone, same structure) and `--torch 0` the PyTorch
 * peer; `--sequential 0` leaves out Keel's sequential side. Exits 1 if a part failed
 * or produced no WebGPU figures.
 *
 * `--tilings 16x16x8,s32x32x16_4x4` also times Keel's WebGPU training step with the WGSL GEMMs generated
 * for each tiling (GemmTiling, spelled as `parseGemmTiling` reads it: `WGxTMxTN` register tilings,
 * `sBMxBNxBK_TMxTN` workgroup-memory tilings, `sBMxBNxBK_TMxTNkKS` with K split over KS groups,
 * `WIDE__NARROW` per-shape pairs such as `s64x64x16_4x4__s16x16x16_2x2k4`, `FORWARD+WEIGHTGRAD+INPUTGRAD`
 * per-kernel triples; `--tilings candidates` stands for WGSL_GEMM_TILING_CANDIDATES) and writes
 * $OUT/mlp-tilings.json, to choose the tiling for a kind of adapter. Then, unless `--trace-tilings 0`,
 * traces `--trace-tilings` steps (default 5, after 10 untraced) per tiling on a Dawn instance with
 * timestamp quantization off and adds each tiling's GPU time per step (`trace_step_busy_us_<tiling>`,
 * the median step's summed dispatch time) and per kernel (`trace_kernel_<kernel>_us_per_step_<tiling>`):
 * the kernels' own figures, which the host time per step does not hide.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createWebGpuDevice } from '@keel/device-webgpu';
import {
  type GemmTiling,
  gemmTilingName,
  parseGemmTiling,
  TRAIN_QUEUES,
  trainMlp,
  WGSL_GEMM_TILING_CANDIDATES,
} from '@keel/mlp';
import { create } from 'webgpu';
import { type Metrics, machineInfo, median, metric, type Suite, type SuiteResult } from './harness.ts';
import { createMlpSuite } from './mlp/suite.ts';
import { runTorchPeer, torchMetrics } from './mlp/torch-peer.ts';
import { formatStepTraceSummary, summarizeStepTrace } from './mlp/trace-summary.ts';
import { deviceWebGpuSuite } from './suites/device-webgpu.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '30' },
    'gpu-warmup': { type: 'string', default: '2' },
    tilings: { type: 'string', default: '' },
    parts: { type: 'string', default: 'device-webgpu,mlp,trace' },
    'torch-steps': { type: 'string', default: '50' },
    'torch-rounds': { type: 'string', default: '3' },
    'trace-steps': { type: 'string', default: '5' },
    'trace-tilings': { type: 'string', default: '5' },
    tfjs: { type: 'string', default: '1' },
    torch: { type: 'string', default: '1' },
    sequential: { type: 'string', default: '1' },
  },
});
const parts = new Set(values.parts.split(',').filter((p) => p !== ''));
const out = process.env.OUT === undefined || process.env.OUT === '' ? undefined : process.env.OUT;
const mlpSuite = createMlpSuite({
  sides: 'webgpu',
  gpuRounds: Number(values.rounds),
  gpuSteps: Number(values.steps),
  gpuWarmup: Number(values['gpu-warmup']),
  tfjsWebgpu: values.tfjs !== '0',
  keelSequential: values.sequential !== '0',
  chartPath: out === undefined ? null : path.join(out, 'mlp-chart.svg'),
  command: 'bash .device/start.sh (bench/src/gpu-entry.ts)',
});

/** The mlp suite (or nothing) plus its PyTorch peer, run right after Keel's and TF.js's rounds. */
const withTorch = (suite: Suite | undefined): Suite => ({
  name: suite?.name ?? 'mlp-torch',
  description: `${suite?.description ?? 'reference MLP step'}; PyTorch eager and CUDA graph (python3)`,
  async run(context): Promise<Metrics> {
    const metrics = suite === undefined ? {} : await suite.run(context);
    const log = (line: string): void => context.log(`torch: ${line}`);
    const torch = await runTorchPeer({
      steps: Number(values['torch-steps']),
      rounds: Number(values['torch-rounds']),
      log,
    });
    if (torch.skipped !== undefined) {
      log(`skipped: ${torch.skipped}`);
      return metrics;
    }
    if (torch.cudagraph_error !== undefined) log(`CUDA graph side failed: ${torch.cudagraph_error}`);
    log(
      `torch ${torch.torch} on ${torch.device}: eager ${torch.eager_ms} ms, CUDA graph ${torch.cudagraph_ms} ms`,
    );
    return { ...metrics, ...torchMetrics(torch, metrics.keel_webgpu_ms_per_step?.value) };
  },
});

/**
 * Traces `--trace-steps` Keel WebGPU training steps (after 10 untraced ones) and writes
 * $OUT/step-trace.json plus the summary's figures ($OUT/mlp-trace.json, stdout).
 */
async function traceSteps(): Promise<boolean> {
  const traced = Number(values['trace-steps']);
  const log = (line: string): void => {
    process.stderr.write(`[trace] ${line}\n`);
  };
  // Its own Dawn instance, made with timestamp quantization off: once the TF.js side has run,
  // navigator.gpu is TF.js's instance (made without Keel's flags), and Keel would take it, with GPU
  // timestamps rounded down to 65 536 ns.
  const gpu = create(['disable-dawn-features=timestamp_quantization']);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) {
    log('failed: no WebGPU adapter');
    return false;
  }
  const device = await createWebGpuDevice({ adapter, queueCount: TRAIN_QUEUES, label: 'keel trace' });
  try {
    // queue.submit and popErrorScope calls per untraced warm step (steps 4..10).
    let at4 = device.stats;
    let at10 = device.stats;
    const r = await trainMlp({
      device,
      steps: 10 + traced,
      warmup: 3,
      pregeneratedBatches: 8,
      traceSteps: traced,
      onStep: (p) => {
        if (p.step === 4) at4 = device.stats;
        if (p.step === 10) at10 = device.stats;
      },
    });
    if (r.trace === undefined) throw new Error('the device recorded no trace');
    if (out !== undefined) writeFileSync(path.join(out, 'step-trace.json'), `${JSON.stringify(r.trace)}\n`);
    const summary = summarizeStepTrace(r.trace);
    log(
      `${r.deviceName}: ${r.trace.traceEvents.length} events${out === undefined ? '' : ` in ${path.join(out, 'step-trace.json')}`}`,
    );
    for (const line of formatStepTraceSummary(summary)) log(line);
    const med = (v: readonly number[]): number => median([...v]);
    const metrics: Metrics = {
      trace_steps: metric(summary.steps, ''),
      trace_dispatches_per_step: metric(
        summary.kernels.reduce((n, k) => n + k.perStep, 0),
        '',
      ),
      trace_step_span_us: metric(med(summary.spanUs), 'µs'),
      trace_step_busy_us: metric(med(summary.busyUs), 'µs'),
      trace_step_gap_us: metric(med(summary.gapUs), 'µs'),
      trace_ms_per_step: metric(r.msPerStep, 'ms'),
      keel_webgpu_submits_per_step: metric((at10.submissions - at4.submissions) / 6, ''),
      keel_webgpu_scope_pops_per_step: metric((at10.errorScopePops - at4.errorScopePops) / 6, ''),
    };
    for (const k of summary.kernels)
      metrics[`trace_kernel_${k.name}_us_per_step`] = metric(k.usPerStep, 'µs');
    const machine = machineInfo();
    machine.adapter = r.deviceName;
    const json = `${JSON.stringify({ suite: 'mlp-trace', machine, timing: summary.timing, metrics }, null, 2)}\n`;
    process.stdout.write(json);
    if (out !== undefined) writeFileSync(path.join(out, 'mlp-trace.json'), json);
    return summary.steps > 0;
  } catch (error) {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return false;
  } finally {
    await device.destroy();
  }
}

async function runSuite(suite: Suite, required: string): Promise<boolean> {
  const machine = machineInfo();
  const log = (line: string): void => {
    process.stderr.write(`[${suite.name}] ${line}\n`);
  };
  try {
    const metrics = await suite.run({ machine, log });
    const result: SuiteResult = { suite: suite.name, machine, metrics };
    const json = `${JSON.stringify(result, null, 2)}\n`;
    process.stdout.write(json);
    if (out !== undefined) writeFileSync(path.join(out, `${suite.name}.json`), json);
    return metrics[required] !== undefined;
  } catch (error) {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return false;
  }
}

/**
 * GPU time per step of each tiling: `traced` steps traced (after 10 untraced) on one Dawn instance made
 * with timestamp quantization off, one Keel device per tiling. A tiling that fails is logged and skipped.
 */
async function traceTilings(tilings: readonly GemmTiling[], traced: number): Promise<Metrics> {
  const metrics: Metrics = {};
  const gpu = create(['disable-dawn-features=timestamp_quantization']);
  for (const wgslTiling of tilings) {
    const name = gemmTilingName(wgslTiling);
    let device: Awaited<ReturnType<typeof createWebGpuDevice>> | undefined;
    try {
      // An adapter makes one device: a fresh one per tiling.
      const adapter = await gpu.requestAdapter();
      if (adapter === null) throw new Error('no WebGPU adapter');
      device = await createWebGpuDevice({ adapter, queueCount: TRAIN_QUEUES, label: `keel ${name}` });
      const r = await trainMlp({
        device,
        steps: 10 + traced,
        warmup: 3,
        pregeneratedBatches: 8,
        traceSteps: traced,
        wgslTiling,
      });
      if (r.trace === undefined) throw new Error('the device recorded no trace');
      const summary = summarizeStepTrace(r.trace);
      metrics[`trace_step_busy_us_${name}`] = metric(median([...summary.busyUs]), 'µs');
      metrics[`trace_step_span_us_${name}`] = metric(median([...summary.spanUs]), 'µs');
      for (const k of summary.kernels)
        metrics[`trace_kernel_${k.name}_us_per_step_${name}`] = metric(k.usPerStep, 'µs');
      const kernels = summary.kernels.map((k) => `${k.name} ${k.usPerStep.toFixed(1)}`).join(', ');
      process.stderr.write(
        `[tilings] trace ${name} (${summary.timing}): busy ${median([...summary.busyUs]).toFixed(1)} µs/step: ${kernels}\n`,
      );
    } catch (error) {
      process.stderr.write(
        `[tilings] trace ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    } finally {
      await device?.destroy();
    }
  }
  return metrics;
}

/** Keel's WebGPU step (ms, median of rounds) for each tiling of `--tilings`. */
async function sweepTilings(spec: string): Promise<boolean> {
  const tilings: GemmTiling[] = spec
    .split(',')
    .flatMap((t) => (t === 'candidates' ? WGSL_GEMM_TILING_CANDIDATES : [t]))
    .filter((t) => t !== '')
    .map(parseGemmTiling);
  if (tilings.length === 0) return true;
  const metrics: Metrics = {};
  const samples = new Map<string, number[]>();
  const steps = Number(values.steps);
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const wgslTiling of tilings) {
      const name = `keel_webgpu_ms_per_step_${gemmTilingName(wgslTiling)}`;
      try {
        const r = await trainMlp({
          device: 'webgpu',
          steps: steps + 3,
          warmup: 3,
          pregeneratedBatches: 8,
          wgslTiling,
        });
        samples.set(name, [...(samples.get(name) ?? []), r.msPerStep]);
        process.stderr.write(`[tilings] round ${round + 1}: ${name} ${r.msPerStep.toFixed(3)} ms\n`);
      } catch (error) {
        process.stderr.write(
          `[tilings] ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
  }
  for (const [name, ms] of samples) metrics[name] = metric(median(ms), 'ms');
  const traced = Number(values['trace-tilings']);
  if (traced > 0) Object.assign(metrics, await traceTilings(tilings, traced));
  const json = `${JSON.stringify({ suite: 'mlp-tilings', machine: machineInfo(), metrics }, null, 2)}\n`;
  process.stdout.write(json);
  if (out !== undefined) writeFileSync(path.join(out, 'mlp-tilings.json'), json);
  return samples.size > 0;
}

const ok = [
  parts.has('device-webgpu') ? await runSuite(deviceWebGpuSuite, 'replay_vs_floor_ratio') : true,
  parts.has('mlp')
    ? await runSuite(values.torch === '0' ? mlpSuite : withTorch(mlpSuite), 'keel_webgpu_ms_per_step')
    : true,
  parts.has('torch') && !parts.has('mlp') ? await runSuite(withTorch(undefined), 'torch_eager_ms') : true,
  await sweepTilings(values.tilings),
  parts.has('trace') ? await traceSteps() : true,
].every(Boolean);
// Dawn can keep the event loop alive after its devices are destroyed; everything is written, so exit.
process.exit(ok ? 0 : 1);
