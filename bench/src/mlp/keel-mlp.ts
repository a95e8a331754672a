/**
 * What the mlp benchmark uses of Keel's MLP (model, data set, step program, kernel interface), in one
 * place, from the umbrella `keel` package (its built `dist/`: `pnpm bench` builds first).
 */
import { mlpCpuExecutableSource } from 'keel';

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
} from 'keel';

/** The built CPU kernel module (`dist/kernels/mlp-cpu.js` of the keel package). */
export const MLP_CPU_MODULE_URL = new URL(String(mlpCpuExecutableSource().url));
