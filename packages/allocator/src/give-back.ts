/**
 * What `QueueAllocator.destroy()` does with the blocks it holds when it keeps its pool
 * (`destroyPool: false`, internal): every block of an allocation that owned one (live or pending: it can
 * no longer be deallocated through the destroyed allocator) and every dying block (deallocated, its
 * frontier pending: the caller destroys the allocator when that work is finished or abandoned) goes
 * back to the pool, so a later user of the pool gets that memory. Quarantined blocks are not among
 * them: their frontier failed, their users' fate is unknown, and they stay reserved in the pool.
 *
 * Promises: each block is released at most once (a block has one owner: an allocation or a death
 * record); every block is tried even if a release throws; the first exception is rethrown after all.
 */
import type { Block } from './block';
import type { Pool } from './pool';

export function giveBack<M>(pool: Pool<M>, owned: readonly Block<M>[], dying: readonly Block<M>[]): void {
  let failed = false;
  let failure: unknown;
  for (const blocks of [owned, dying]) {
    for (const block of blocks) {
      try {
        pool.release(block);
      } catch (error) {
        if (!failed) {
          failed = true;
          failure = error;
        }
      }
    }
  }
  if (failed) throw failure;
}
