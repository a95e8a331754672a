/**
 * Allocations: what `QueueAllocator.alloca` returns. The block is assigned before the alloca's signal is
 * signalled (usually at the call itself; later when the request had to wait for memory).
 */
import type { Fence, KeelError, Registration } from '@keel/fence';
import type { QueueAffinity } from '@keel/hal';
import type { Block } from './block';
import type { DeathRecord } from './death-record';

/**
 * - `pending`: the alloca's wait is not reached yet (or its memory is not assigned yet);
 * - `live`: the block is assigned and the alloca's `signal` was signalled;
 * - `deallocated`: a dealloca was issued (from that call on, a second dealloca is FAILED_PRECONDITION);
 * - `failed`: the alloca's wait failed, or the allocator was destroyed while it was pending; `block`
 *   is undefined and `failure` says why.
 */
export type AllocationState = 'pending' | 'live' | 'deallocated' | 'failed';

/**
 * How the allocation got its block:
 * - `frontier-reached` (rule a): free memory the pool already held (every earlier user's death frontier
 *   was reached);
 * - `dominated` (rule b): the block of a dealloca whose frontier the alloca's own wait dominates;
 * - `grown` (rule c): the pool grew;
 * - `waited` (rule d): it waited for a pending dealloca (its wait was joined with that dealloca's
 *   frontier, or it queued until memory came back).
 */
export type AllocationSource = 'frontier-reached' | 'dominated' | 'grown' | 'waited';

export interface Allocation<M> {
  /** Bytes asked for (0 is legal). */
  readonly byteLength: number;
  /**
   * The memory: `byteLength` bytes at `block.offset` of `block.slab` (`block.byteLength === byteLength`;
   * the pool may keep more behind it). Assigned before `signal` of the alloca is signalled; undefined
   * once failed.
   */
  readonly block: Block<M> | undefined;
  readonly state: AllocationState;
  /** The queues the alloca was issued for (recorded for statistics and placement). */
  readonly affinity: QueueAffinity;
  /** Alignment of `block.offset`, a power of two. */
  readonly alignment: number;
  /** How the block was found; undefined while none is assigned. */
  readonly source: AllocationSource | undefined;
  /** Why it failed (UNAVAILABLE on destroy, ABORTED with the wait's failure as cause, ...). */
  readonly failure: KeelError | undefined;
  readonly label: string | undefined;
  /**
   * The fence `signal` waits for (besides memory): the alloca's wait, joined under rule d at the call
   * with the death frontier of the dying block it took (the previous owner's users). A device that runs
   * work ahead of signals (GPU order) may count `signal` as ordered only once this fence is.
   */
  readonly wait: Fence;
  /**
   * The alloca's signal fence. Part of the death frontier of a dealloca issued before it was signalled
   * (the allocation's users are ordered after it).
   */
  readonly signal: Fence;
}

/**
 * The allocator's record of an allocation (internal; the public type is Allocation). Fields without an
 * initializer start undefined; the constructor's arguments are assigned, not declared twice.
 */
export class QueueAllocation<M> implements Allocation<M> {
  block: Block<M> | undefined;
  /** The pool's block behind `block` (possibly larger, when a dying block was reused). */
  held: Block<M> | undefined;
  state: AllocationState = 'pending';
  source: AllocationSource | undefined;
  failure: KeelError | undefined;
  /** Its wait was reached (it goes live as soon as it has a block). */
  reached = false;
  /** Its signal was signalled (at most once). */
  signalled = false;
  /** The block is this allocation's to give back (false once a dealloca took it over). */
  owns = false;
  /** Counted in the allocator's live bytes. */
  counted = false;
  /** The death record whose block it took (rules b and d): the block is safe once that frontier is. */
  from: DeathRecord<M> | undefined;
  /** The record its dealloca created. */
  death: DeathRecord<M> | undefined;
  /** A dealloca was issued. */
  freed = false;
  /** A dealloca issued while no block was assigned yet ("late"): its frontier, signal and affinity. */
  lateFrontier: Fence | undefined;
  lateSignal: Fence | undefined;
  /** Waiting for memory (rule d, queued): links of the allocator's FIFO. */
  queued = false;
  prev: QueueAllocation<M> | undefined;
  next: QueueAllocation<M> | undefined;
  /** The pending `onReached` registration (cancelled on destroy). */
  reg: Registration | undefined;
  declare readonly owner: object;
  declare readonly affinity: number;
  /** The fence it effectively waits on: its wait, joined with a frontier under rule d. */
  declare wait: Fence;
  declare readonly signal: Fence;
  declare readonly byteLength: number;
  declare readonly alignment: number;
  declare readonly label: string | undefined;

  constructor(
    owner: object,
    affinity: number,
    wait: Fence,
    signal: Fence,
    byteLength: number,
    alignment: number,
    label: string | undefined,
  ) {
    this.owner = owner;
    this.affinity = affinity;
    this.wait = wait;
    this.signal = signal;
    this.byteLength = byteLength;
    this.alignment = alignment;
    this.label = label;
  }

  /** "allocation 'x' (256 bytes)" — how messages name it. */
  describe(): string {
    return `allocation${this.label === undefined ? '' : ` '${this.label}'`} (${this.byteLength} bytes)`;
  }
}
