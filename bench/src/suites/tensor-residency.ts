/**
 * tensor-residency: seed 001's training case. A 100-step training-like loop (4 MiB of weights, 1 MiB of
 * inputs and 40 KiB of outputs per step, the output read back every step) on the CPU device and on
 * WebGPU, with @keel/tensor-residency (weights stay on the device) against a naive policy that copies
 * every tensor to the device before each step and back after it. The two policies run interleaved in
 * the same process (keel, naive, keel, naive, ...); times are medians.
 *
 * Metrics per device (prefix `cpu_` / `webgpu_`; the CPU ones are also reported unprefixed):
 * moved_bytes (keel: host→device + device→host + device→device), naive_moved_bytes,
 * minimal_moved_bytes (inputs + outputs of every step + one upload and one readback of the weights;
 * target: moved_bytes = minimal_moved_bytes), naive_vs_keel_ratio (naive_moved_bytes / moved_bytes),
 * ms_per_step_keel, ms_per_step_naive, step_speedup (naive / keel time).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import type { Device } from '@keel/hal';
import { type Metrics, median, metric, type Suite } from '../harness.ts';
import { KiB, keelLoop, type LoopShape, MiB, naiveLoop } from '../tensor-residency/training-loop.ts';

const SHAPE: LoopShape = { steps: 100, weightBytes: 4 * MiB, inputBytes: 1 * MiB, outputBytes: 40 * KiB };
const SAMPLES = 5;
const WARMUP = 1;

async function measure(device: Device, prefix: string, log: (line: string) => void): Promise<Metrics> {
  const keelMs: number[] = [];
  const naiveMs: number[] = [];
  let moved = 0;
  let naiveMoved = 0;
  for (let s = 0; s < WARMUP + SAMPLES; s++) {
    const keel = await keelLoop(device, SHAPE);
    const naive = await naiveLoop(device, SHAPE);
    if (keel.checksum !== naive.checksum) {
      throw new Error(`${prefix}: the two policies disagree on the final weights`);
    }
    moved = keel.movedBytes;
    naiveMoved = naive.movedBytes;
    if (s >= WARMUP) {
      keelMs.push(keel.ms / SHAPE.steps);
      naiveMs.push(naive.ms / SHAPE.steps);
    }
    log(
      `${prefix} sample ${s}: keel ${(keel.ms / SHAPE.steps).toFixed(3)} ms/step, naive ${(naive.ms / SHAPE.steps).toFixed(3)} ms/step`,
    );
  }
  const minimal = SHAPE.steps * (SHAPE.inputBytes + SHAPE.outputBytes) + 2 * SHAPE.weightBytes;
  const keelStep = median(keelMs);
  const naiveStep = median(naiveMs);
  // Byte counts are exact integers (metric() would round them to 6 significant digits).
  return {
    [`${prefix}moved_bytes`]: { value: moved, unit: 'bytes' },
    [`${prefix}naive_moved_bytes`]: { value: naiveMoved, unit: 'bytes' },
    [`${prefix}minimal_moved_bytes`]: { value: minimal, unit: 'bytes' },
    [`${prefix}naive_vs_keel_ratio`]: metric(naiveMoved / moved, 'x'),
    [`${prefix}ms_per_step_keel`]: metric(keelStep, 'ms'),
    [`${prefix}ms_per_step_naive`]: metric(naiveStep, 'ms'),
    [`${prefix}step_speedup`]: metric(naiveStep / keelStep, 'x'),
  };
}

export const tensorResidencySuite: Suite = {
  name: 'tensor-residency',
  description: 'training loop: resident weights vs copy-everything-every-step (CPU, WebGPU)',
  async run({ machine, log }) {
    const metrics: Metrics = {};
    const cpu = createCpuDevice();
    try {
      const cpuMetrics = await measure(cpu, 'cpu_', log);
      Object.assign(metrics, cpuMetrics);
      for (const [name, value] of Object.entries(cpuMetrics)) metrics[name.slice('cpu_'.length)] = value;
    } finally {
      await cpu.destroy();
    }
    let gpu: Device | undefined;
    try {
      gpu = await createWebGpuDevice();
    } catch (error) {
      log(`webgpu skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (gpu !== undefined) {
      machine.adapter = gpu.info.name;
      try {
        Object.assign(metrics, await measure(gpu, 'webgpu_', log));
      } finally {
        await gpu.destroy();
      }
    }
    return metrics;
  },
};
