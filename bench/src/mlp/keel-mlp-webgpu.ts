/** The WGSL side of Keel's MLP the benchmark uses, from `@keel/mlp`. */
export { MLP_WEBGPU_EXPORTS, MLP_WGSL, mlpWgslExecutableSource } from '@keel/mlp';
