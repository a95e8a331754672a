/**
 * The reference MLP on Keel's CPU device (`@keel/device-cpu`, task mode, one queue, all cores) with
 * the MLP kernel module (`dist/kernels/mlp-cpu.js`). Today's ABI: the GEMM copies its tiles.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { type KeelDeviceRunOptions, type KeelDeviceRunResult, runKeelDeviceMlp } from './keel-device.ts';
import { MLP_CPU_EXPORTS, MLP_CPU_MODULE_URL } from './keel-mlp.ts';

export async function runKeelDeviceCpuMlp(
  options: KeelDeviceRunOptions & { readonly workersPerQueue?: number } = {},
): Promise<KeelDeviceRunResult> {
  const device = createCpuDevice({
    mode: 'task',
    queues: 1,
    ...(options.workersPerQueue === undefined ? {} : { workersPerQueue: options.workersPerQueue }),
    slabSize: 64 << 20,
  });
  return runKeelDeviceMlp(
    device,
    { format: 'js-module', url: MLP_CPU_MODULE_URL, exports: MLP_CPU_EXPORTS, label: 'keel mlp (wasm simd)' },
    options,
  );
}
