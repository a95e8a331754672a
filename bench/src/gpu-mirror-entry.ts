/**
 * The GPU machine's entry for the `mirror` suite's WebGPU side (see gpu-entry.ts for the packing):
 *
 *   bash ../shared/gpu/pack.sh bench/src/gpu-mirror-entry.ts   # here, from the repo root
 *   bash .device/start.sh [--rounds N] [--steps N]             # there, with .device carried along
 *
 * Prints the suite's JSON (DESIGN.md § Benchmark output) on stdout and writes $OUT/mirror.json when
 * OUT is set. Exits 1 when no WebGPU figure came out.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { machineInfo, type SuiteResult } from './harness.ts';
import { createMirrorSuite } from './suites/mirror.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, steps: { type: 'string', default: '100' } },
});
const suite = createMirrorSuite({
  cpu: false,
  webgpuRounds: Number(values.rounds),
  webgpuSteps: Number(values.steps),
});
const machine = machineInfo();
const metrics = await suite.run({ machine, log: (line) => process.stderr.write(`[mirror] ${line}\n`) });
const result: SuiteResult = { suite: suite.name, machine, metrics };
const json = `${JSON.stringify(result, null, 2)}\n`;
process.stdout.write(json);
const out = process.env.OUT;
if (out !== undefined && out !== '') writeFileSync(path.join(out, 'mirror.json'), json);
process.exit(metrics.webgpu_ms_per_step_no_mirror === undefined ? 1 : 0);
