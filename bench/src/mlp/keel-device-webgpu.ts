/**
 * The reference MLP on Keel's WebGPU device (`@keel/device-webgpu`; in Node on the `webgpu` package's
 * Dawn adapter) with the MLP's WGSL kernels.
 */
import { createWebGpuDevice } from '@keel/device-webgpu';
import { type KeelDeviceRunOptions, type KeelDeviceRunResult, runKeelDeviceMlp } from './keel-device.ts';
import { mlpWgslExecutableSource } from './keel-mlp-webgpu.ts';

export async function runKeelDeviceWebGpuMlp(
  options: KeelDeviceRunOptions = {},
): Promise<KeelDeviceRunResult> {
  const device = await createWebGpuDevice();
  return runKeelDeviceMlp(device, mlpWgslExecutableSource(), options);
}
