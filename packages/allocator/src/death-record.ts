/**
 * Death records (internal): a block freed by a dealloca, tagged with its death frontier — the fence
 * after which nobody uses it. The record waits for the frontier; meanwhile the block may be taken by an
 * alloca whose wait dominates the frontier (rule b) or that joins its wait with it (rule d).
 */
import type { Fence, Registration } from '@keel/fence';
import type { Block } from './block';

export class DeathRecord<M> {
  /** What the frontier did: still pending, reached, or failed. */
  status: 'pending' | 'reached' | 'failed' = 'pending';
  /**
   * The alloca this dealloca belongs to failed before anyone could use the block (its signal, part of
   * the frontier, failed): the block's safety is then that of `fallback`, the record the alloca had
   * inherited (none: safe at once).
   */
  allocaFailed = false;
  fallback: DeathRecord<M> | undefined;
  /** The dealloca's signal, signalled (or failed) when the frontier is. */
  declare signal: Fence | undefined;
  /** The pending `onReached` registration (cancelled on destroy). */
  reg: Registration | undefined;

  // Index links: the bucket of the frontier's first semaphore, and the allocator-wide age list (prev: older, next: newer). The
  // record is dying (indexed, waiting for the frontier, its block up for rules b and d) while `bucket`
  // is set; otherwise an alloca took the block, or it went back to the pool or to the quarantine.
  bucket: DeathRecord<M>[] | undefined;
  slot = -1;
  prev: DeathRecord<M> | undefined;
  next: DeathRecord<M> | undefined;
  /** The pool's block. */
  declare readonly block: Block<M>;
  /** Bytes the pool keeps behind it: what a later request may use. */
  declare readonly capacity: number;
  /**
   * Bytes of the deallocated allocation, as asked for: what `dyingBytes` (and, if the frontier fails,
   * `quarantinedBytes`) counts for the block, and what the pool counts in its live bytes meanwhile.
   */
  declare readonly bytes: number;
  declare readonly frontier: Fence;

  /** The allocation whose dealloca made it (messages name it: `describe()`). */
  declare readonly allocation: { describe(): string; readonly byteLength: number };

  constructor(
    allocation: { describe(): string; readonly byteLength: number },
    block: Block<M>,
    capacity: number,
    frontier: Fence,
    signal: Fence | undefined,
  ) {
    this.allocation = allocation;
    this.block = block;
    this.capacity = capacity;
    this.bytes = allocation.byteLength;
    this.frontier = frontier;
    this.signal = signal;
  }
}
