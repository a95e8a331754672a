/**
 * Resident constants: the de-duplicated constants block of a reusable command buffer's plan, uploaded
 * once (at its first submission) into a TLSF pool of uniform GPUBuffer slabs and bound from there at
 * every later submission, so replaying a reusable command buffer writes nothing to the GPU before its
 * submit. (A `writeBuffer` before a submission is not free: on Dawn it adds an upload the queue must
 * order before the submitted work.) One-shot command buffers use the uniform ring instead.
 *
 * A block goes back to its pool when its plan is garbage collected (FinalizationRegistry): by then no
 * operation references the plan, so no submitted work reads the block.
 *
 * A slab whose creation failed (out of memory: gpu-slab-provider.ts) is invalid; work that bound it
 * before its failure was known fails with its batch's GPU error. Once the failure is known, the pool
 * that made it is retired: later placements go to a fresh pool, a plan whose placement is in the failed
 * slab is placed again at its next submission (`place` with the old placement, which is released),
 * and the retired pool is destroyed, its slabs given back, once none of its blocks is placed.
 */

import type { Block } from '@keel/allocator';
import { TlsfPool } from '@keel/allocator';
import { CONSTANTS_WINDOW_BYTES } from './device-info';
import type { ErrorScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_UNIFORM } from './gpu-flags';
import type { GpuMemory } from './gpu-memory';
import { GpuSlabProvider } from './gpu-slab-provider';
import type { TrackWork } from './pending-work';

const SLAB_BYTES = 256 * 1024;

/** One pool of uniform slabs, and what it made (retired pools stay until their last block goes). */
export interface ConstantsPool {
  readonly pool: TlsfPool<GpuMemory>;
  readonly slabs: GpuSlabProvider;
  retired: boolean;
}

/** Where a plan's constants live: bind `group` at dynamic offset `base` + the constants' offset. */
export interface ResidentPlacement {
  readonly group: GPUBindGroup;
  readonly base: number;
  /** The slab: when its `failure` is set the placement is broken (place again). */
  readonly memory: GpuMemory;
  readonly block: Block<GpuMemory>;
  readonly from: ConstantsPool;
}

/** How the device reports on the slabs (see GpuSlabProvider's SlabFailureReporting). */
export interface ResidentReporting {
  readonly what: string;
  readonly track?: TrackWork;
}

export class ResidentConstants {
  readonly #device: GPUDevice;
  readonly #layout: GPUBindGroupLayout;
  readonly #scopes: ErrorScopes;
  readonly #alignment: number;
  readonly #reporting: ResidentReporting;

  #current: ConstantsPool;
  readonly #retired = new Set<ConstantsPool>();
  /** The bind group of each uniform slab (dropped with the slab's GpuMemory). */
  #groups = new WeakMap<GpuMemory, GPUBindGroup>();
  readonly #registry: FinalizationRegistry<ResidentPlacement>;
  #destroyed = false;

  constructor(
    device: GPUDevice,
    layout: GPUBindGroupLayout,
    alignment: number,
    scopes: ErrorScopes,
    reporting: ResidentReporting = { what: 'webgpu resident constants' },
  ) {
    this.#device = device;
    this.#scopes = scopes;
    this.#layout = layout;
    this.#alignment = alignment;
    this.#reporting = reporting;
    this.#current = this.#newPool();
    this.#registry = new FinalizationRegistry((placement) => this.#release(placement));
  }

  #newPool(): ConstantsPool {
    const { what, track } = this.#reporting;
    let record: ConstantsPool | undefined;
    const slabs = new GpuSlabProvider(
      this.#device,
      'keel resident constants',
      USAGE_UNIFORM | USAGE_COPY_DST,
      () => {},
      {
        what: `${what}: resident constants`,
        ...(track === undefined ? {} : { track }),
        failed: () => {
          if (record !== undefined) this.#retire(record);
        },
      },
    );
    const pool = new TlsfPool(slabs, {
      label: 'webgpu resident constants',
      alignment: this.#alignment,
      slabSize: SLAB_BYTES,
    });
    record = { pool, slabs, retired: false };
    return record;
  }

  /**
   * Uploads `constants` (with a constants window of slack behind them) and returns where they live;
   * the block is released when `owner` is garbage collected. `previous`, the owner's placement in a
   * slab that failed, is released first.
   */
  place(owner: object, constants: Uint32Array, previous?: ResidentPlacement): ResidentPlacement {
    if (previous !== undefined) {
      this.#registry.unregister(previous);
      this.#release(previous);
    }
    // A slab, an upload and a bind group, made while the operation encodes (its first submission).
    this.#scopes.enter();
    const from = this.#current;
    const block = from.pool.reserve(constants.byteLength + CONSTANTS_WINDOW_BYTES) as Block<GpuMemory>;
    const memory = block.slab.memory;
    this.#device.queue.writeBuffer(
      memory.buffer,
      block.offset,
      constants.buffer,
      constants.byteOffset,
      constants.byteLength,
    );
    let group = this.#groups.get(memory);
    if (group === undefined) {
      group = this.#device.createBindGroup({
        layout: this.#layout,
        entries: [
          { binding: 0, resource: { buffer: memory.buffer, offset: 0, size: CONSTANTS_WINDOW_BYTES } },
        ],
      });
      this.#groups.set(memory, group);
    }
    const placement: ResidentPlacement = { group, base: block.offset, memory, block, from };
    this.#registry.register(owner, placement, placement);
    return placement;
  }

  /** A slab of `record` failed: later placements go to a fresh pool. */
  #retire(record: ConstantsPool): void {
    if (this.#destroyed || record.retired) return;
    record.retired = true;
    this.#retired.add(record);
    if (record === this.#current) this.#current = this.#newPool();
    this.#sweep(record);
  }

  #release(placement: ResidentPlacement): void {
    const from = placement.from;
    if (this.#destroyed || (from.retired && !this.#retired.has(from))) return;
    from.pool.release(placement.block);
    if (from.retired) this.#sweep(from);
  }

  /** Destroys a retired pool none of whose blocks is placed any more. */
  #sweep(record: ConstantsPool): void {
    if (record.pool.stats.liveBlocks > 0) return;
    this.#retired.delete(record);
    record.pool.destroy();
  }

  /** Uniform slabs alive (retired pools' included). */
  get live(): number {
    let live = this.#current.slabs.live;
    for (const record of this.#retired) live += record.slabs.live;
    return live;
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#current.pool.destroy();
    for (const record of this.#retired) record.pool.destroy();
    this.#retired.clear();
    this.#groups = new WeakMap();
  }
}
