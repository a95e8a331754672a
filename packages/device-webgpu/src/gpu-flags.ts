/**
 * WebGPU's numeric flag values (fixed by the WebGPU specification). The package uses these instead of
 * the `GPUBufferUsage`/`GPUMapMode`/`GPUShaderStage` globals, which Node only has once the `webgpu`
 * package installed them.
 */

/** GPUBufferUsage bits. */
export const GpuBufferUsage = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
} as const;

/** GPUMapMode bits. */
export const GpuMapMode = {
  READ: 0x0001,
  WRITE: 0x0002,
} as const;

/** GPUShaderStage bits. */
export const GpuShaderStage = {
  COMPUTE: 0x0004,
} as const;

/**
 * Usage of every GPUBuffer that backs a Keel buffer (dedicated buffers and pool slabs): storage so that
 * built-in kernels can fill and copy any range, copies both ways, indirect parameters and uniforms.
 * Keel's own usage bits are checked by Keel; WebGPU's are the superset every operation may need.
 */
export const DEVICE_MEMORY_USAGE =
  GpuBufferUsage.STORAGE |
  GpuBufferUsage.COPY_SRC |
  GpuBufferUsage.COPY_DST |
  GpuBufferUsage.INDIRECT |
  GpuBufferUsage.UNIFORM;
