/**
 * A device-owned scratch GPUBuffer for short-lived detours inside one submission: staging bytes of
 * unaligned writes, copies within one GPUBuffer (WebGPU's copyBufferToBuffer refuses source ==
 * destination), indirect parameters that live in a buffer the dispatch also binds (WebGPU forbids that
 * usage combination). Commands of a submission run in order, and submissions in queue order, so one
 * buffer serves every use; it only grows (the old one is destroyed after the submission that used it,
 * which WebGPU keeps alive until that work completes).
 *
 * A scratch buffer is created inside error scopes of its own. One whose creation failed (out of
 * memory) is invalid: the work that used it before the failure was known fails with its batch's GPU
 * error, and the next `ensure` replaces it (before, every later detour failed).
 */
import { fromGpuError, inOwnScopes } from './gpu-errors';
import { createGpuMemory, type GpuMemory } from './gpu-memory';
import type { TrackWork } from './pending-work';

const MIN_SIZE = 64 * 1024;

export class GpuScratch {
  readonly #device: GPUDevice;
  readonly #track: TrackWork | undefined;

  #memory: GpuMemory | undefined;
  readonly #retired: GpuMemory[] = [];

  /** `track` counts the creation scopes' pops as pending GPU work (the device's teardown waits). */
  constructor(device: GPUDevice, track?: TrackWork) {
    this.#device = device;
    this.#track = track;
  }

  /** The scratch memory, at least `bytes` bytes. */
  ensure(bytes: number): GpuMemory {
    const current = this.#memory;
    if (current !== undefined && current.size >= bytes && current.failure === undefined) return current;
    if (current !== undefined) this.#retired.push(current);
    // Grows by doubling; a buffer whose creation failed is made again at its size.
    let size = Math.max(MIN_SIZE, current === undefined ? 0 : current.size * (current.failure ? 1 : 2));
    while (size < bytes) size *= 2;
    const device = this.#device;
    const [memory, errors] = inOwnScopes(
      device,
      () => createGpuMemory(device, size, 'keel scratch'),
      this.#track,
    );
    errors.then((error) => {
      if (error !== undefined)
        memory.failure = fromGpuError(error, `keel scratch: a buffer of ${size} bytes`);
    });
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
