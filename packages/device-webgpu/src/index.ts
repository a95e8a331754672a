export { createWebGpuDevice } from './create-webgpu-device';
export { WebGpuDevice, type WebGpuDeviceStats } from './webgpu-device';
export type { WebGpuDeviceOptions } from './webgpu-device-options';
export { WebGpuExecutable } from './webgpu-executable';
