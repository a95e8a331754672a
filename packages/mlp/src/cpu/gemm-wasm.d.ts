/**
 * The compiled GEMM modules (wat.ts compiled with wabt), provided to the bundle by the package build
 * (scripts/mlp-wasm.ts, an esbuild plugin of tsup.config.ts) as the modules' bytes: plain SIMD, and
 * relaxed SIMD (fused multiply-add; compiles only where the engine has relaxed SIMD).
 */
declare module 'virtual:keel-mlp-gemm-wasm' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
declare module 'virtual:keel-mlp-gemm-wasm-relaxed' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
