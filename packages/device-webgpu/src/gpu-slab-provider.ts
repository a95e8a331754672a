/**
 * The SlabProvider of the WebGPU device: pool slabs are GPUBuffers with every usage a device buffer
 * needs (see DEVICE_MEMORY_USAGE), so blocks of a slab can be bound, copied, filled and used for
 * indirect parameters like dedicated buffers; other pools (resident constants) give their own usage.
 *
 * A slab is created inside error scopes of its own (pushed and popped around `createBuffer`, so they
 * never stay open across a caller's code): a creation that fails (out of memory) reaches no
 * uncaptured-error handler. Its GPUBuffer is then invalid; once the pops settle, the slab's
 * `GpuMemory.failure` holds the error as a KeelError (RESOURCE_EXHAUSTED for GPUOutOfMemoryError), and
 * operations on buffers in it fail with that instead of a validation error about an invalid buffer.
 * `failed` then lets the device retire the pools that could hand out blocks of it again.
 */
import type { SlabProvider } from '@keel/allocator';
import { fromGpuError, inOwnScopes } from './gpu-errors';
import { createGpuMemory, type GpuMemory } from './gpu-memory';
import type { TrackWork } from './pending-work';

/** How a provider reports slabs whose creation failed. */
export interface SlabFailureReporting {
  /** Names the slabs' user in messages ("webgpu device '…' queueAlloca"). */
  readonly what: string;
  /** Counts the scope pops as pending GPU work (the device's teardown waits for them). */
  readonly track?: TrackWork;
  /** Called once a slab's failure is known (the device retires the pools that may hand it out). */
  readonly failed?: (memory: GpuMemory) => void;
}

export class GpuSlabProvider implements SlabProvider<GpuMemory> {
  readonly #device: GPUDevice;
  readonly #label: string;
  readonly #usage: number | undefined;
  readonly #beforeDestroy: () => void;
  readonly #what: string;
  readonly #track: TrackWork | undefined;
  readonly #failed: ((memory: GpuMemory) => void) | undefined;

  /** Slabs created and not yet destroyed. */
  live = 0;

  constructor(
    device: GPUDevice,
    label: string,
    usage?: number,
    /** Called before a slab is destroyed (the device submits its open batch, which may use it). */
    beforeDestroy: () => void = () => {},
    failures: SlabFailureReporting = { what: label },
  ) {
    this.#device = device;
    this.#label = label;
    this.#usage = usage;
    this.#beforeDestroy = beforeDestroy;
    this.#what = failures.what;
    this.#track = failures.track;
    this.#failed = failures.failed;
  }

  /** A zero-filled GPUBuffer slab of `byteLength` bytes (rounded up to 4). */
  createSlab(byteLength: number): GpuMemory {
    const device = this.#device;
    const [memory, errors] = inOwnScopes(
      device,
      () => createGpuMemory(device, byteLength, this.#label, this.#usage),
      this.#track,
    );
    errors.then((error) => {
      if (error === undefined) {
        memory.proven = true;
        return;
      }
      memory.failure = fromGpuError(error, `${this.#what}: a slab of ${memory.size} bytes`);
      this.#failed?.(memory);
    });
    this.live++;
    return memory;
  }

  /**
   * Destroys the slab's GPUBuffer. Pools give a slab back only when none of its blocks is in use by
   * work that has not completed; WebGPU keeps memory used by already submitted work alive anyway (so
   * the device's open submission batch is submitted first).
   */
  destroySlab(memory: GpuMemory): void {
    this.#beforeDestroy();
    memory.buffer.destroy();
    this.live--;
  }
}
