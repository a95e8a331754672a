/**
 * 'multi-device': data-parallel training of the reference MLP over several devices through the
 * scheduler (`trainMlpDataParallel`, what `keel demo --devices` runs), on CPU devices: `cpu` (one CPU
 * device) vs `cpu:2` (two), each CPU device with ONE worker thread (a device = a core, so that N devices
 * have N times the resources of one, as N GPUs would). Interleaved rounds, medians.
 * - step_ms_1_device, step_ms_2_devices; speedup_2_devices = 1-device ms / 2-device ms;
 *   scaling_efficiency_2_devices = speedup / 2;
 * - bytes_moved_per_step_* (the reduction: gradients to the host, weights back, every device) vs
 *   min_bytes_per_step_* (each device's parameter gradient bytes, out and back: `gradient_bytes_per_device`
 *   × 2 × devices), and their ratio bytes_vs_minimum_*;
 * - replicas_identical_*, loss_max_abs_diff_2_devices (vs one device, same global batches).
 * The GPU machines' figures come from bench/src/gpu-multi-entry.ts.
 */

import type { Suite } from '../harness.ts';
import { MLP_CPU_MODULE_URL } from '../mlp/keel-mlp.ts';
import { measureScaling } from '../multi-device/scaling.ts';

export const multiDeviceSuite: Suite = {
  name: 'multi-device',
  description:
    'data-parallel MLP training over 1 and 2 CPU devices: step time, speedup, bytes moved vs minimum',
  async run({ log }) {
    const { metrics, failed } = await measureScaling({
      lists: { '1_device': 'cpu', '2_devices': 'cpu:2' },
      rounds: 3,
      steps: 30,
      warmup: 5,
      workers: 1,
      cpuKernelUrl: MLP_CPU_MODULE_URL,
      log,
    });
    if (Object.keys(failed).length > 0) throw new Error(`multi-device: ${JSON.stringify(failed)}`);
    return metrics;
  },
};
