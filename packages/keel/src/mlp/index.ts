/**
 * The reference MLP of `keel demo` / `keel bench`: model, data set, reference implementation, the
 * kernel interface, the training-step program, and the executable sources of its kernels for the CPU
 * (WebAssembly SIMD, `dist/kernels/mlp-cpu.js`) and WebGPU (WGSL) devices.
 */

export {
  CPU_MATMUL_TILE,
  MLP_CPU_EXPORTS,
  MLP_CPU_MODULE_PATH,
  mlpCpuExecutableSource,
} from './cpu/descriptors';
export { GEMM_SCRATCH_BYTES } from './cpu/matmul-kernels';
export { type Batch, type DatasetConfig, oneHot, REFERENCE_DATASET, SyntheticDataset } from './dataset';
export {
  bitsToF32,
  f32Bits,
  MatmulFlags,
  type MatmulParams,
  MLP_KERNEL_NAMES,
  MLP_KERNEL_SIGNATURES,
  type MlpKernelName,
  matmulConstants,
} from './kernel-interface';
export {
  cloneParams,
  initParams,
  layerCount,
  type MlpConfig,
  type MlpParams,
  REFERENCE_MLP,
  stepMultiplyAdds,
} from './model';
export { deriveSeed, Prng } from './prng';
export * as mlpReference from './reference';
export {
  biasName,
  type StepBuffer,
  type StepDispatch,
  type StepProgram,
  trainingStepProgram,
  weightName,
} from './step-program';
export { MLP_WEBGPU_EXPORTS, mlpWgslExecutableSource } from './webgpu/descriptors';
export {
  type GemmTiling,
  MLP_WGSL,
  WGSL_GEMM_TILING,
  WGSL_GEMM_TILING_GPU,
  wgslGemmTilingFor,
} from './webgpu/wgsl';
