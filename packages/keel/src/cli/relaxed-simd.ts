/**
 * Relaxed SIMD for the `keel` command's CPU kernels on Node 20. The MLP's CPU kernel module runs its
 * fused multiply-add GEMM where `WebAssembly.validate` accepts relaxed SIMD, the plain-SIMD one
 * otherwise (@keel/mlp README § CPU kernels). Node 22+ has relaxed SIMD on; Node 20's V8 has it behind
 * `--experimental-wasm-relaxed-simd`. The CLI is an application, not a library, so it turns the flag on
 * for its own process before any device starts (worker threads started afterwards see it too), unless
 * `KEEL_RELAXED_SIMD=0`. Libraries never touch V8 flags: a program that embeds Keel decides for itself.
 */
import v8 from 'node:v8';

/** `(module (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd ...)))`. */
const PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32,
  1, 32, 2, 253, 133, 2, 11,
]);

/** Whether this engine compiles relaxed SIMD now. */
export function relaxedSimdAvailable(): boolean {
  return WebAssembly.validate(PROBE);
}

/**
 * Turns relaxed SIMD on where the engine has it behind a flag (and `env.KEEL_RELAXED_SIMD` is not `0`);
 * returns whether Wasm compiled from now on may use it.
 */
export function enableRelaxedSimd(env: NodeJS.ProcessEnv = process.env): boolean {
  if (relaxedSimdAvailable()) return true;
  if (env.KEEL_RELAXED_SIMD === '0') return false;
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  return relaxedSimdAvailable();
}
