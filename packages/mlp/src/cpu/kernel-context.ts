/**
 * The CPU kernel ABI as the MLP kernels use it: the types are `@keel/device-cpu`'s own (`Kernel`,
 * `KernelContext`, `KernelBinding` of its kernel-abi.ts), imported as types only, so the kernel module
 * (`dist/kernels/mlp-cpu.js`) carries nothing of the device. A kernel is called once per workgroup with
 * a context; the context and its bindings are owned by the device and reused, so a kernel keeps nothing
 * of them after it returns.
 *
 * One optional extension, NOT provided by `@keel/device-cpu` today: a caller that backs the bindings
 * with one shared `WebAssembly.Memory` may say so (`WasmMemoryBinding.memory`) and give per-thread
 * scratch inside it (`WasmMemoryContext.localMemory`); the matmul kernels then run the GEMM in place
 * (zero-copy, see matmul-kernels.ts). The device's contexts lack both members, so on the device the
 * kernels always take the copy path; the tests and `bench/src/mlp/microbench.ts` drive the zero-copy
 * path with contexts they build themselves. Both paths give bit-identical results.
 */
import type { KernelBinding, KernelContext } from '@keel/device-cpu';

/** A binding that may also name the shared Wasm memory whose `buffer` it lives in (extension). */
export interface WasmMemoryBinding extends KernelBinding {
  readonly memory?: WebAssembly.Memory | undefined;
}

/** A thread-private byte range of scratch inside the bindings' Wasm memory (extension). */
export interface LocalMemory {
  readonly byteOffset: number;
  readonly byteLength: number;
}

/**
 * A device kernel context, optionally with the zero-copy extension. Every `KernelContext` is one (the
 * extension's members are optional), so a kernel taking it is a device-cpu `Kernel`.
 */
export interface WasmMemoryContext extends KernelContext {
  readonly bindings: readonly WasmMemoryBinding[];
  readonly localMemory?: LocalMemory | undefined;
}

/** An MLP CPU kernel: synchronous, and a device-cpu `Kernel` (it accepts every `KernelContext`). */
export type MlpCpuKernel = (context: WasmMemoryContext) => void;

/** The share `[start, end)` of `total` items that workgroup `id` of `count` owns (equal blocks of `align`). */
export function shareOf(total: number, count: number, id: number, align = 1): [start: number, end: number] {
  const per = Math.ceil(Math.ceil(total / Math.max(1, count)) / align) * align;
  const start = Math.min(total, id * per);
  return [start, Math.min(total, start + per)];
}
