/**
 * `createWebGpuDevice`: Keel's WebGPU device on the caller's GPUDevice, on one requested from
 * `navigator.gpu`, or (Node) from the optional `webgpu` package (Dawn).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { acquireGpuDevice } from './acquire-gpu-device';
import { BindingLayouts } from './binding-layouts';
import { createBuiltinKernels } from './builtin-kernels';
import { deviceInfo } from './device-info';
import { WebGpuDevice } from './webgpu-device';
import type { WebGpuDeviceOptions } from './webgpu-device-options';

const DEFAULT_QUEUES = 2;
const DEFAULT_SLAB = 16 * 1024 * 1024;

function positiveInteger(
  value: number | undefined,
  fallback: number,
  what: string,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `createWebGpuDevice: ${what} must be an integer in [1, ${max}], got ${String(value)}`,
    );
  }
  return value;
}

/**
 * A Keel device on WebGPU. Throws (rejects) INVALID_ARGUMENT for bad options and UNAVAILABLE when no
 * WebGPU adapter can be had (no `navigator.gpu` and no `webgpu` package, or no adapter).
 */
export async function createWebGpuDevice(options: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  const queueCount = positiveInteger(options.queueCount, DEFAULT_QUEUES, 'queueCount', 32);
  const transientSlabSize = positiveInteger(options.transientSlabSize, DEFAULT_SLAB, 'transientSlabSize');
  const bindGroupCacheSize = positiveInteger(options.bindGroupCacheSize, 4096, 'bindGroupCacheSize');
  const tableCacheSize = positiveInteger(options.tableCacheSize, 16, 'tableCacheSize');
  const transientBudget = options.transientBudget ?? Number.POSITIVE_INFINITY;
  const acquired = await acquireGpuDevice(options);
  const gpu = acquired.device;
  try {
    const layouts = new BindingLayouts(gpu, bindGroupCacheSize);
    const kernels = await createBuiltinKernels(gpu, layouts);
    return new WebGpuDevice({
      gpu,
      owned: acquired.owned,
      instance: acquired.gpu,
      info: deviceInfo(gpu, acquired.adapterInfo, queueCount),
      layouts,
      kernels,
      transientSlabSize,
      transientBudget,
      tableCacheSize,
      onUncapturedError: options.onUncapturedError,
    });
  } catch (cause) {
    if (acquired.owned) gpu.destroy();
    if (KeelError.is(cause)) throw cause;
    throw new KeelError(
      ErrorCode.UNAVAILABLE,
      `createWebGpuDevice: setting up the device failed (${String(cause)})`,
      {
        cause,
      },
    );
  }
}
