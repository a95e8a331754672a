/**
 * A thread's instance of the GEMM WebAssembly module over one shared memory (see wat.ts for the
 * contract of `gemm`). Instances are cheap; one module compiles once per thread.
 */

/** `gemm` as exported by the module (pointers are byte addresses, strides elements). */
export type GemmFunction = (
  m: number,
  n: number,
  k: number,
  a: number,
  aRs: number,
  aCs: number,
  b: number,
  bRs: number,
  bCs: number,
  c: number,
  ldc: number,
  alpha: number,
  beta: number,
  flags: number,
  bias: number,
  mask: number,
  ldm: number,
  scratch: number,
) => void;

export interface GemmInstance {
  readonly memory: WebAssembly.Memory;
  readonly gemm: GemmFunction;
}

/** Instantiates the module over `memory` (a shared WebAssembly.Memory with a maximum ≤ 65536 pages). */
export function instantiateGemm(module: WebAssembly.Module, memory: WebAssembly.Memory): GemmInstance {
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const gemm = instance.exports.gemm;
  if (typeof gemm !== 'function') throw new TypeError('mlp gemm module: no export `gemm`');
  return { memory, gemm: gemm as GemmFunction };
}

export const WASM_PAGE_BYTES = 65536;

/** A fresh shared memory of at least `bytes`, growable to `maxBytes`. */
export function createSharedMemory(bytes: number, maxBytes = 1 << 30): WebAssembly.Memory {
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES));
  const maximum = Math.max(pages, Math.ceil(maxBytes / WASM_PAGE_BYTES));
  return new WebAssembly.Memory({ initial: pages, maximum, shared: true });
}

/** Grows `memory` to at least `bytes` (no-op when large enough). */
export function ensureMemory(memory: WebAssembly.Memory, bytes: number): void {
  const have = memory.buffer.byteLength;
  if (have >= bytes) return;
  memory.grow(Math.ceil((bytes - have) / WASM_PAGE_BYTES));
}
