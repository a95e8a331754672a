/**
 * PassthroughPool: one slab per block, created at reserve and destroyed at release (IREE's "no-op"
 * allocator, the baseline the other pools are measured against). No reuse, no fragmentation, a
 * provider call per reserve and per release.
 *
 * A quarantined block keeps its slab for good: its bytes count against the budget, and a request
 * that only fits in what the budget leaves beside them can still be served (`fitsBeside`).
 */
import { checkOptions } from '@keel/hal';
import { POOL_OPTION_RULES, PoolBase, PoolBlock, type PoolOptions } from './pool-support';
import type { SlabProvider } from './slab-provider';

export type PassthroughPoolOptions = PoolOptions;

export class PassthroughPool<M> extends PoolBase<M> {
  readonly maxBlockBytes: number;
  readonly #live = new Set<PoolBlock<M>>();
  /** Bytes of the slabs of quarantined blocks. */
  #quarantinedBytes = 0;

  constructor(provider: SlabProvider<M>, options?: PassthroughPoolOptions) {
    super('PassthroughPool', provider, checkOptions('PassthroughPool', options, POOL_OPTION_RULES));
    this.maxBlockBytes = Number.isFinite(this.budget)
      ? Math.floor(this.budget / this.alignment) * this.alignment
      : Number.MAX_SAFE_INTEGER;
  }

  /**
   * `reserve`: a fresh slab of `byteLength` rounded up to the alignment (at least one unit); offset 0.
   * `reserveExisting`: always undefined (a passthrough pool holds no free memory).
   */
  protected override take(
    byteLength: number,
    units: number,
    _alignUnits: number,
    grow: boolean,
  ): PoolBlock<M> | undefined {
    if (!grow) return undefined;
    const capacity = units * this.alignment;
    if (this.tally.reservedBytes + capacity > this.budget) return this.full();
    const slab = this.newSlab(capacity);
    const block = new PoolBlock(slab, 0, byteLength, this, 0, capacity, 0);
    this.#live.add(block);
    return block;
  }

  /** Destroys the block's slab at once. */
  protected override free(block: PoolBlock<M>): void {
    this.#live.delete(block);
    this.dropSlab(block.slab);
  }

  /** The block keeps its slab (it stays in #live, so destroy still gives the slab back). */
  protected override hold(block: PoolBlock<M>): void {
    this.#quarantinedBytes += block.capacity;
  }

  protected override fitsBeside(units: number): boolean {
    return this.#quarantinedBytes + units * this.alignment <= this.budget;
  }

  /** Nothing to do: free slabs are destroyed at release. */
  protected override compact(): void {}

  protected override freeAll(): void {
    for (const block of this.#live) {
      block.handle = -1;
      this.dropSlab(block.slab);
    }
    this.#live.clear();
  }
}
