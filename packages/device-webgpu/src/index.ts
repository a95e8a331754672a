export { createWebGpuDevice } from './create-webgpu-device';
export {
  listWebGpuAdapters,
  parseDawnAdapterList,
  type WebGpuAdapterEntry,
  webGpuAdapterOptions,
} from './list-adapters';
export { WebGpuDevice } from './webgpu-device';
export type { WebGpuDeviceOptions } from './webgpu-device-options';
export type { WebGpuDeviceStats } from './webgpu-device-stats';
export { WebGpuExecutable } from './webgpu-executable';
