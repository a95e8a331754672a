/**
 * A device-owned scratch GPUBuffer for short-lived detours inside one submission: staging bytes of
 * unaligned writes, copies within one GPUBuffer (WebGPU's copyBufferToBuffer refuses source ==
 * destination), indirect parameters that live in a buffer the dispatch also binds (WebGPU forbids that
 * usage combination). Commands of a submission run in order, and submissions in queue order, so one
 * buffer serves every use; it only grows (the old one is destroyed after the submission that used it,
 * which WebGPU keeps alive until that work completes).
 */
import type { ErrorScopes } from './gpu-errors';
import { createGpuMemory, type GpuMemory } from './gpu-memory';

const MIN_SIZE = 64 * 1024;

export class GpuScratch {
  readonly #device: GPUDevice;
  readonly #scopes: ErrorScopes;

  #memory: GpuMemory | undefined;
  readonly #retired: GpuMemory[] = [];

  constructor(device: GPUDevice, scopes: ErrorScopes) {
    this.#device = device;
    this.#scopes = scopes;
  }

  /** The scratch memory, at least `bytes` bytes. */
  ensure(bytes: number): GpuMemory {
    const current = this.#memory;
    if (current !== undefined && current.size >= bytes) return current;
    if (current !== undefined) this.#retired.push(current);
    let size = Math.max(MIN_SIZE, current === undefined ? 0 : current.size * 2);
    while (size < bytes) size *= 2;
    this.#scopes.enter();
    const memory = createGpuMemory(this.#device, size, 'keel scratch');
    this.#memory = memory;
    return memory;
  }

  /** After a submit: destroys scratch buffers that were outgrown. */
  submitted(): void {
    if (this.#retired.length === 0) return;
    for (const memory of this.#retired) memory.buffer.destroy();
    this.#retired.length = 0;
  }

  /** GPUBuffers alive. */
  get live(): number {
    return (this.#memory === undefined ? 0 : 1) + this.#retired.length;
  }

  destroy(): void {
    this.#memory?.buffer.destroy();
    this.#memory = undefined;
    this.submitted();
  }
}
