/**
 * The pool of a device's queue records (driver kit): a queue call takes a record (`acquire`) instead of
 * allocating one, and the device gives it back (`release`) once nothing refers to it any more (its
 * completion ran, no callback, trace, worker message or run list still holds it). Both devices pool
 * their records with it, as DESIGN.md § Packages asks of the kit.
 *
 * - `release` resets the record (`QueueRecord.reset`, so a pooled record keeps nothing alive) and keeps
 *   it, at most `max` of them (the rest are left to the garbage collector). Releasing a record twice is
 *   ignored, so two later acquires never share one.
 * - `acquire` takes the most recently released record (LIFO: its fields and arrays are the warmest) or
 *   makes one with the device's `create` (which binds the record's callbacks once), fills in the kind,
 *   queue and fences, and increments `generation`, so that a callback that captured an earlier
 *   generation recognises a record that moved on.
 * - `close()` (device lost or destroyed) drops the free records and keeps no more: a record released
 *   after that may still be referenced by work the loss left behind.
 *
 * Allocation-free once warm: the free list is an array indexed by its own count, never shortened
 * (shortening a V8 array to 0 and growing it again reallocates its backing store).
 */
import type { Fence } from '@keel/fence';
import type { Buffer } from '../buffer';
import type { OpKind, QueueRecord } from './queue-record';

/** Records a pool keeps by default (as many as a queue typically has in flight). */
export const RECORD_POOL_MAX = 256;

export class RecordPool<R extends QueueRecord<Buffer>> {
  // Plain fields, not #private: this is the hot path of every queue call (see RunList).
  private readonly free: (R | undefined)[] = [];
  private count = 0;
  private closed = false;
  declare private readonly create: () => R;
  /** The most records kept for reuse. */
  declare readonly max: number;

  constructor(create: () => R, max: number = RECORD_POOL_MAX) {
    this.create = create;
    this.max = max;
  }

  /** Records kept for reuse now. */
  get size(): number {
    return this.count;
  }

  /** A released record (or a new one) for an operation of `kind` on `queue`, `wait` → `signal`. */
  acquire(kind: OpKind, queue: number, wait: Fence, signal: Fence): R {
    let record: R;
    if (this.count > 0) {
      const i = --this.count;
      record = this.free[i] as R;
      this.free[i] = undefined;
      record.pooled = false;
    } else {
      record = this.create();
    }
    record.generation++;
    record.kind = kind;
    record.queue = queue;
    record.wait = wait;
    record.signal = signal;
    return record;
  }

  /**
   * The operation of `record` is over and nothing refers to the record any more: resets it and keeps
   * it for a later `acquire` (unless closed or full). A record already released is left alone.
   */
  release(record: R): void {
    if (record.pooled) return;
    record.reset();
    if (this.closed || this.count >= this.max) return;
    record.pooled = true;
    this.free[this.count++] = record;
  }

  /** Drops the free records and keeps none from now on (the device is lost or destroyed). */
  close(): void {
    this.closed = true;
    this.free.fill(undefined);
    this.count = 0;
  }
}
