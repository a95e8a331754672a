/**
 * Which build of the WebAssembly GEMM a thread runs: the relaxed-SIMD one (`f32x4.relaxed_madd`, a
 * fused multiply-add on CPUs with FMA) where the engine compiles it, else the plain-SIMD one. The check
 * is `WebAssembly.validate` of the relaxed module itself, so it follows the engine exactly: Chromium
 * ≥ 114 and Node ≥ 22 have relaxed SIMD; Node 20 only with V8's `--experimental-wasm-relaxed-simd`.
 * Both builds compute the same GEMM (wat.ts); results may differ in the last bits (fused rounding).
 */

export type GemmVariant = 'relaxed-simd' | 'simd';

/** The build to run here and its bytes. */
export function chooseGemm<T extends BufferSource>(
  relaxed: T,
  plain: T,
): { readonly variant: GemmVariant; readonly bytes: T } {
  return WebAssembly.validate(relaxed)
    ? { variant: 'relaxed-simd', bytes: relaxed }
    : { variant: 'simd', bytes: plain };
}
