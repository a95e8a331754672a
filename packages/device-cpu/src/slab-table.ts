/**
 * The device's slab provider: creates the ArrayBuffer (sync mode) or SharedArrayBuffer (task mode)
 * slabs that every pool of the device carves buffers from, numbers them densely, and tells the
 * listener (task mode: every worker) about each slab before any operation can use it. Resolved tables
 * name memory by these numbers. Keeps one Uint8Array view of each slab for the main thread's queue
 * transfers (`bytes`), so they make no view per operation.
 */
import type { SlabProvider } from '@keel/allocator';
import { newMemory } from './byte-ops';

/** Told about slabs as they come and go (before the pool hands out any block of a new slab). */
export interface SlabListener {
  slabCreated(index: number, memory: ArrayBufferLike): void;
  slabDestroyed(index: number): void;
}

export class SlabTable implements SlabProvider<ArrayBufferLike> {
  /** Memory by slab index; holes are reused. Read by the sync-mode executor. */
  readonly memories: (ArrayBufferLike | undefined)[] = [];
  readonly #indices = new Map<ArrayBufferLike, number>();
  /** A view of the whole slab, by index. */
  readonly #views: (Uint8Array | undefined)[] = [];
  readonly #holes: number[] = [];
  #listener: SlabListener | undefined;

  readonly #shared: boolean;

  constructor(shared: boolean) {
    this.#shared = shared;
  }

  setListener(listener: SlabListener | undefined): void {
    this.#listener = listener;
  }

  createSlab(byteLength: number): ArrayBufferLike {
    const memory = newMemory(byteLength, this.#shared);
    const index = this.#holes.pop() ?? this.memories.length;
    this.memories[index] = memory;
    this.#views[index] = new Uint8Array(memory);
    this.#indices.set(memory, index);
    this.#listener?.slabCreated(index, memory);
    return memory;
  }

  destroySlab(memory: ArrayBufferLike): void {
    const index = this.#indices.get(memory);
    if (index === undefined) return;
    this.#indices.delete(memory);
    this.memories[index] = undefined;
    this.#views[index] = undefined;
    this.#holes.push(index);
    this.#listener?.slabDestroyed(index);
  }

  /** The index of a slab this table created; -1 for foreign memory. */
  indexOf(memory: ArrayBufferLike): number {
    return this.#indices.get(memory) ?? -1;
  }

  /** A view of the whole of `memory` (kept per slab; a new one for foreign memory). */
  bytes(memory: ArrayBufferLike): Uint8Array {
    const index = this.#indices.get(memory);
    return (index === undefined ? undefined : this.#views[index]) ?? new Uint8Array(memory);
  }
}
