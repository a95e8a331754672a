/**
 * The `mlp` suite's WebGPU sides on a GPU machine without Node (see /work/shared/gpu/README.md):
 * Keel's WebGPU device (the demo's `trainMlp`, overlapped and awaiting each loss) against TensorFlow.js
 * webgpu on the same Dawn adapter. CPU sides are left out: the CPU kernel module and TF.js wasm's
 * binaries are files next to their packages, which the bundle does not carry.
 *
 *   bash /work/shared/gpu/pack.sh bench/src/mlp/gpu-entry.ts      # here, from the repo root
 *   bash .device/start.sh [--rounds N] [--steps N]                  # there
 *
 * Prints the suite's JSON (DESIGN.md § Benchmark output) on stdout and, when OUT is set, writes it to
 * $OUT/mlp.json and the chart to $OUT/mlp-chart.svg. Progress goes to stderr.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { machineInfo, type SuiteResult } from '../harness.ts';
import { createMlpSuite } from './suite.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '30' },
  },
});
const out = process.env.OUT;
const suite = createMlpSuite({
  sides: 'webgpu',
  gpuRounds: Number(values.rounds),
  gpuSteps: Number(values.steps),
  chartPath: out === undefined ? null : path.join(out, 'mlp-chart.svg'),
  command: 'bash .device/start.sh (bench/src/mlp/gpu-entry.ts)',
});
const machine = machineInfo();
const metrics = await suite.run({ machine, log: (line) => process.stderr.write(`[mlp] ${line}\n`) });
const result: SuiteResult = { suite: suite.name, machine, metrics };
const json = `${JSON.stringify(result, null, 2)}\n`;
process.stdout.write(json);
if (out !== undefined) writeFileSync(path.join(out, 'mlp.json'), json);
// Dawn can keep the event loop alive after its devices are destroyed; everything is written, so exit.
// Without the WebGPU figures (no adapter: the log says why) the run failed.
process.exit(metrics.keel_webgpu_ms_per_step === undefined ? 1 : 0);
