/** The WGSL side of Keel's MLP the benchmark uses (see keel-mlp.ts for why it is imported from sources). */
export {
  MLP_WEBGPU_EXPORTS,
  mlpWgslExecutableSource,
} from '../../../packages/keel/src/mlp/webgpu/descriptors.ts';
export { MLP_WGSL } from '../../../packages/keel/src/mlp/webgpu/wgsl.ts';
