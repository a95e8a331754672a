/**
 * Buffers of the CPU device. A device buffer owns a block of a device pool from creation to
 * `destroy()` (deferred while submitted work still uses it); a queue-allocated buffer borrows the block
 * of its queue allocation, which is assigned by the time the alloca's signal is reached. The device
 * keeps its device buffers (to mark them destroyed with it) but no queue-allocated buffer: one of those
 * reads `destroyed` once its device is (`BufferOwner.destroyed`), so a buffer whose alloca failed is
 * garbage-collected when the caller drops it, deallocated or not.
 */
import type { Allocation, Block } from '@keel/allocator';
import {
  type Buffer,
  type BufferParams,
  type BufferPlacement,
  type BufferState,
  type BufferUsage,
  type Device,
  describeBuffer,
  ErrorCode,
  KeelError,
  MemoryType,
} from '@keel/hal';

/** What a buffer needs from its device. */
export interface BufferOwner {
  /** Gives a device buffer's block back (called once, when destroyed and no longer used). */
  releaseBlock(block: Block<ArrayBufferLike>): void;
  /** The caller destroyed a device buffer (its memory may still be in use). */
  forget(buffer: CpuBuffer): void;
  /** The device was destroyed (its buffers, queue-allocated ones included, are then `destroyed`). */
  destroyed(): boolean;
}

export class CpuBuffer implements Buffer {
  // Fields assigned by the constructor are `declare`d: the bundle then names each field once. State
  // is in TypeScript-private properties, not `#private` fields: methods must also work when called
  // through a Proxy of this object (test/proxy.test.ts).
  declare readonly device: Device;
  declare readonly byteLength: number;
  declare readonly usage: BufferUsage;
  declare readonly memoryType: MemoryType;
  declare readonly placement: BufferPlacement;
  declare readonly label: string | undefined;
  /** The allocation of a queue-allocated buffer. */
  declare readonly allocation: Allocation<ArrayBufferLike> | undefined;
  /** Operations in flight that use this buffer (destroy waits for them). */
  private uses = 0;
  private st: BufferState = 'live';
  private released = false;

  private readonly owner: BufferOwner;
  private readonly ownBlock: Block<ArrayBufferLike> | undefined;

  /**
   * `params` gives the memory type (default: device-local, host-visible and coherent), the label and
   * the affinity (default `affinity`); a queue-allocated buffer has `allocation`, a device buffer
   * `ownBlock`.
   */
  constructor(
    device: Device,
    owner: BufferOwner,
    params: BufferParams,
    byteLength: number,
    usage: BufferUsage,
    affinity: number,
    pool: string | undefined,
    ownBlock: Block<ArrayBufferLike> | undefined,
    allocation: Allocation<ArrayBufferLike> | undefined,
  ) {
    this.device = device;
    this.byteLength = byteLength;
    this.usage = usage;
    this.memoryType =
      params.memoryType ?? MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT;
    this.placement = {
      affinity: (params.affinity ?? affinity) >>> 0,
      pool,
      queueAllocated: !!allocation,
    };
    this.label = params.label;
    this.allocation = allocation;
    this.owner = owner;
    this.ownBlock = ownBlock;
  }

  get state(): BufferState {
    return this.st === 'live' && this.owner.destroyed() ? 'destroyed' : this.st;
  }

  /** @internal The block holding the bytes, or undefined (a queue allocation without memory yet, or failed). */
  get block(): Block<ArrayBufferLike> | undefined {
    return this.ownBlock ?? this.allocation?.block;
  }

  /**
   * Releases a device buffer; work already submitted keeps its memory until it completes. Idempotent.
   * FAILED_PRECONDITION for a queue-allocated buffer (use queueDealloca).
   */
  destroy(): void {
    if (this.placement.queueAllocated) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${describeBuffer(this)}: a queue-allocated buffer is released with queueDealloca, not destroy()`,
      );
    }
    if (this.st === 'destroyed') return;
    this.st = 'destroyed';
    this.owner.forget(this);
    if (this.uses === 0) this.release();
  }

  /** @internal Marks a queue-allocated buffer deallocated (queueDealloca). */
  markDeallocated(): void {
    this.st = 'deallocated';
  }

  /** @internal Marks the buffer destroyed because its device was destroyed (memory goes with the device). */
  markDeviceDestroyed(): void {
    this.st = 'destroyed';
    this.released = true;
  }

  /** @internal One more operation in flight uses the buffer. */
  retain(): void {
    this.uses++;
  }

  /** @internal One operation fewer; releases the memory of a destroyed device buffer with the last one. */
  unretain(): void {
    if (--this.uses === 0 && this.st === 'destroyed') this.release();
  }

  private release(): void {
    if (this.released || !this.ownBlock) return;
    this.released = true;
    this.owner.releaseBlock(this.ownBlock);
  }

  /**
   * @internal The block holding the bytes (`block.slab.memory` from `block.offset`), for an operation
   * about to run; FAILED_PRECONDITION when there is no memory.
   */
  resolve(what: string): Block<ArrayBufferLike> {
    const block = this.block;
    if (!block || this.released || this.owner.destroyed()) {
      const why =
        this.allocation?.state === 'failed'
          ? `its queueAlloca failed (${this.allocation.failure?.message ?? 'unknown'})`
          : this.allocation
            ? 'its queueAlloca has no memory yet: order the operation after the alloca signal'
            : 'it was destroyed';
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${describeBuffer(this)} has no memory: ${why}`,
      );
    }
    return block;
  }
}
