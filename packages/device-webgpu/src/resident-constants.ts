/**
 * Resident constants: the de-duplicated constants block of a reusable command buffer's plan, uploaded
 * once (at its first submission) into a TLSF pool of uniform GPUBuffer slabs and bound from there at
 * every later submission, so replaying a reusable command buffer writes nothing to the GPU before its
 * submit. (A `writeBuffer` before a submission is not free: on Dawn it adds an upload the queue must
 * order before the submitted work.) One-shot command buffers use the uniform ring instead.
 *
 * A block goes back to the pool when its plan is garbage collected (FinalizationRegistry): by then no
 * operation references the plan, so no submitted work reads the block.
 */

import type { Block } from '@keel/allocator';
import { TlsfPool } from '@keel/allocator';
import { CONSTANTS_WINDOW_BYTES } from './device-info';
import type { ErrorScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_UNIFORM } from './gpu-flags';
import type { GpuMemory } from './gpu-memory';
import { GpuSlabProvider } from './gpu-slab-provider';

const SLAB_BYTES = 256 * 1024;

/** Where a plan's constants live: bind `group` at dynamic offset `base` + the constants' offset. */
export interface ResidentPlacement {
  readonly group: GPUBindGroup;
  readonly base: number;
}

export class ResidentConstants {
  readonly #device: GPUDevice;
  readonly #layout: GPUBindGroupLayout;
  readonly #scopes: ErrorScopes;

  readonly #pool: TlsfPool<GpuMemory>;
  readonly #slabs: GpuSlabProvider;
  readonly #groups = new Map<number, GPUBindGroup>();
  readonly #registry: FinalizationRegistry<Block<GpuMemory>>;
  #destroyed = false;

  constructor(device: GPUDevice, layout: GPUBindGroupLayout, alignment: number, scopes: ErrorScopes) {
    this.#device = device;
    this.#scopes = scopes;
    this.#layout = layout;
    this.#slabs = new GpuSlabProvider(device, 'keel resident constants', USAGE_UNIFORM | USAGE_COPY_DST);
    this.#pool = new TlsfPool(this.#slabs, {
      label: 'webgpu resident constants',
      alignment,
      slabSize: SLAB_BYTES,
    });
    this.#registry = new FinalizationRegistry((block) => {
      if (!this.#destroyed) this.#pool.release(block);
    });
  }

  /**
   * Uploads `constants` (with a constants window of slack behind them) and returns where they live;
   * the block is released when `owner` is garbage collected.
   */
  place(owner: object, constants: Uint32Array): ResidentPlacement {
    // A slab, an upload and a bind group, made while the operation encodes (its first submission).
    this.#scopes.enter();
    const block = this.#pool.reserve(constants.byteLength + CONSTANTS_WINDOW_BYTES) as Block<GpuMemory>;
    const memory = block.slab.memory;
    this.#device.queue.writeBuffer(
      memory.buffer,
      block.offset,
      constants.buffer,
      constants.byteOffset,
      constants.byteLength,
    );
    let group = this.#groups.get(memory.id);
    if (group === undefined) {
      group = this.#device.createBindGroup({
        layout: this.#layout,
        entries: [
          { binding: 0, resource: { buffer: memory.buffer, offset: 0, size: CONSTANTS_WINDOW_BYTES } },
        ],
      });
      this.#groups.set(memory.id, group);
    }
    this.#registry.register(owner, block);
    return { group, base: block.offset };
  }

  /** Uniform slabs alive. */
  get live(): number {
    return this.#slabs.live;
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#pool.destroy();
    this.#groups.clear();
  }
}
