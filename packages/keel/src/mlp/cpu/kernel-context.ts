/**
 * The part of the CPU device's kernel ABI (`@keel/device-cpu`, kernel-abi.ts) the MLP kernels use,
 * declared structurally so this module does not depend on the device's build: a kernel is called once
 * per workgroup with a context; the context and its bindings are owned by the device and reused, so a
 * kernel keeps nothing of them after it returns.
 *
 * Two optional members are a proposed ABI addition for zero-copy WebAssembly kernels (see
 * `matmul-kernels.ts`): `KernelBinding.memory`, the shared `WebAssembly.Memory` whose buffer the binding
 * lives in (when the device backs its slabs with Wasm memories), and `KernelContext.localMemory`, a
 * per-thread scratch range in that same memory. Without them the kernels copy their tiles into a
 * thread-private memory.
 */

export interface CpuKernelBinding {
  /** The memory the range lives in (a SharedArrayBuffer in task mode). */
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly f32: Float32Array;
  readonly u32: Uint32Array;
  /** Proposed: the shared Wasm memory whose `buffer` is this binding's memory. */
  readonly memory?: WebAssembly.Memory | undefined;
}

/** Proposed: a thread-private byte range of scratch inside the bindings' Wasm memory. */
export interface CpuLocalMemory {
  readonly byteOffset: number;
  readonly byteLength: number;
}

export interface CpuKernelContext {
  readonly workgroupId: readonly [x: number, y: number, z: number];
  readonly workgroupCount: readonly [x: number, y: number, z: number];
  readonly workgroupSize: readonly [x: number, y: number, z: number];
  readonly bindings: readonly CpuKernelBinding[];
  readonly constants: Uint32Array;
  readonly constantsF32: Float32Array;
  readonly workerIndex: number;
  /** Proposed (see above). */
  readonly localMemory?: CpuLocalMemory | undefined;
}

export type CpuKernel = (context: CpuKernelContext) => void;

/** The share `[start, end)` of `total` items that workgroup `id` of `count` owns (equal blocks of `align`). */
export function shareOf(total: number, count: number, id: number, align = 1): [start: number, end: number] {
  const per = Math.ceil(Math.ceil(total / Math.max(1, count)) / align) * align;
  const start = Math.min(total, id * per);
  return [start, Math.min(total, start + per)];
}
