/**
 * Slabs and blocks: the memory a pool hands out. A slab is one allocation from a SlabProvider; a block is
 * a byte range of a slab, owned by whoever reserved it until it is released back to its pool.
 */

/** One allocation of a SlabProvider, held by a pool. */
export interface Slab<M> {
  /** Unique among the slabs of every pool of this realm (ids are never reused). */
  readonly id: number;
  /** Bytes of the slab (what was asked of the provider). */
  readonly byteLength: number;
  /** The provider's memory object. */
  readonly memory: M;
}

/**
 * A range of a slab handed out by a pool: bytes [offset, offset + byteLength) of `slab.memory`.
 * `offset` is a multiple of the alignment asked for (offsets are relative to the slab's start).
 * `byteLength` is the size that was asked for; the pool may keep a little more behind it (rounding to
 * its alignment), which nobody else uses while the block is live. Live blocks never overlap.
 */
export interface Block<M> {
  readonly slab: Slab<M>;
  readonly offset: number;
  readonly byteLength: number;
}
