/**
 * How the WebGPU device runs the conformance suite (shared by the Node and the browser project).
 */
import type { ConformanceOptions, CtsDeviceHandle } from '@keel/cts';
import { createWebGpuDevice, type WebGpuDeviceOptions } from '../src/index';
import { wgslKernel } from './cts-kernels';

/** A CTS handle on a fresh WebGPU device. */
export async function ctsWebGpuDevice(options: WebGpuDeviceOptions = {}): Promise<CtsDeviceHandle> {
  const device = await createWebGpuDevice(options);
  return {
    device,
    kernels: wgslKernel,
    heldQueueBytes: () => {
      let held = 0;
      for (const pool of ['tlsf', 'ring', 'passthrough']) {
        const stats = device.allocatorStats().get(pool);
        if (stats !== undefined) held += stats.liveBytes + stats.dyingBytes + stats.quarantinedBytes;
      }
      return held;
    },
  };
}

/** Cases the WebGPU device cannot pass, with the reason (none known). */
export const conformanceOptions: ConformanceOptions = {
  timeoutMs: 10_000,
};
