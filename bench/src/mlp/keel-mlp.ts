/**
 * What the mlp benchmark uses of Keel's MLP (model, data set, step program, kernel interface), in one
 * place. Imported from the keel package's sources until its public index re-exports them; then this
 * file becomes `export ... from 'keel'`.
 */

export { MLP_CPU_EXPORTS } from '../../../packages/keel/src/mlp/cpu/descriptors.ts';
export { GEMM_SCRATCH_BYTES } from '../../../packages/keel/src/mlp/cpu/matmul-kernels.ts';
export { type Batch, oneHot, SyntheticDataset } from '../../../packages/keel/src/mlp/dataset.ts';
export { type MlpKernelName, matmulConstants } from '../../../packages/keel/src/mlp/kernel-interface.ts';
export {
  initParams,
  type MlpConfig,
  type MlpParams,
  REFERENCE_MLP,
  stepMultiplyAdds,
} from '../../../packages/keel/src/mlp/model.ts';
export {
  biasName,
  type StepDispatch,
  type StepProgram,
  trainingStepProgram,
  weightName,
} from '../../../packages/keel/src/mlp/step-program.ts';

/** The built CPU kernel module (`pnpm --filter keel build` makes it). */
export const MLP_CPU_MODULE_URL = new URL('../../../packages/keel/dist/kernels/mlp-cpu.js', import.meta.url);
