/**
 * The GPU machine's entry for data-parallel scaling (issue 18; no Node install there, see
 * ../shared/gpu/README.md):
 *
 *   bash ../shared/gpu/pack.sh bench/src/gpu-multi-entry.ts      # here, from the repo root
 *   bash .device/start.sh [--rounds N] [--steps N] [--batch B]     # there, with .device carried along
 *
 * Lists the WebGPU adapters Dawn offers (`listWebGpuAdapters`), then trains the reference MLP
 * data-parallel (`trainMlpDataParallel`, interleaved rounds, medians) on:
 * - `1_gpu`: webgpu:0;
 * - `2_gpus`: webgpu:0,webgpu:1 and `4_gpus`: webgpu:0..3, where that many adapters are present;
 * - `2_devices_1_gpu`: webgpu:0x2 (two Dawn devices on one GPU).
 * A list that cannot run (e.g. a second adapter with the same name as the first: Dawn's node bindings
 * select adapters by name) is reported under `failed` with the reason, and the others still run.
 * Prints `{ suite: 'multi-device-gpu', machine, adapters, failed, metrics }` on stdout and, when OUT
 * is set, writes it to $OUT/multi-device-gpu.json. Exits 1 if no list produced a figure. Where adapters
 * share a name, `envProbes` records which adapters a child process sees under a few environment
 * variables (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, Mesa's device select), to find a per-process
 * way to reach each GPU (`KEEL_PROBE_ENV=1` probes with distinct adapters too).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { listWebGpuAdapters } from '@keel/device-webgpu';
import { machineInfo } from './harness.ts';
import { nvidiaBusIds, perGpuOpener } from './multi-device/per-gpu-dawn.ts';
import { type DeviceOpener, measureScaling } from './multi-device/scaling.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '40' },
    batch: { type: 'string', default: '256' },
    'list-only': { type: 'boolean', default: false },
  },
});
if (values['list-only']) {
  // Child mode of the probe below: the adapters this process (with its environment) sees.
  process.stdout.write(`${JSON.stringify(await listWebGpuAdapters())}\n`);
  process.exit(0);
}
const out = process.env.OUT === undefined || process.env.OUT === '' ? undefined : process.env.OUT;
const log = (line: string): void => {
  process.stderr.write(`[multi-device-gpu] ${line}\n`);
};

const adapters = await listWebGpuAdapters();
log(
  `adapters: ${adapters.map((a) => `${a.index}: ${a.name} (${a.backend}${a.selectable ? '' : ', not selectable'})`).join('; ') || 'none'}`,
);
/**
 * Identical adapters (same name) are not selectable in one process (Dawn's node bindings select by
 * name): probe whether an environment variable below Dawn narrows what a process sees, so that one
 * process per GPU could reach each. Each variant lists the adapters a child process sees.
 */
const ENV_PROBES: readonly Record<string, string>[] = [
  { CUDA_VISIBLE_DEVICES: '1' },
  { NVIDIA_VISIBLE_DEVICES: '1' },
  { MESA_VK_DEVICE_SELECT: 'list' },
  { DRI_PRIME: '1', MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE: '1' },
];
const envProbes: { env: Record<string, string>; adapters: unknown; stderr: string }[] = [];
if (adapters.some((a) => !a.selectable) || process.env.KEEL_PROBE_ENV === '1') {
  for (const env of ENV_PROBES) {
    const child = spawnSync(process.execPath, [process.argv[1]!, '--list-only'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    let listed: unknown = null;
    try {
      listed = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? 'null');
    } catch {
      listed = child.stdout.slice(0, 500);
    }
    envProbes.push({ env, adapters: listed, stderr: child.stderr.slice(0, 500) });
    log(`env ${JSON.stringify(env)}: ${JSON.stringify(listed)}`);
  }
}
const lists: Record<string, string | DeviceOpener> = {};
if (adapters.length >= 1) lists['1_gpu'] = 'webgpu:0';
if (adapters.length >= 2) lists['2_gpus'] = 'webgpu:0,webgpu:1';
if (adapters.length >= 4) lists['4_gpus'] = 'webgpu:0,webgpu:1,webgpu:2,webgpu:3';
if (adapters.length >= 1) lists['2_devices_1_gpu'] = 'webgpu:0x2';
// Identical GPUs, one Dawn instance each through Mesa's device-select layer (per-gpu-dawn.ts), where
// the command enabled the layer.
const busIds = (process.env.VK_INSTANCE_LAYERS ?? '').includes('MESA_device_select') ? nvidiaBusIds() : [];
log(`PCI bus ids (device-select layer ${busIds.length > 0 ? 'on' : 'off'}): ${busIds.join(', ') || 'none'}`);
if (busIds.length >= 2) lists['2_gpus_by_pci'] = perGpuOpener(busIds.slice(0, 2), log);
if (busIds.length >= 4) lists['4_gpus_by_pci'] = perGpuOpener(busIds.slice(0, 4), log);
const machine = { ...machineInfo(), adapter: adapters[0]?.name ?? 'none' };
const result =
  Object.keys(lists).length === 0
    ? { metrics: {}, failed: { all: 'no WebGPU adapter' } }
    : await measureScaling({
        lists,
        rounds: Number(values.rounds),
        steps: Number(values.steps),
        warmup: 5,
        batch: Number(values.batch),
        log,
      });
const report = {
  suite: 'multi-device-gpu',
  machine,
  command: `bash .device/start.sh --rounds ${values.rounds} --steps ${values.steps} --batch ${values.batch} (bench/src/gpu-multi-entry.ts)`,
  adapters,
  envProbes,
  lists,
  failed: result.failed,
  metrics: result.metrics,
};
const json = `${JSON.stringify(report, null, 2)}\n`;
process.stdout.write(json);
if (out !== undefined) writeFileSync(path.join(out, 'multi-device-gpu.json'), json);
// Dawn can keep the event loop alive after its devices are destroyed; everything is written, so exit.
process.exit(Object.keys(result.metrics).length > 0 ? 0 : 1);
