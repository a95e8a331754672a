/** The WGSL side of Keel's MLP the benchmark uses, from the umbrella `keel` package. */
export { MLP_WEBGPU_EXPORTS, MLP_WGSL, mlpWgslExecutableSource } from 'keel';
