/**
 * `@keel/mlp`: the reference MLP of Keel, an application of the runtime (what `keel demo` trains and
 * `keel bench` times): model, data set, PRNG, the plain-JS reference (the spec), the kernel interface,
 * the training-step program, the executable sources of its kernels for the CPU device (WebAssembly SIMD,
 * `dist/kernels/mlp-cpu.js`) and the WebGPU device (WGSL), and `trainMlp`, which trains it on a device.
 */

export {
  CPU_MATMUL_TILE,
  MLP_CPU_EXPORTS,
  MLP_CPU_MODULE_PATH,
  mlpCpuExecutableSource,
} from './cpu/descriptors';
export { GEMM_SCRATCH_BYTES } from './cpu/matmul-kernels';
export type {
  DataParallelDeviceReport,
  DataParallelTransfers,
  TrainDataParallelOptions,
  TrainDataParallelResult,
} from './data-parallel/data-parallel-options';
export {
  checkBatchCoversDevices,
  checkDeviceAdapters,
  type DeviceEntry,
  MAX_DATA_PARALLEL_DEVICES,
  type OpenDeviceListOptions,
  openDeviceList,
  parseDeviceList,
} from './data-parallel/device-list';
export { formatDataParallelSummary } from './data-parallel/format-data-parallel';
export {
  type GradientStep,
  gradientStep,
  type PackedParameters,
  packParameters,
} from './data-parallel/gradient-program';
export type { BalanceMode } from './data-parallel/shard-balancer';
export { trainMlpDataParallel } from './data-parallel/train-data-parallel';
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
export { loseDevice, MAX_RECOVERIES } from './train/device-loss';
export { describeModel, formatBytes, formatSummary } from './train/format-summary';
export { type OpenedDevice, openTrainingDevice, TRAIN_QUEUES } from './train/open-device';
export type { RecoveryEvent, StepProgress } from './train/step-progress';
export { trainMlp } from './train/train-mlp';
export {
  DEFAULT_STEPS,
  MAX_BATCH,
  MAX_STEPS,
  type TrainDeviceKind,
  type TrainMlpOptions,
} from './train/train-options';
export type {
  CheckpointReport,
  CommandCounts,
  TrainMlpResult,
  TransferTotals,
  TransientMemory,
} from './train/train-result';
export { MLP_WEBGPU_EXPORTS, mlpWgslExecutableSource } from './webgpu/descriptors';
export {
  type AdapterDescription,
  type GemmTiling,
  type GpuGemmTiling,
  gemmTilingName,
  type PerKernelGemmTiling,
  type PerShapeGemmTiling,
  parseGemmTiling,
  type RegisterGemmTiling,
  type SharedGemmTiling,
  WGSL_GEMM_TILING,
  WGSL_GEMM_TILING_CANDIDATES,
  WGSL_GEMM_TILING_GPU,
  WGSL_GEMM_TILING_GPU_PER_SHAPE,
  WGSL_GEMM_TILING_NVIDIA,
  WGSL_GEMM_TILING_SMALL_GPU,
  WGSL_GEMM_TILING_SWIFTSHADER,
  wgslGemmTilingFor,
} from './webgpu/gemm-tiling';
export { MLP_WGSL } from './webgpu/wgsl';
