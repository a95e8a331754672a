/**
 * What the mlp benchmark uses of Keel's MLP (model, data set, step program, kernel interface), in one
 * place, from `@keel/mlp` (its built `dist/`: `pnpm bench` builds first).
 */
import { mlpCpuExecutableSource } from '@keel/mlp';

export {
  type Batch,
  biasName,
  GEMM_SCRATCH_BYTES,
  initParams,
  MLP_CPU_EXPORTS,
  type MlpConfig,
  type MlpKernelName,
  type MlpParams,
  matmulConstants,
  oneHot,
  REFERENCE_DATASET,
  REFERENCE_MLP,
  type StepDispatch,
  type StepProgram,
  SyntheticDataset,
  stepMultiplyAdds,
  trainingStepProgram,
  weightName,
} from '@keel/mlp';

/** The built CPU kernel module (`dist/kernels/mlp-cpu.js` of @keel/mlp). */
export const MLP_CPU_MODULE_URL = new URL(String(mlpCpuExecutableSource().url));
