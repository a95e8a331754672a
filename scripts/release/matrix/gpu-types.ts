// Compiled only in cells whose setup defines WebGPU's types (TypeScript 7's DOM lib, or @webgpu/types
// in `types`): the GPU objects Keel's API hands out then carry the full WebGPU types (the placeholders
// of @keel/device-webgpu merge with them instead of colliding).
import type { WebGpuDevice } from '@keel/device-webgpu';

export function makeBuffer(device: WebGpuDevice): GPUBuffer {
  const gpu: GPUDevice = device.gpuDevice;
  return gpu.createBuffer({ size: 16, usage: 0x80 /* GPUBufferUsage.STORAGE */ });
}
