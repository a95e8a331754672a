/**
 * WebGPU's numeric flag values (fixed by the WebGPU specification). The package uses these instead of
 * the `GPUBufferUsage`/`GPUMapMode`/`GPUShaderStage` globals, which Node only has once the `webgpu`
 * package installed them.
 */

// Plain `const` numbers (not objects) so that the bundler folds them into their uses.
// GPUBufferUsage bits:
export const USAGE_MAP_READ = 0x0001;
export const USAGE_COPY_SRC = 0x0004;
export const USAGE_COPY_DST = 0x0008;
export const USAGE_UNIFORM = 0x0040;
export const USAGE_STORAGE = 0x0080;
export const USAGE_INDIRECT = 0x0100;
export const USAGE_QUERY_RESOLVE = 0x0200;

// GPUMapMode bits:
export const MAP_READ = 0x0001;

// GPUShaderStage bits:
export const STAGE_COMPUTE = 0x0004;

/**
 * Usage of every GPUBuffer that backs a Keel buffer (dedicated buffers and pool slabs): storage so that
 * built-in kernels can fill and copy any range, copies both ways, indirect parameters and uniforms.
 * Keel's own usage bits are checked by Keel; WebGPU's are the superset every operation may need.
 */
export const DEVICE_MEMORY_USAGE =
  USAGE_STORAGE | USAGE_COPY_SRC | USAGE_COPY_DST | USAGE_INDIRECT | USAGE_UNIFORM;
