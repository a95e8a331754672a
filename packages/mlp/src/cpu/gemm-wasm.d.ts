/**
 * The compiled GEMM module (wat.ts compiled with wabt), provided to the bundle by the package build
 * (scripts/mlp-wasm.ts, an esbuild plugin of tsup.config.ts) as the module's bytes.
 */
declare module 'virtual:keel-mlp-gemm-wasm' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
