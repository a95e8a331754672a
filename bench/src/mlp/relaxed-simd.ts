/**
 * Relaxed SIMD for the CPU kernels in the benchmark process. The MLP's CPU kernel module picks its
 * GEMM when a thread loads it: the relaxed-SIMD build (fused multiply-add) where
 * `WebAssembly.validate` accepts it, the plain-SIMD build otherwise. Node 22+ and Chromium have relaxed
 * SIMD on; Node 20's V8 has it behind `--experimental-wasm-relaxed-simd`, which `v8.setFlagsFromString`
 * turns on and off at run time, process-wide (worker threads started afterwards see it too). So the
 * suite measures both builds in one run: each Keel training run starts a fresh device whose workers
 * load the kernel module under the flag as set then.
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
 * Turns relaxed SIMD on or off for Wasm compiled from now on (through V8's flag), and says whether
 * the engine now compiles it.
 */
export function setRelaxedSimd(on: boolean): boolean {
  v8.setFlagsFromString(on ? '--experimental-wasm-relaxed-simd' : '--no-experimental-wasm-relaxed-simd');
  return relaxedSimdAvailable();
}
