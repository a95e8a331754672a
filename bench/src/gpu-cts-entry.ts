/**
 * The conformance suite (@keel/cts) on the GPU machine: every case, in both ref modes, on Keel's WebGPU
 * device over the machine's adapter (Dawn on the NVIDIA Vulkan driver), without vitest (there is no
 * Node install there; see ../shared/gpu/README.md). The same cases CI runs on lavapipe and Chromium,
 * here on a real GPU.
 *
 *   bash ../shared/gpu/pack.sh bench/src/gpu-cts-entry.ts     # here, from the repo root
 *   bash .device/start.sh [--timeout-ms N]                    # there, with .device carried along
 *
 * Prints one line per failing case and a summary (adapter, passed/total, slowest cases) on stderr,
 * the outcomes as JSON on stdout and, when OUT is set, in $OUT/cts-webgpu.json. Exits 1 when a case
 * failed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { runConformanceCases } from '../../packages/cts/src/run-cases.ts';
// The handle the package's own conformance test makes (bundled from the package's sources).
import { ctsWebGpuDevice } from '../../packages/device-webgpu/test/conformance-options.ts';

const { values } = parseArgs({ options: { 'timeout-ms': { type: 'string', default: '10000' } } });
const timeoutMs = Number(values['timeout-ms']);

const probe = await createWebGpuDevice();
const adapter = probe.info.name;
await probe.destroy();
const t0 = performance.now();
const outcomes = await runConformanceCases(ctsWebGpuDevice, { timeoutMs });
const failed = outcomes.filter((o) => !o.ok);
for (const o of failed) process.stderr.write(`FAIL ${o.name}: ${o.error}\n`);
const slowest = [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, 5);
process.stderr.write(
  `cts on ${adapter}: ${outcomes.length - failed.length}/${outcomes.length} passed in ${((performance.now() - t0) / 1000).toFixed(1)} s; slowest: ${slowest.map((o) => `${o.name} ${o.ms.toFixed(0)} ms`).join(', ')}\n`,
);
const json = `${JSON.stringify({ adapter, passed: outcomes.length - failed.length, total: outcomes.length, outcomes }, null, 2)}\n`;
process.stdout.write(json);
const out = process.env.OUT;
if (out !== undefined && out !== '') writeFileSync(path.join(out, 'cts-webgpu.json'), json);
process.exit(failed.length === 0 ? 0 : 1);
