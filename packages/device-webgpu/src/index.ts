export { type AcquiredGpuDevice, acquireGpuDevice } from './acquire-gpu-device';
export { createWebGpuDevice } from './create-webgpu-device';
export {
  adapterName,
  deviceLimits,
  isSoftwareAdapter,
  MAX_CONSTANTS,
  SOFTWARE_ADAPTER_FEATURE,
} from './device-info';
export type { GpuMemory } from './gpu-memory';
export { GpuSlabProvider } from './gpu-slab-provider';
export { WebGpuBuffer } from './webgpu-buffer';
export { WebGpuDevice, type WebGpuDeviceStats } from './webgpu-device';
export type { WebGpuDeviceOptions } from './webgpu-device-options';
export { WebGpuExecutable } from './webgpu-executable';
