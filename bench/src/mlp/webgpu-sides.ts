/**
 * The `mlp` suite's WebGPU sides only (Keel's WebGPU device and TensorFlow.js webgpu on the same Dawn
 * adapter, interleaved in rounds, medians), without the CPU sides that `pnpm bench mlp` runs first:
 *
 *   node --import tsx bench/src/mlp/webgpu-sides.ts [--rounds N] [--steps N]
 *
 * Prints the suite's JSON (DESIGN.md § Benchmark output) on stdout; progress on stderr; no chart.
 */
import { parseArgs } from 'node:util';
import { machineInfo } from '../harness.ts';
import { createMlpSuite } from './suite.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '6' },
  },
});
const suite = createMlpSuite({
  sides: 'webgpu',
  gpuRounds: Number(values.rounds),
  gpuSteps: Number(values.steps),
  chartPath: null,
  command: 'node --import tsx bench/src/mlp/webgpu-sides.ts',
});
const machine = machineInfo();
const metrics = await suite.run({ machine, log: (line) => process.stderr.write(`[mlp] ${line}\n`) });
process.stdout.write(`${JSON.stringify({ suite: 'mlp', machine, metrics }, null, 2)}\n`);
process.exit(0);
