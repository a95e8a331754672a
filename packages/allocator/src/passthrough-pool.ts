/**
 * PassthroughPool: one slab per block, created at reserve and destroyed at release (IREE's "no-op"
 * allocator, the baseline the other pools are measured against). No reuse, no fragmentation, a
 * provider call per reserve and per release.
 */
import { checkOptions } from '@keel/hal';
import type { Block } from './block';
import type { Pool, PoolKind, PoolStats } from './pool';
import {
  checkAlignment,
  checkAlive,
  checkBudget,
  checkByteLength,
  createSlabMemory,
  describePool,
  ownBlock,
  POOL_OPTION_RULES,
  PoolBlock,
  PoolCounters,
  type PoolOptions,
  poolLabel,
  SlabRecord,
} from './pool-support';
import type { SlabProvider } from './slab-provider';

export type PassthroughPoolOptions = PoolOptions;

export class PassthroughPool<M> implements Pool<M> {
  readonly kind: PoolKind = 'passthrough';
  readonly label: string;
  readonly alignment: number;
  readonly maxBlockBytes: number;
  readonly #provider: SlabProvider<M>;
  readonly #budget: number;
  readonly #counters = new PoolCounters();
  readonly #live = new Set<PoolBlock<M>>();
  readonly #what: string;
  #destroyed = false;

  constructor(provider: SlabProvider<M>, rawOptions?: PassthroughPoolOptions) {
    const options = checkOptions<PassthroughPoolOptions>('PassthroughPool', rawOptions, POOL_OPTION_RULES);
    this.label = poolLabel('passthrough', options.label);
    this.#what = describePool('PassthroughPool', this.label);
    this.alignment = options.alignment ?? 16;
    checkAlignment(this.#what, '', this.alignment);
    this.#budget = options.budget ?? Number.POSITIVE_INFINITY;
    checkBudget(this.#what, this.#budget);
    this.#provider = provider;
    this.maxBlockBytes = Number.isFinite(this.#budget)
      ? Math.floor(this.#budget / this.alignment) * this.alignment
      : Number.MAX_SAFE_INTEGER;
  }

  get stats(): PoolStats {
    return this.#counters.snapshot(this.#budget);
  }

  /** A fresh slab of `byteLength` rounded up to the alignment (at least one unit); offset 0. */
  reserve(byteLength: number, alignment?: number): Block<M> | undefined {
    checkAlive(this.#destroyed, this.#what, 'reserve');
    checkByteLength(this.#what, 'reserve', byteLength);
    if (alignment !== undefined) checkAlignment(this.#what, 'reserve', alignment);
    const unit = this.alignment;
    const capacity = Math.max(unit, Math.ceil(byteLength / unit) * unit);
    const counters = this.#counters;
    if (counters.reservedBytes + capacity > this.#budget) {
      counters.failedReserves++;
      return undefined;
    }
    const memory = createSlabMemory(this.#provider, capacity, this.#what);
    const slab = new SlabRecord(capacity, memory, -1);
    slab.live = 1;
    counters.slabCreated(capacity);
    const block = new PoolBlock(slab, 0, byteLength, this, 0, capacity, 0);
    this.#live.add(block);
    counters.reserved(byteLength);
    return block;
  }

  /** Always undefined: a passthrough pool holds no free memory. */
  reserveExisting(byteLength: number, alignment?: number): Block<M> | undefined {
    checkAlive(this.#destroyed, this.#what, 'reserveExisting');
    checkByteLength(this.#what, 'reserveExisting', byteLength);
    if (alignment !== undefined) checkAlignment(this.#what, 'reserveExisting', alignment);
    return undefined;
  }

  /** Destroys the block's slab at once. */
  release(block: Block<M>): void {
    checkAlive(this.#destroyed, this.#what, 'release');
    const own = ownBlock(block, this, this.#what);
    own.handle = -1;
    this.#live.delete(own);
    this.#counters.released(own.byteLength);
    this.#counters.slabDestroyed(own.slab.byteLength);
    this.#provider.destroySlab(own.slab.memory);
  }

  resetPeaks(): void {
    this.#counters.resetPeaks();
  }

  /** Nothing to do: free slabs are destroyed at release. */
  trim(): void {
    checkAlive(this.#destroyed, this.#what, 'trim');
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const block of this.#live) {
      block.handle = -1;
      this.#counters.slabDestroyed(block.slab.byteLength);
      this.#provider.destroySlab(block.slab.memory);
    }
    this.#live.clear();
    this.#counters.dropLive();
  }
}
