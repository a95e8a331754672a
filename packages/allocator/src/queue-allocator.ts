/**
 * The queue-ordered allocator (IREE's queue_alloca/queue_dealloca, seed 002): allocation and release
 * ordered by fences rather than by the host, with reuse decided by live ranges on timelines. The full
 * contract is the README (§ The queue-ordered engine, § Failures); in short:
 *
 * `alloca(affinity, wait, signalFence, n)` returns an Allocation at once. Its block is chosen at the call
 * when possible, by these rules in order:
 *
 * - (b) dominated: a dying block (deallocated, its death frontier pending) whose frontier the alloca's
 *   own wait dominates (same semaphores, values at least as high): its users run after the old ones, so
 *   it is taken at once (same-queue reuse); the smallest that fits, none above `reuseSlack` times n.
 * - (a) frontier reached: free memory the pool already holds.
 * - (c) growth: the pool grows within its budget (a provider that throws counts as no growth).
 * - (d) wait: the earliest dying block that fits; the alloca's wait becomes the join of its wait and
 *   that frontier. If none fits, the request queues (FIFO).
 *
 * Queued requests go first: while requests are queued, a new one whose wait is not reached takes
 * nothing at the call (no rule, b included) and queues behind them — it may depend on them, and memory
 * it took could be what they wait for. When memory returns, queued requests are served oldest first;
 * behind one that still does not fit, only those whose wait is reached are (they depend on nothing
 * pending), and a queued request is tried again when its wait is reached. So memory goes ahead of issue
 * order only to requests that cannot be waiting for the ones they pass.
 *
 * `signalFence` is signalled once the (effective) wait is reached and a block is assigned. `alloca`
 * throws RESOURCE_EXHAUSTED (nothing enqueued) above `pool.maxBlockBytes`, when the provider failed at
 * growth and no dying block fits, or when the pool's quarantined blocks (whoever left them) leave no
 * room (`pool.canEverReserve`); a queued request a later quarantine leaves no room for fails its signal.
 * `dealloca` tags the block with its death frontier; the block returns to the pool when it is reached.
 * A failed alloca wait gives the block back (to the pool, or to the dealloca it was inherited from); a
 * failed dealloca wait quarantines it. A block has one owner at a time (an allocation, a death record,
 * the pool, the quarantine). `destroy(reason, beforeFailing)` stops reacting to fences, runs
 * `beforeFailing`, destroys (or gives back to) the pool, then fails every pending signal with `reason`.
 * Statistics count allocations as asked for; the pool counts a reused block as its new user's
 * (`recount`), so its live bytes are the allocator's live, dying and quarantined bytes.
 *
 * Waiting uses the fences' promise-free `onReached`: work happens synchronously inside the signal/fail
 * that reaches a fence; exceptions of the caller's semaphores go to `onError`, none from a microtask.
 *
 * This file is the engine and nothing else: which rule serves a request, who owns a block, what a
 * reached or failed fence does. Beside it: the dying-block index (dying-blocks.ts), intrusive lists
 * (intrusive-list.ts), allocations (allocation.ts), death records (death-record.ts), fence dominance
 * (dominance.ts), pool support (pool-support.ts), checks and errors (queue-allocator-checks.ts), options
 * (queue-allocator-options.ts), destroy's give-back (give-back.ts), counters (allocator-counters.ts)
 * and the statistics' shape (allocator-stats.ts).
 */
import { Fence, type Registration } from '@keel/fence';
import { checkOptions, ErrorCode, KeelError, QueueAffinity } from '@keel/hal';
import { abortedBy, failTimepoints, invalid, isFence, signalPendingTimepoints } from '@keel/hal/driver';
import { type Allocation, type AllocationSource, QueueAllocation } from './allocation';
import { AllocatorCounters } from './allocator-counters';
import type { AllocatorStats } from './allocator-stats';
import type { Block } from './block';
import { DeathRecord } from './death-record';
import { reachedNow } from './dominance';
import { DyingBlocks } from './dying-blocks';
import { giveBack } from './give-back';
import { IntrusiveList } from './intrusive-list';
import type { Pool } from './pool';
import { capacityOf, checkAlignment, checkByteLength, poolLabel, recount } from './pool-support';
import {
  asKeelError,
  checkAllocaOptions,
  checkPool,
  growthFailed,
  neverFits,
  throwCallError,
  tooLarge,
} from './queue-allocator-checks';
import {
  OPTION_RULES,
  type QueueAllocaOptions,
  type QueueAllocatorOptions,
  warnOnce,
} from './queue-allocator-options';

/**
 * What waits on a fence for the allocator and must be failed by destroy: a death record, or the
 * dealloca of a failed allocation (it frees nothing but still orders its signal after its wait).
 */
interface Open {
  readonly signal: Fence | undefined;
  reg: Registration | undefined;
}

export class QueueAllocator<M> {
  readonly pool: Pool<M>;
  readonly label: string;
  readonly #what: string;
  readonly #slack: number;
  readonly #destroyPool: boolean;
  readonly #onError: (error: unknown) => void;
  #destroyed = false;

  readonly #counters = new AllocatorCounters();

  // Dying blocks (rules b and d).
  readonly #dying: DyingBlocks<M>;

  // Requests waiting for memory (FIFO).
  readonly #fifo = new IntrusiveList<QueueAllocation<M>>();
  #waking = false;
  #wakeAgain = false;

  // What destroy must fail.
  readonly #pending = new Set<QueueAllocation<M>>();
  readonly #open = new Set<Open>();
  /** With `destroyPool: false`: the allocations that own their block (destroy gives them back). */
  #owning: Set<QueueAllocation<M>> | undefined;

  constructor(pool: Pool<M>, options?: QueueAllocatorOptions) {
    // checkOptions makes sure of every option's type and range.
    const o = checkOptions<QueueAllocatorOptions>('QueueAllocator', options, OPTION_RULES);
    this.label = poolLabel('allocator', o.label);
    this.#what = `QueueAllocator '${this.label}'`;
    checkPool(pool, this.#what);
    this.pool = pool;
    this.#slack = o.reuseSlack ?? 2;
    this.#dying = new DyingBlocks(o.maxCandidates ?? 32);
    this.#destroyPool = o.destroyPool ?? true;
    // Only an allocator that keeps its pool needs to know which allocations hold a block (destroy).
    if (!this.#destroyPool) this.#owning = new Set();
    this.#onError = o.onError ?? warnOnce(this.#what);
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  get stats(): AllocatorStats {
    return this.#counters.snapshot(this.pool.stats, this.#dying.bytes, this.#fifo.size, this.#pending.size);
  }

  /** Sets the live and reserved peaks (the allocator's and the pool's) to the current values. */
  resetPeaks(): void {
    this.#counters.resetPeaks();
    this.pool.resetPeaks();
  }

  /**
   * Allocates `byteLength` bytes (0 is legal) for use after `wait`; signals `signalFence` once the memory is
   * usable. Returns at once. Throws (nothing enqueued, nothing signalled): INVALID_ARGUMENT for bad
   * arguments, RESOURCE_EXHAUSTED for a request larger than the pool can ever hold (or whose pool's slab
   * provider fails, or whose pool's quarantined blocks leave no room for it, while no pending dealloca
   * frees a block that fits), FAILED_PRECONDITION after `destroy()`.
   */
  alloca(
    affinity: QueueAffinity,
    wait: Fence,
    signalFence: Fence,
    byteLength: number,
    options?: QueueAllocaOptions,
  ): Allocation<M> {
    this.#checkCall('alloca', affinity, wait, signalFence);
    checkByteLength(this.#what, 'alloca', byteLength);
    checkAllocaOptions(options, this.#what);
    const pool = this.pool;
    const alignment = options?.alignment ?? pool.alignment;
    if (alignment !== pool.alignment) checkAlignment(this.#what, 'alloca', alignment);
    const label = options?.label;
    // A zero-byte block still takes room (an alignment unit): a pool that can hold nothing refuses it.
    if ((byteLength || 1) > pool.maxBlockBytes) throw tooLarge(this.#what, label, byteLength, pool);
    const a = new QueueAllocation<M>(this, affinity >>> 0, wait, signalFence, byteLength, alignment, label);
    this.#assign(a, true);
    this.#counters.alloca(a.affinity);
    this.#pending.add(a);
    const reg = a.wait.onReached((error) => this.#onAllocaWait(a, error));
    if (this.#pending.has(a)) a.reg = reg;
    return a;
  }

  /**
   * Releases `allocation` once `wait` is reached (its death frontier) and signals `signalFence` then. The
   * allocation is unusable from this call on. Throws INVALID_ARGUMENT for an allocation of another
   * allocator, FAILED_PRECONDITION for a second dealloca or after `destroy()`.
   */
  dealloca(affinity: QueueAffinity, wait: Fence, signalFence: Fence, allocation: Allocation<M>): void {
    this.#checkCall('dealloca', affinity, wait, signalFence);
    if (!(allocation instanceof QueueAllocation) || allocation.owner !== this) {
      throw invalid(`${this.#what}: dealloca: the allocation does not belong to this allocator`);
    }
    const a = allocation as QueueAllocation<M>;
    if (a.freed) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.#what}: dealloca: ${a.describe()} was already deallocated and cannot be used`,
      );
    }
    a.freed = true;
    this.#counters.dealloca(affinity >>> 0);
    if (a.state === 'failed') {
      // Nothing to free (the failed alloca gave its block back); order the signal after the wait.
      const entry: Open = { signal: signalFence, reg: undefined };
      this.#open.add(entry);
      const reg = wait.onReached((error) => {
        this.#open.delete(entry);
        if (!this.#destroyed) {
          this.#complete(
            signalFence,
            error && abortedBy(error, `${this.#what}: dealloca of ${a.describe()}`),
          );
        }
      });
      if (this.#open.has(entry)) entry.reg = reg;
      return;
    }
    // Until the alloca is live, its users are ordered after its signal: make that part of the frontier.
    const frontier = a.state === 'live' ? wait : Fence.join(wait, a.signal);
    this.#count(a, false);
    a.state = 'deallocated';
    if (a.held) {
      a.owns = false;
      this.#owning?.delete(a);
      this.#kill(a, a.held, frontier, signalFence);
    } else {
      // No block yet: the dealloca takes it over once it is assigned (#give).
      a.lateFrontier = frontier;
      a.lateSignal = signalFence;
    }
  }

  /**
   * Fails every pending alloca and dealloca with `reason` (a lost device's loss; default UNAVAILABLE
   * "the allocator was destroyed"), drops queued requests and destroys the pool, or, with
   * `destroyPool: false`, gives the blocks it holds back to the pool (live and pending allocations'
   * included: they can no longer be deallocated; quarantined ones stay reserved). Pending fences are
   * failed even if the pool throws (a provider's destroySlab), which is then rethrown. Idempotent; any
   * later alloca/dealloca is FAILED_PRECONDITION.
   *
   * `beforeFailing` runs once nothing reacts to fences any more, before the pool is destroyed and the
   * fences fail (also when destroyed already): a device fails its own pending work there, so a queued
   * alloca fails with `reason`, not for a quarantine that work's failure would cause.
   */
  destroy(reason?: KeelError, beforeFailing?: () => void): void {
    if (this.#destroyed) {
      beforeFailing?.();
      return;
    }
    // From here on no registration callback, wake or call touches the records below again.
    this.#destroyed = true;
    const error =
      reason ?? new KeelError(ErrorCode.UNAVAILABLE, `${this.#what}: the allocator was destroyed`);
    const toFail: (Fence | undefined)[] = [];
    const owned = this.#owning && [...this.#owning].map((a) => a.held as Block<M>);
    for (const a of this.#pending) {
      a.reg?.cancel();
      a.state = 'failed';
      a.failure = error;
      a.block = undefined;
      a.held = undefined;
      this.#dequeue(a);
      this.#counters.failures++;
      toFail.push(a.signal, a.lateSignal);
    }
    this.#pending.clear();
    for (const r of this.#open) {
      r.reg?.cancel();
      toFail.push(r.signal);
    }
    this.#open.clear();
    const dying = this.#dying.clear();
    try {
      beforeFailing?.();
    } finally {
      try {
        if (this.#destroyPool) this.pool.destroy();
        else giveBack(this.pool, owned ?? [], dying);
      } finally {
        for (const fence of toFail) if (fence) this.#complete(fence, error);
      }
    }
  }

  // --- internals -------------------------------------------------------------------------------------

  /**
   * Signals `fence` (skipping timepoints already passed), or fails it with `error`; an exception a
   * semaphore throws goes to `onError`, whose own exceptions are dropped: nothing may throw from here.
   */
  #complete(fence: Fence, error?: KeelError): void {
    const thrown = error ? failTimepoints(fence, error) : signalPendingTimepoints(fence);
    if (thrown !== undefined) {
      try {
        this.#onError(thrown);
      } catch {
        // Dropped.
      }
    }
  }

  /** The checks every call starts with: cheap tests here, messages built only by `throwCallError`. */
  #checkCall(op: string, affinity: QueueAffinity, wait: Fence, signal: Fence): void {
    const dead = this.#destroyed;
    if (dead || affinity === 0 || !QueueAffinity.isValid(affinity) || !isFence(wait) || !isFence(signal)) {
      throwCallError(this.#what, op, dead, affinity, wait, signal);
    }
  }

  /**
   * Finds a block for `a` by rules b, a, c (and, at the call, d). Returns true when `a` has a block.
   * At the call a request nothing can serve is queued, and so is one whose wait is not reached while
   * earlier requests are queued (it may depend on them: it must not take memory they wait for).
   */
  #assign(a: QueueAllocation<M>, atCall: boolean): boolean {
    if (atCall && this.#fifo.head && !reachedNow(a.wait)) return this.#enqueue(a);
    const n = a.byteLength;
    const alignment = a.alignment;
    const dominated = this.#dying.findDominated(a.wait, n, alignment, this.#limit(n));
    if (dominated) {
      if (atCall) this.#counters.reuseDominated++;
      this.#take(a, dominated, atCall ? 'dominated' : 'waited');
      return true;
    }
    let block = this.pool.reserveExisting(n, alignment);
    if (block) {
      if (atCall) this.#counters.reuseFrontierReached++;
      this.#give(a, block, atCall ? 'frontier-reached' : 'waited');
      return true;
    }
    // A provider that fails (out of memory) is no reason to fail at the call while rule d can serve it.
    let growthError: unknown;
    let growthThrew = false;
    try {
      block = this.pool.reserve(n, alignment);
    } catch (error) {
      if (!atCall) throw error;
      growthThrew = true;
      growthError = error;
    }
    if (block) {
      if (atCall) this.#counters.growths++;
      this.#give(a, block, atCall ? 'grown' : 'waited');
      return true;
    }
    if (!atCall) return false;
    const earliest = this.#dying.findEarliest(n, alignment, this.#limit(n));
    if (earliest) {
      this.#counters.waits++;
      a.wait = Fence.join(a.wait, earliest.frontier);
      this.#take(a, earliest, 'waited');
      return true;
    }
    if (growthThrew) throw growthFailed(this.#what, a.label, growthError);
    return this.#enqueue(a);
  }

  /** Queues `a` at the call (FIFO), unless nothing could ever serve it (thrown); returns false. */
  #enqueue(a: QueueAllocation<M>): false {
    const never = this.#neverFits(a);
    if (never) throw never;
    this.#counters.waits++;
    a.queued = true;
    this.#fifo.push(a);
    return false;
  }

  /**
   * The RESOURCE_EXHAUSTED of `a` when the pool's quarantined blocks leave no room for it even once
   * every other block is released (nothing could ever serve it); undefined when the pool says it could,
   * or cannot tell (`canEverReserve` is optional). The pool is asked even when this allocator
   * quarantined nothing: a pool kept by an earlier allocator (`destroyPool: false`) keeps its
   * quarantined blocks (the pools of this package answer at once when they hold none).
   */
  #neverFits(a: QueueAllocation<M>): KeelError | undefined {
    if (this.pool.canEverReserve?.(a.byteLength, a.alignment) !== false) return undefined;
    const c = this.#counters;
    return neverFits(this.#what, a.label, a.byteLength, this.pool, c.quarantinedBlocks, c.quarantinedBytes);
  }

  /** The largest dying block rules b and d take for `n` bytes (`reuseSlack`, at least one unit more). */
  #limit(n: number): number {
    return Math.max(n * this.#slack, n + this.pool.alignment);
  }

  /** `a` inherits the block of dying record `r` (the pool counts it as `a`'s bytes from now on). */
  #take(a: QueueAllocation<M>, r: DeathRecord<M>, source: AllocationSource): void {
    this.#dying.remove(r);
    a.from = r;
    if (r.bytes !== a.byteLength) recount(r.block, a.byteLength);
    this.#give(a, r.block, source);
  }

  #give(a: QueueAllocation<M>, block: Block<M>, source: AllocationSource): void {
    a.held = block;
    // Its own byte range of the pool block it holds.
    a.block = { slab: block.slab, offset: block.offset, byteLength: a.byteLength };
    a.source = source;
    if (a.freed) {
      // Deallocated while it waited for memory: the dealloca takes the block over at once.
      const frontier = a.lateFrontier as Fence;
      const signal = a.lateSignal;
      a.lateFrontier = undefined;
      a.lateSignal = undefined;
      this.#kill(a, block, frontier, signal);
      return;
    }
    a.owns = true;
    this.#owning?.add(a);
    this.#count(a, true);
  }

  /** Counts `a` in (or out of) the live bytes, the allocator's and its queue's; `counted` says which. */
  #count(a: QueueAllocation<M>, counted: boolean): void {
    if (a.counted === counted) return;
    a.counted = counted;
    this.#counters.live(a.affinity, counted ? a.byteLength : -a.byteLength);
  }

  #onAllocaWait(a: QueueAllocation<M>, error: KeelError | undefined): void {
    a.reg = undefined;
    if (this.#destroyed || a.state === 'failed') return;
    if (error) {
      this.#failAllocation(a, abortedBy(error, `${this.#what}: alloca of ${a.describe()}`));
      return;
    }
    a.reached = true;
    if (a.held) this.#goLive(a);
    // It depends on nothing pending any more: it may go ahead of earlier queued requests.
    else if (a.queued) this.#wake(a);
  }

  #goLive(a: QueueAllocation<M>): void {
    // A fence signalled while serving queued requests may already have made `a` live (re-entrancy).
    if (a.signalled) return;
    a.signalled = true;
    this.#pending.delete(a);
    if (a.state === 'pending') a.state = 'live';
    this.#complete(a.signal);
  }

  #failAllocation(a: QueueAllocation<M>, failure: KeelError): void {
    this.#pending.delete(a);
    const wasQueued = a.queued;
    this.#dequeue(a);
    a.reg?.cancel();
    a.reg = undefined;
    this.#count(a, false);
    a.state = 'failed';
    a.failure = failure;
    this.#counters.failures++;
    const block = a.held;
    a.block = undefined;
    a.held = undefined;
    if (block) {
      if (a.owns) {
        a.owns = false;
        this.#owning?.delete(a);
        this.#settle(block, a.from, a.byteLength);
      } else if (a.death) {
        // Its dealloca's frontier includes the alloca's signal, which fails now: nobody used the block.
        const r = a.death;
        r.allocaFailed = true;
        r.fallback = a.from;
        if (r.bucket) {
          this.#dying.remove(r);
          this.#settle(block, r, r.bytes);
        }
      }
    }
    const deathSignal = a.lateSignal;
    a.lateSignal = undefined;
    a.lateFrontier = undefined;
    if (deathSignal)
      this.#complete(deathSignal, abortedBy(failure, `${this.#what}: dealloca of ${a.describe()}`));
    this.#complete(a.signal, failure);
    // Requests queued behind it no longer wait for it (#wake).
    if (wasQueued && !this.#destroyed) this.#wake();
  }

  /**
   * Gives back a block (counted as `bytes` so far) whose safety is that of `guard` (the record it was
   * inherited from, followed through records whose alloca failed): to the pool if safe, to the
   * quarantine if the frontier failed, back to dying under that frontier if it is still pending.
   */
  #settle(block: Block<M>, guard: DeathRecord<M> | undefined, bytes: number): void {
    let g = guard;
    while (g?.allocaFailed) g = g.fallback;
    if (!g || g.status === 'reached') this.#release(block);
    else if (g.status === 'failed') this.#quarantine(block, bytes);
    else {
      if (g.bytes !== bytes) recount(block, g.bytes);
      this.#dying.add(g);
    }
  }

  #release(block: Block<M>): void {
    this.pool.release(block);
    this.#wake();
  }

  /**
   * The block (counted as `bytes`: its last user's, as asked for) is reserved for good. The pool stops
   * it from holding other memory back (the ring reclaims past it), which may serve queued requests;
   * those it leaves no room for ever fail (#wake).
   */
  #quarantine(block: Block<M>, bytes: number): void {
    this.#counters.quarantined(bytes);
    this.pool.quarantine?.(block);
    this.#wake();
  }

  /** Tags `block` with its death frontier. */
  #kill(a: QueueAllocation<M>, block: Block<M>, frontier: Fence, signal: Fence | undefined): void {
    const r = new DeathRecord<M>(a, block, capacityOf(block), frontier, signal);
    a.death = r;
    this.#dying.add(r);
    this.#open.add(r);
    const reg = frontier.onReached((error) => this.#onFrontier(r, error));
    if (this.#open.has(r)) r.reg = reg;
  }

  #onFrontier(r: DeathRecord<M>, error: KeelError | undefined): void {
    this.#open.delete(r);
    r.reg = undefined;
    if (this.#destroyed) return;
    r.status = error ? 'failed' : 'reached';
    if (r.bucket) {
      // Still dying: to the quarantine, or back to the pool.
      this.#dying.remove(r);
      if (error) this.#quarantine(r.block, r.bytes);
      else this.#release(r.block);
    }
    const signal = r.signal;
    r.signal = undefined;
    if (signal) {
      this.#complete(
        signal,
        error && abortedBy(error, `${this.#what}: dealloca of ${r.allocation.describe()}`),
      );
    }
  }

  /** Takes `a` out of the FIFO of queued requests (if it is in it). */
  #dequeue(a: QueueAllocation<M>): void {
    if (!a.queued) return;
    a.queued = false;
    this.#fifo.remove(a);
  }

  /**
   * Serves queued requests after memory came back (or a block was quarantined, or a queued request
   * left), oldest first: each one that fits is served, but behind one that is not served only those
   * whose wait is reached are (they depend on nothing pending; one whose wait is not reached may depend
   * on the earlier request and must not take the memory it waits for). One that the quarantined blocks
   * leave no room for ever fails (RESOURCE_EXHAUSTED). Re-entrant calls (from the fences signalled
   * here) make the running loop go round again, over every request. `only`: a queued request whose
   * wait was just reached; memory did not come back, so it is the only one to try.
   */
  #wake(only?: QueueAllocation<M>): void {
    if (!this.#fifo.head) return;
    if (this.#waking) {
      this.#wakeAgain = true;
      return;
    }
    this.#waking = true;
    try {
      do {
        this.#wakeAgain = false;
        const ready: QueueAllocation<M>[] = [];
        const failed: [QueueAllocation<M>, KeelError][] = [];
        // An earlier request was not served: from here on only requests whose wait is reached are.
        let behind = false;
        for (let a: QueueAllocation<M> | undefined = only ?? this.#fifo.head; a; ) {
          const next: QueueAllocation<M> | undefined = only ? undefined : a.next;
          try {
            if ((!behind || a.reached) && this.#assign(a, false)) {
              this.#dequeue(a);
              ready.push(a);
            } else {
              behind = true;
              const never = this.#neverFits(a);
              if (never) failed.push([a, never]);
            }
          } catch (error) {
            failed.push([a, asKeelError(error)]);
          }
          a = next;
        }
        only = undefined;
        for (const [a, error] of failed) this.#failAllocation(a, error);
        for (const a of ready) {
          if (this.#destroyed) return;
          if (a.reached && a.state !== 'failed') this.#goLive(a);
        }
      } while (this.#wakeAgain && !this.#destroyed && this.#fifo.head);
    } finally {
      this.#waking = false;
    }
  }
}
