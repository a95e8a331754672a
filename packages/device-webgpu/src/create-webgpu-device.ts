/**
 * `createWebGpuDevice`: Keel's WebGPU device on the caller's GPUDevice, on one requested from
 * `navigator.gpu`, or (Node) from the optional `webgpu` package (Dawn).
 */
import { KeelError } from '@keel/fence';
import { checkOptions, type OptionRules } from '@keel/hal';
import { acquireGpuDevice, unavailable } from './acquire-gpu-device';
import { BindingLayouts } from './binding-layouts';
import { createBuiltinKernels } from './builtin-kernels';
import { deviceInfo } from './device-info';
import { describeError, ErrorScopes } from './gpu-errors';
import { gpuBufferSize } from './gpu-memory';
import { WebGpuDevice } from './webgpu-device';
import type { WebGpuDeviceOptions } from './webgpu-device-options';

const DEFAULT_QUEUES = 2;
const DEFAULT_SLAB = 16 * 1024 * 1024;

function hasMethods(value: unknown, ...names: string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as Record<string, unknown>;
  return names.every((name) => typeof o[name] === 'function');
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** The rules of WebGpuDeviceOptions (hal's checkOptions: unknown keys, types, ranges). */
const OPTION_RULES: OptionRules = {
  device: {
    type: 'custom',
    expected: 'a GPUDevice',
    check: (v) =>
      hasMethods(v, 'createBuffer', 'createCommandEncoder', 'destroy') &&
      typeof (v as { queue?: unknown }).queue === 'object' &&
      typeof (v as { limits?: unknown }).limits === 'object',
  },
  adapter: { type: 'custom', expected: 'a GPUAdapter', check: (v) => hasMethods(v, 'requestDevice') },
  adapterOptions: { type: 'object' },
  requiredFeatures: { type: 'custom', expected: 'an array of feature names', check: isStringArray },
  dawnOptions: { type: 'custom', expected: 'an array of strings', check: isStringArray },
  queueCount: { type: 'integer', min: 1, max: 32 },
  label: { type: 'string' },
  transientSlabSize: { type: 'integer', min: 1 },
  transientBudget: { type: 'number', min: 0, allowInfinity: true },
  bindGroupCacheSize: { type: 'integer', min: 1 },
  tableCacheSize: { type: 'integer', min: 1 },
  onUncapturedError: { type: 'function' },
  onUnhandledFailure: { type: 'function' },
};

/**
 * A Keel device on WebGPU. Throws (rejects) INVALID_ARGUMENT for bad options (checked before any
 * GPU work: unknown keys, wrong types, out-of-range numbers, a `device` that is not a GPUDevice, a
 * `transientSlabSize` above the device's maxBufferSize) and UNAVAILABLE when no WebGPU adapter can be
 * had (no `navigator.gpu` and no `webgpu` package, or no adapter).
 */
export async function createWebGpuDevice(options?: WebGpuDeviceOptions): Promise<WebGpuDevice> {
  options = checkOptions<WebGpuDeviceOptions>('createWebGpuDevice', options, OPTION_RULES);
  const queueCount = options.queueCount ?? DEFAULT_QUEUES;
  const bindGroupCacheSize = options.bindGroupCacheSize ?? 4096;
  const tableCacheSize = options.tableCacheSize ?? 16;
  const transientBudget = options.transientBudget ?? Number.POSITIVE_INFINITY;
  const acquired = await acquireGpuDevice(options);
  const gpu = acquired.device;
  try {
    const transientSlabSize = options.transientSlabSize ?? DEFAULT_SLAB;
    // Slabs are GPUBuffers.
    gpuBufferSize(
      transientSlabSize,
      gpu.limits.maxBufferSize,
      "createWebGpuDevice: option 'transientSlabSize'",
    );
    const scopes = new ErrorScopes(gpu);
    const layouts = new BindingLayouts(gpu, bindGroupCacheSize, scopes);
    const kernels = await createBuiltinKernels(gpu, layouts);
    return new WebGpuDevice({
      gpu,
      owned: acquired.owned,
      instance: acquired.gpu,
      info: deviceInfo(gpu, acquired.adapterInfo, queueCount),
      layouts,
      scopes,
      kernels,
      transientSlabSize,
      transientBudget,
      tableCacheSize,
      onUncapturedError: options.onUncapturedError,
      onUnhandledFailure: options.onUnhandledFailure,
    });
  } catch (cause) {
    if (acquired.owned) gpu.destroy();
    if (KeelError.is(cause)) throw cause;
    throw unavailable(`createWebGpuDevice: setting up the device failed (${describeError(cause)})`, cause);
  }
}
