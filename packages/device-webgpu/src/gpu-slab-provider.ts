/**
 * The SlabProvider of the WebGPU device: pool slabs are GPUBuffers with every usage a device buffer
 * needs (see DEVICE_MEMORY_USAGE), so blocks of a slab can be bound, copied, filled and used for
 * indirect parameters like dedicated buffers; other pools (resident constants) give their own usage.
 */
import type { SlabProvider } from '@keel/allocator';
import { createGpuMemory, type GpuMemory } from './gpu-memory';

export class GpuSlabProvider implements SlabProvider<GpuMemory> {
  readonly #device: GPUDevice;
  readonly #label: string;
  readonly #usage: number | undefined;
  readonly #beforeDestroy: () => void;

  /** Slabs created and not yet destroyed. */
  live = 0;

  constructor(
    device: GPUDevice,
    label: string,
    usage?: number,
    /** Called before a slab is destroyed (the device submits its open batch, which may use it). */
    beforeDestroy: () => void = () => {},
  ) {
    this.#device = device;
    this.#label = label;
    this.#usage = usage;
    this.#beforeDestroy = beforeDestroy;
  }

  /** A zero-filled GPUBuffer slab of `byteLength` bytes (rounded up to 4). */
  createSlab(byteLength: number): GpuMemory {
    const memory = createGpuMemory(this.#device, byteLength, this.#label, this.#usage);
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
