/**
 * The GPU machine's entry (no Node install there; see ../shared/gpu/README.md): runs every WebGPU
 * measurement in one process, so that one machine start yields all figures.
 *
 *   bash ../shared/gpu/pack.sh bench/src/gpu-entry.ts        # here, from the repo root
 *   bash .device/start.sh [--rounds N] [--steps N]           # there, with .device carried along
 *
 * Runs the `device-webgpu` suite, then the `mlp` suite's WebGPU sides (Keel's WebGPU device against
 * TensorFlow.js webgpu on the same Dawn adapter; the CPU sides need files the bundle does not carry).
 * Prints each suite's JSON (DESIGN.md § Benchmark output) on stdout and, when OUT is set, writes
 * $OUT/device-webgpu.json, $OUT/mlp.json and $OUT/mlp-chart.svg. Progress goes to stderr. Exits 1 if a
 * suite failed or produced no WebGPU figures.
 *
 * `--tilings 16x16x8,s32x32x16_4x4` also times Keel's WebGPU training step with the WGSL GEMMs generated
 * for each tiling (GemmTiling, spelled as `parseGemmTiling` reads it: `WGxTMxTN` register tilings,
 * `sBMxBNxBK_TMxTN` workgroup-memory tilings) and writes $OUT/mlp-tilings.json, to choose the tiling
 * for a kind of adapter.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type GemmTiling, gemmTilingName, parseGemmTiling, trainMlp } from '@keel/mlp';
import { type Metrics, machineInfo, median, metric, type Suite, type SuiteResult } from './harness.ts';
import { createMlpSuite } from './mlp/suite.ts';
import { deviceWebGpuSuite } from './suites/device-webgpu.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '30' },
    tilings: { type: 'string', default: '' },
  },
});
const out = process.env.OUT === undefined || process.env.OUT === '' ? undefined : process.env.OUT;
const mlpSuite = createMlpSuite({
  sides: 'webgpu',
  gpuRounds: Number(values.rounds),
  gpuSteps: Number(values.steps),
  chartPath: out === undefined ? null : path.join(out, 'mlp-chart.svg'),
  command: 'bash .device/start.sh (bench/src/gpu-entry.ts)',
});

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

/** Keel's WebGPU step (ms, median of rounds) for each tiling of `--tilings`. */
async function sweepTilings(spec: string): Promise<boolean> {
  const tilings: GemmTiling[] = spec
    .split(',')
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
  const json = `${JSON.stringify({ suite: 'mlp-tilings', machine: machineInfo(), metrics }, null, 2)}\n`;
  process.stdout.write(json);
  if (out !== undefined) writeFileSync(path.join(out, 'mlp-tilings.json'), json);
  return samples.size > 0;
}

const ok = [
  await runSuite(deviceWebGpuSuite, 'replay_vs_floor_ratio'),
  await runSuite(mlpSuite, 'keel_webgpu_ms_per_step'),
  await sweepTilings(values.tilings),
].every(Boolean);
// Dawn can keep the event loop alive after its devices are destroyed; everything is written, so exit.
process.exit(ok ? 0 : 1);
