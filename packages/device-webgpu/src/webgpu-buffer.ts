/**
 * Buffers of the WebGPU device. A buffer is a byte range of GPU memory: a dedicated GPUBuffer
 * (`createBuffer`) or a block of a pooled slab (`queueAlloca`, assigned when the allocator finds
 * memory, before the alloca's signal). `memory` and `base` locate it; encoders add `base` to every
 * offset.
 */
import type { Allocation } from '@keel/allocator';
import { ErrorCode, KeelError } from '@keel/fence';
import { type Buffer, type BufferPlacement, type BufferState, type Device, MemoryType } from '@keel/hal';
import type { GpuMemory } from './gpu-memory';

/** What a buffer needs from its device. */
export interface BufferOwner {
  /** Releases a dedicated buffer's GPU memory once no pending operation can still use it. */
  releaseBuffer(buffer: WebGpuBuffer): void;
  /** True once the device was destroyed: a live buffer then reads `destroyed`. */
  readonly ownerDestroyed: boolean;
}

let nextBufferId = 1;

export class WebGpuBuffer implements Buffer {
  declare readonly device: Device;
  /** Always DEVICE_LOCAL (WebGPU has no host-visible storage memory). */
  readonly memoryType: number = MemoryType.DEVICE_LOCAL;
  declare readonly byteLength: number;
  declare readonly usage: number;
  declare readonly placement: BufferPlacement;
  declare readonly label: string | undefined;
  declare readonly allocation: Allocation<GpuMemory> | undefined;
  readonly #owner: BufferOwner;

  /** @internal Unique per buffer object (never reused). */
  readonly id = nextBufferId++;
  #state: BufferState = 'live';
  #failure: KeelError | undefined;
  #memory: GpuMemory | undefined;
  #base = 0;

  constructor(
    /** Its device, which also owns it (gets `releaseBuffer`). */
    device: Device & BufferOwner,
    byteLength: number,
    usage: number,
    placement: BufferPlacement,
    label: string | undefined,
    memory: GpuMemory | undefined,
    /** The allocation of a queue-allocated buffer. */
    allocation: Allocation<GpuMemory> | undefined,
  ) {
    this.device = device;
    this.byteLength = byteLength;
    this.usage = usage;
    this.placement = placement;
    this.label = label;
    this.allocation = allocation;
    this.#owner = device;
    this.#memory = memory;
  }

  /**
   * @internal The GPU error its creation raised (out of memory...), or its pool slab's
   * (gpu-slab-provider.ts), once known: operations on the buffer fail with it.
   */
  get gpuFailure(): KeelError | undefined {
    return this.#failure ?? this.memory?.failure;
  }

  set gpuFailure(failure: KeelError | undefined) {
    this.#failure = failure;
  }

  /**
   * `live`, `deallocated` after queueDealloca, or `destroyed` (by `destroy()` or with its device:
   * queue-allocated buffers too, which the device does not track).
   */
  get state(): BufferState {
    return this.#state === 'live' && this.#owner.ownerDestroyed ? 'destroyed' : this.#state;
  }

  /**
   * The GPU memory, or undefined while a queue allocation has no block yet (use only in operations
   * ordered after the alloca's signal, by which time it has one).
   * @internal
   */
  get memory(): GpuMemory | undefined {
    if (this.#memory === undefined) this.#resolve();
    return this.#memory;
  }

  /** @internal Byte offset of this buffer in `memory` (0 for dedicated buffers). */
  get base(): number {
    if (this.#memory === undefined) this.#resolve();
    return this.#base;
  }

  #resolve(): void {
    const block = this.allocation?.block;
    if (block === undefined) return;
    this.#memory = block.slab.memory;
    this.#base = block.offset;
  }

  /**
   * Releases a device buffer; work already issued that uses it keeps it alive until submitted (WebGPU
   * then keeps it until that work completes). FAILED_PRECONDITION for a queue-allocated buffer (use
   * queueDealloca); a second call is a no-op.
   */
  destroy(): void {
    if (this.placement.queueAllocated) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.describe()}: a queue-allocated buffer is released with queueDealloca, not destroy()`,
      );
    }
    if (this.#state !== 'live') return;
    this.#state = 'destroyed';
    this.#owner.releaseBuffer(this);
  }

  /** @internal Marks a queue-allocated buffer as released by queueDealloca. */
  markDeallocated(): void {
    this.#state = 'deallocated';
  }

  /** @internal Marks the buffer destroyed with its device (no GPU call: the device destroys its memory). */
  markDestroyed(): void {
    if (this.#state === 'live') this.#state = 'destroyed';
  }

  /** @internal */
  describe(): string {
    return this.label === undefined
      ? `buffer (${this.byteLength} bytes)`
      : `buffer '${this.label}' (${this.byteLength} bytes)`;
  }
}
