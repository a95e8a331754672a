/**
 * Runs the device-webgpu suite on the GPU machine (no Node install there: bundled with
 * `bash ../shared/gpu/pack.sh bench/src/device-webgpu/gpu-entry.ts`, then run with
 * `bash .device/start.sh`). Prints the suite's JSON (DESIGN.md § Benchmark output) on stdout and, when
 * OUT is set, writes it to $OUT/device-webgpu.json. Progress goes to stderr.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machineInfo, type SuiteResult } from '../harness.ts';
import { deviceWebGpuSuite } from '../suites/device-webgpu.ts';

const machine = machineInfo();
const log = (line: string): void => {
  process.stderr.write(`[${deviceWebGpuSuite.name}] ${line}\n`);
};

try {
  const metrics = await deviceWebGpuSuite.run({ machine, log });
  const result: SuiteResult = { suite: deviceWebGpuSuite.name, machine, metrics };
  const json = `${JSON.stringify(result, null, 2)}\n`;
  process.stdout.write(json);
  const out = process.env.OUT;
  if (out !== undefined && out !== '') writeFileSync(join(out, 'device-webgpu.json'), json);
  process.exit(0);
} catch (error) {
  process.stderr.write(
    `[${deviceWebGpuSuite.name}] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
}
