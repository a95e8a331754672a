/**
 * The queue-ordered allocator (IREE's queue_alloca/queue_dealloca, seed 002): allocation and release
 * ordered by fences rather than by the host, with reuse decided by live ranges on timelines.
 *
 * `alloca(affinity, wait, signalFence, n)` returns an Allocation at once. Its block is chosen at the call
 * when possible, by these rules in order:
 *
 * - (b) dominated: a block freed by a dealloca whose death frontier (the dealloca's wait) is dominated by
 *   the alloca's own wait (same semaphores, values at least as high): whoever uses the new allocation
 *   runs after the old users finished, so the block is taken at once and nobody waits (same-queue
 *   reuse). Among candidates the smallest that fits is taken; a block larger than `reuseSlack` times
 *   the request is left for others.
 * - (a) frontier reached: free memory the pool already holds (blocks return to the pool when their
 *   frontier is reached).
 * - (c) growth: the pool grows within its budget.
 * - (d) wait: the earliest pending dealloca whose block fits is taken and the alloca's wait becomes the
 *   join of its wait and that frontier; if no pending block fits, the request queues (FIFO) and is
 *   served as soon as memory returns (any request that fits is served; a large request does not block
 *   smaller ones behind it).
 *
 * The alloca's `signalFence` is signalled once its (effective) wait is reached and it has a block. Only a
 * request larger than the pool can ever hold (`pool.maxBlockBytes`) fails: RESOURCE_EXHAUSTED, thrown
 * synchronously by `alloca` (nothing is enqueued or signalled), like every argument error.
 *
 * `dealloca(affinity, wait, signalFence, allocation)` makes the allocation unusable at once (a second
 * dealloca is FAILED_PRECONDITION) and tags its block with the death frontier `wait` (joined with the
 * alloca's signal if the alloca was not live yet). When the frontier is reached, the block returns to
 * the pool (waking queued requests) and `signalFence` is signalled.
 *
 * Failures:
 * - a failed alloca wait fails its `signal` (ABORTED, cause = the failure); the allocation becomes
 *   `failed` and its block goes back: to the pool, or, if it was inherited from a dealloca whose
 *   frontier is still pending, back to that dealloca's care (its old users may still run).
 * - a failed dealloca wait fails the dealloca's `signal` and frees nothing: the block is quarantined
 *   (counted in `quarantinedBytes`, never reused). An alloca that took the block by rule b or d waits on
 *   a fence that dominates the failed timepoint, so it fails too and its block stays quarantined (no
 *   double free: a block has one owner at a time — an allocation, a dealloca record, the pool or the
 *   quarantine). Exception: if the frontier failed only because the alloca itself failed before anyone
 *   could use the block (its signal is part of the frontier), the block goes back as in the first case.
 * - `destroy()` fails every pending alloca and dealloca signal with UNAVAILABLE, drops queued requests
 *   and destroys the pool (unless `destroyPool: false`); any later call is FAILED_PRECONDITION.
 *
 * All waiting uses the fences' promise-free `onReached`: work happens synchronously inside the
 * `signal`/`fail` that reaches a fence. Signalling the caller's fences skips timepoints already passed
 * (as every queue operation does); an exception a semaphore still throws goes to `onError` (default: one
 * console warning per allocator). Nothing is ever thrown from a microtask.
 *
 * Why one file past ~600 lines: it is one concept, the engine behind `alloca`/`dealloca`, and most of
 * its length is the contract above and the reuse rules (a)–(d), which share the engine's state (free
 * lists by frontier, pending deallocas, the FIFO of queued requests) and must be read together; the
 * parts that stand alone already live in their own files (allocation.ts, death-record.ts,
 * dominance.ts, pool-support.ts, allocator-stats.ts).
 */
import { describeValue, Fence, type Registration, type Semaphore } from '@keel/fence';
import { checkOptions, ErrorCode, KeelError, type OptionRules, QueueAffinity } from '@keel/hal';
import { abortedBy, failTimepoints, isFence, signalPendingTimepoints } from '@keel/hal/driver';
import { type Allocation, AllocationBlock, type AllocationSource, QueueAllocation } from './allocation';
import type { AllocatorStats, QueueStats } from './allocator-stats';
import type { Block } from './block';
import { DeathRecord } from './death-record';
import { fenceDominates } from './dominance';
import type { Pool } from './pool';
import { checkAlignment, checkByteLength, PoolBlock, poolLabel } from './pool-support';

export interface QueueAllocatorOptions {
  /** A name for error messages. */
  readonly label?: string;
  /**
   * Rule b and d take a dying block of at most this many times the requested size (default 2), so a
   * small request does not pin a large block.
   */
  readonly reuseSlack?: number;
  /** Dominated candidates examined per wait timepoint (default 32): keeps rule b O(1). */
  readonly maxCandidates?: number;
  /** `destroy()` also destroys the pool (default true). */
  readonly destroyPool?: boolean;
  /**
   * Receives exceptions a semaphore throws while the allocator signals or fails the caller's fences
   * (a timepoint already passed is not one: it is left alone, as by every queue operation). Default: one
   * console warning per allocator. Never called for the allocator's own errors; its state is never
   * affected, and an exception of `onError` itself is dropped.
   */
  readonly onError?: (error: unknown) => void;
}

/** Options of one alloca. */
export interface QueueAllocaOptions {
  /** Alignment of the block's offset, a power of two; defaults to the pool's alignment. */
  readonly alignment?: number;
  /** A name for error messages. */
  readonly label?: string;
}

const EMPTY_KEY = {};

/** The options QueueAllocator takes (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  label: { type: 'string' },
  reuseSlack: { type: 'number', min: 1 },
  maxCandidates: { type: 'integer', min: 1 },
  destroyPool: { type: 'boolean' },
  onError: { type: 'function' },
};

interface MutableQueueStats {
  allocas: number;
  deallocas: number;
  liveBytes: number;
}

/** A dealloca of a failed allocation: it frees nothing but still orders its signal after its wait. */
interface SignalOnly {
  readonly signal: Fence;
  registration: Registration | undefined;
}

/** The default `onError`: one console warning per allocator (never a throw from a microtask). */
function warnOnce(label: string): (error: unknown) => void {
  let warned = false;
  return (error: unknown): void => {
    if (warned) return;
    warned = true;
    globalThis.console?.warn(
      `QueueAllocator '${label}': a semaphore threw while the allocator completed a fence (further ones are not reported):`,
      error,
    );
  };
}

/** The bytes a pool keeps behind a block (what a later request may reuse). */
function capacityOf<M>(block: Block<M>): number {
  return block instanceof PoolBlock ? block.capacity : block.byteLength;
}

export class QueueAllocator<M> {
  readonly pool: Pool<M>;
  readonly label: string;
  readonly #what: string;
  readonly #slack: number;
  readonly #maxCandidates: number;
  readonly #destroyPool: boolean;
  readonly #onError: (error: unknown) => void;
  #destroyed = false;

  // Counters.
  #allocas = 0;
  #deallocas = 0;
  #failures = 0;
  #liveBytes = 0;
  #peakLiveBytes = 0;
  #dyingBytes = 0;
  #reuseFrontierReached = 0;
  #reuseDominated = 0;
  #growths = 0;
  #waits = 0;
  #quarantinedBlocks = 0;
  #quarantinedBytes = 0;
  readonly #queues = new Map<number, MutableQueueStats>();

  // Dying blocks: by the first semaphore of their frontier, and in age order.
  readonly #buckets = new Map<Semaphore | object, DeathRecord<M>[]>();
  #oldest: DeathRecord<M> | undefined = undefined;
  #newest: DeathRecord<M> | undefined = undefined;

  // Requests waiting for memory (FIFO).
  #queueHead: QueueAllocation<M> | undefined = undefined;
  #queueTail: QueueAllocation<M> | undefined = undefined;
  #queued = 0;
  #waking = false;
  #wakeAgain = false;

  // What destroy must fail.
  readonly #pending = new Set<QueueAllocation<M>>();
  readonly #open = new Set<DeathRecord<M>>();
  readonly #openSignals = new Set<SignalOnly>();

  constructor(pool: Pool<M>, rawOptions?: QueueAllocatorOptions) {
    const options = checkOptions<QueueAllocatorOptions>('QueueAllocator', rawOptions, OPTION_RULES);
    this.label = poolLabel('allocator', options.label);
    this.#what = `QueueAllocator '${this.label}'`;
    if (typeof pool !== 'object' || pool === null || typeof pool.reserve !== 'function') {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${this.#what}: pool must be a Pool`);
    }
    this.pool = pool;
    const slack = options.reuseSlack ?? 2;
    if (typeof slack !== 'number' || !(slack >= 1)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${this.#what}: reuseSlack ${describeValue(slack)} must be ≥ 1`,
      );
    }
    this.#slack = slack;
    const candidates = options.maxCandidates ?? 32;
    if (!Number.isSafeInteger(candidates) || candidates < 1) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${this.#what}: maxCandidates ${describeValue(candidates)} must be a positive integer`,
      );
    }
    this.#maxCandidates = candidates;
    this.#destroyPool = options.destroyPool ?? true;
    const onError = options.onError ?? warnOnce(this.label);
    if (typeof onError !== 'function') {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${this.#what}: onError must be a function`);
    }
    this.#onError = onError;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  get stats(): AllocatorStats {
    const pool = this.pool.stats;
    const queues = new Map<QueueAffinity, QueueStats>();
    for (const [mask, q] of this.#queues) queues.set(mask, { ...q });
    return {
      allocas: this.#allocas,
      deallocas: this.#deallocas,
      failures: this.#failures,
      liveBytes: this.#liveBytes,
      peakLiveBytes: this.#peakLiveBytes,
      dyingBytes: this.#dyingBytes,
      reservedBytes: pool.reservedBytes,
      peakReservedBytes: pool.peakReservedBytes,
      reuseFrontierReached: this.#reuseFrontierReached,
      reuseDominated: this.#reuseDominated,
      growths: this.#growths,
      waits: this.#waits,
      queuedRequests: this.#queued,
      pendingAllocas: this.#pending.size,
      quarantinedBlocks: this.#quarantinedBlocks,
      quarantinedBytes: this.#quarantinedBytes,
      queues,
      pool,
    };
  }

  /** Sets the live and reserved peaks (the allocator's and the pool's) to the current values. */
  resetPeaks(): void {
    this.#peakLiveBytes = this.#liveBytes;
    this.pool.resetPeaks();
  }

  /**
   * Allocates `byteLength` bytes (0 is legal) for use after `wait`; signals `signalFence` once the memory is
   * usable. Returns at once. Throws (nothing enqueued, nothing signalled): INVALID_ARGUMENT for bad
   * arguments, RESOURCE_EXHAUSTED for a request larger than the pool can ever hold (or a slab provider
   * that fails), FAILED_PRECONDITION after `destroy()`.
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
    const alignment = options?.alignment ?? this.pool.alignment;
    if (alignment !== this.pool.alignment) checkAlignment(this.#what, 'alloca', alignment);
    const label = options?.label;
    if (byteLength > this.pool.maxBlockBytes) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${this.#what}: alloca${label === undefined ? '' : ` '${label}'`}: ${byteLength} bytes exceed what ${this.pool.kind} pool '${this.pool.label}' can ever hold (${this.pool.maxBlockBytes} bytes)`,
      );
    }
    const a = new QueueAllocation<M>(this, affinity >>> 0, wait, signalFence, byteLength, alignment, label);
    this.#assign(a, true);
    this.#allocas++;
    this.#queueStats(a.affinity).allocas++;
    this.#pending.add(a);
    const registration = a.wait.onReached((error) => this.#onAllocaWait(a, error));
    if (this.#pending.has(a)) a.registration = registration;
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
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${this.#what}: dealloca: the allocation does not belong to this allocator`,
      );
    }
    const a = allocation as QueueAllocation<M>;
    if (a.deallocIssued) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.#what}: dealloca: ${a.describe()} was already deallocated and cannot be used`,
      );
    }
    a.deallocIssued = true;
    this.#deallocas++;
    const q = this.#queueStats(affinity >>> 0);
    q.deallocas++;
    if (a.state === 'failed') {
      // Nothing to free (the failed alloca gave its block back); order the signal after the wait.
      const entry: SignalOnly = { signal: signalFence, registration: undefined };
      this.#openSignals.add(entry);
      const registration = wait.onReached((error) => {
        this.#openSignals.delete(entry);
        if (this.#destroyed) return;
        if (error === undefined) this.#signalFence(signalFence);
        else this.#failFence(signalFence, abortedBy(error, `${this.#what}: dealloca of ${a.describe()}`));
      });
      if (this.#openSignals.has(entry)) entry.registration = registration;
      return;
    }
    // Until the alloca is live, its users are ordered after its signal: make that part of the frontier.
    const frontier = a.state === 'live' ? wait : Fence.join(wait, a.signal);
    this.#uncount(a);
    a.state = 'deallocated';
    if (a.poolBlock === undefined) {
      a.pendingDeathFrontier = frontier;
      a.pendingDeathSignal = signalFence;
      a.pendingDeathAffinity = affinity >>> 0;
      return;
    }
    a.blockOwned = false;
    this.#kill(a, a.poolBlock, frontier, signalFence, affinity >>> 0);
  }

  /**
   * Fails every pending alloca and dealloca with UNAVAILABLE, drops queued requests and (unless
   * `destroyPool: false`) destroys the pool. Idempotent; any later alloca/dealloca is FAILED_PRECONDITION.
   */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    const error = new KeelError(ErrorCode.UNAVAILABLE, `${this.#what}: the allocator was destroyed`);
    const toFail: Fence[] = [];
    for (const a of this.#pending) {
      a.registration?.cancel();
      a.registration = undefined;
      a.state = 'failed';
      a.failure = error;
      a.block = undefined;
      a.poolBlock = undefined;
      a.queued = false;
      a.prevQueued = undefined;
      a.nextQueued = undefined;
      this.#failures++;
      toFail.push(a.signal);
      if (a.pendingDeathSignal !== undefined) toFail.push(a.pendingDeathSignal);
      a.pendingDeathSignal = undefined;
    }
    this.#pending.clear();
    this.#queueHead = undefined;
    this.#queueTail = undefined;
    this.#queued = 0;
    for (const r of this.#open) {
      r.registration?.cancel();
      r.registration = undefined;
      if (r.signal !== undefined) toFail.push(r.signal);
      r.signal = undefined;
    }
    this.#open.clear();
    for (const entry of this.#openSignals) {
      entry.registration?.cancel();
      toFail.push(entry.signal);
    }
    this.#openSignals.clear();
    this.#buckets.clear();
    this.#oldest = undefined;
    this.#newest = undefined;
    if (this.#destroyPool) this.pool.destroy();
    for (const fence of toFail) this.#failFence(fence, error);
  }

  // --- internals -------------------------------------------------------------------------------------

  #signalFence(fence: Fence): void {
    const thrown = signalPendingTimepoints(fence);
    if (thrown !== undefined) this.#report(thrown);
  }

  #failFence(fence: Fence, error: KeelError): void {
    const thrown = failTimepoints(fence, error);
    if (thrown !== undefined) this.#report(thrown);
  }

  #report(error: unknown): void {
    try {
      this.#onError(error);
    } catch {
      // An exception of the caller's handler is dropped: nothing may throw from here.
    }
  }

  #checkCall(op: string, affinity: QueueAffinity, wait: Fence, signal: Fence): void {
    if (this.#destroyed || !QueueAffinity.isValid(affinity) || !isFence(wait) || !isFence(signal)) {
      this.#rejectCall(`${this.#what}: ${op}`, affinity, wait, signal);
    }
  }

  #rejectCall(what: string, affinity: QueueAffinity, wait: Fence, signal: Fence): void {
    if (this.#destroyed) {
      throw new KeelError(ErrorCode.FAILED_PRECONDITION, `${what}: the allocator was destroyed`);
    }
    QueueAffinity.check(affinity, what);
    if (!isFence(wait)) throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: wait must be a Fence`);
    if (!isFence(signal)) throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: signal must be a Fence`);
  }

  #queueStats(mask: number): MutableQueueStats {
    let q = this.#queues.get(mask);
    if (q === undefined) {
      q = { allocas: 0, deallocas: 0, liveBytes: 0 };
      this.#queues.set(mask, q);
    }
    return q;
  }

  /**
   * Finds a block for `a` by rules b, a, c (and, at the call, d). Returns true when `a` has a block.
   * At the call a request nothing can serve is queued.
   */
  #assign(a: QueueAllocation<M>, atCall: boolean): boolean {
    const n = a.byteLength;
    const alignment = a.alignment;
    const dominated = this.#findDominated(a.wait, n, alignment);
    if (dominated !== undefined) {
      if (atCall) this.#reuseDominated++;
      this.#take(a, dominated, atCall ? 'dominated' : 'waited');
      return true;
    }
    let block = this.pool.reserveExisting(n, alignment);
    if (block !== undefined) {
      if (atCall) this.#reuseFrontierReached++;
      this.#give(a, block, atCall ? 'frontier-reached' : 'waited');
      return true;
    }
    block = this.pool.reserve(n, alignment);
    if (block !== undefined) {
      if (atCall) this.#growths++;
      this.#give(a, block, atCall ? 'grown' : 'waited');
      return true;
    }
    if (!atCall) return false;
    this.#waits++;
    const earliest = this.#findEarliest(n, alignment);
    if (earliest !== undefined) {
      a.wait = Fence.join(a.wait, earliest.frontier);
      this.#take(a, earliest, 'waited');
      return true;
    }
    this.#enqueue(a);
    return false;
  }

  /** Rule b: the smallest fitting dying block whose frontier `wait` dominates. */
  #findDominated(wait: Fence, n: number, alignment: number): DeathRecord<M> | undefined {
    if (this.#oldest === undefined) return undefined;
    const tps = wait.timepoints;
    const limit = Math.max(n * this.#slack, n + this.pool.alignment);
    let best: DeathRecord<M> | undefined;
    let bestLength = Number.POSITIVE_INFINITY;
    for (let t = 0; t < tps.length; t++) {
      const tp = tps[t] as (typeof tps)[number];
      const bucket = this.#buckets.get(tp.semaphore);
      if (bucket === undefined) continue;
      const stop = Math.max(0, bucket.length - this.#maxCandidates);
      for (let i = bucket.length - 1; i >= stop; i--) {
        const r = bucket[i] as DeathRecord<M>;
        const length = r.capacity;
        if (length < n || length > limit || length >= bestLength) continue;
        if (r.block.offset % alignment !== 0) continue;
        const ftps = r.frontier.timepoints;
        const ok =
          ftps.length === 1
            ? (ftps[0] as (typeof ftps)[number]).value <= tp.value
            : fenceDominates(wait, r.frontier);
        if (!ok) continue;
        best = r;
        bestLength = length;
        if (length === n || r.block.byteLength === n) return best;
      }
    }
    return best;
  }

  /** Rule d: the oldest dying block that fits (within the slack if possible). */
  #findEarliest(n: number, alignment: number): DeathRecord<M> | undefined {
    const limit = Math.max(n * this.#slack, n + this.pool.alignment);
    let fallback: DeathRecord<M> | undefined;
    for (let r = this.#oldest; r !== undefined; r = r.newer) {
      const length = r.capacity;
      if (length < n || r.block.offset % alignment !== 0) continue;
      if (length <= limit) return r;
      fallback ??= r;
    }
    return fallback;
  }

  /** `a` inherits the block of dying record `r`. */
  #take(a: QueueAllocation<M>, r: DeathRecord<M>, source: AllocationSource): void {
    this.#unindex(r);
    r.where = 'taken';
    a.inherited = r;
    this.#give(a, r.block, source);
  }

  #give(a: QueueAllocation<M>, block: Block<M>, source: AllocationSource): void {
    a.poolBlock = block;
    a.block = new AllocationBlock(block.slab, block.offset, a.byteLength);
    a.blockOwned = true;
    a.source = source;
    if (a.deallocIssued) {
      // Deallocated while it waited for memory: the dealloca takes the block over at once.
      const frontier = a.pendingDeathFrontier as Fence;
      const signal = a.pendingDeathSignal;
      a.pendingDeathFrontier = undefined;
      a.pendingDeathSignal = undefined;
      a.blockOwned = false;
      this.#kill(a, block, frontier, signal, a.pendingDeathAffinity);
      return;
    }
    a.counted = true;
    this.#liveBytes += a.byteLength;
    if (this.#liveBytes > this.#peakLiveBytes) this.#peakLiveBytes = this.#liveBytes;
    this.#queueStats(a.affinity).liveBytes += a.byteLength;
  }

  #uncount(a: QueueAllocation<M>): void {
    if (!a.counted) return;
    a.counted = false;
    this.#liveBytes -= a.byteLength;
    this.#queueStats(a.affinity).liveBytes -= a.byteLength;
  }

  #onAllocaWait(a: QueueAllocation<M>, error: KeelError | undefined): void {
    a.registration = undefined;
    if (this.#destroyed || a.state === 'failed') return;
    if (error !== undefined) {
      this.#failAllocation(a, abortedBy(error, `${this.#what}: alloca of ${a.describe()}`));
      return;
    }
    a.waitReached = true;
    if (a.poolBlock !== undefined) this.#goLive(a);
  }

  #goLive(a: QueueAllocation<M>): void {
    // A fence signalled while serving queued requests may already have made `a` live (re-entrancy).
    if (a.signalled) return;
    a.signalled = true;
    this.#pending.delete(a);
    if (a.state === 'pending') a.state = 'live';
    this.#signalFence(a.signal);
  }

  #failAllocation(a: QueueAllocation<M>, failure: KeelError): void {
    this.#pending.delete(a);
    if (a.queued) this.#dequeue(a);
    a.registration?.cancel();
    a.registration = undefined;
    this.#uncount(a);
    a.state = 'failed';
    a.failure = failure;
    this.#failures++;
    const block = a.poolBlock;
    a.block = undefined;
    a.poolBlock = undefined;
    if (block !== undefined) {
      if (a.blockOwned) {
        a.blockOwned = false;
        this.#settle(block, a.inherited);
      } else if (a.death !== undefined) {
        // Its dealloca's frontier includes the alloca's signal, which fails now: nobody used the block.
        const r = a.death;
        r.allocaFailed = true;
        r.fallback = a.inherited;
        if (r.where === 'dying') {
          this.#unindex(r);
          r.where = 'retired';
          this.#settle(block, r);
        }
      }
    }
    const deathSignal = a.pendingDeathSignal;
    a.pendingDeathSignal = undefined;
    a.pendingDeathFrontier = undefined;
    if (deathSignal !== undefined)
      this.#failFence(deathSignal, abortedBy(failure, `${this.#what}: dealloca of ${a.describe()}`));
    this.#failFence(a.signal, failure);
  }

  /**
   * Gives back a block whose safety is that of `guard` (the record it was inherited from, followed
   * through records whose alloca failed): to the pool if safe, to the quarantine if the frontier failed,
   * back to dying under that frontier if it is still pending.
   */
  #settle(block: Block<M>, guard: DeathRecord<M> | undefined): void {
    let g = guard;
    while (g?.allocaFailed) g = g.fallback;
    if (g === undefined || g.status === 'reached') {
      this.#release(block);
    } else if (g.status === 'failed') {
      this.#quarantine(block);
    } else {
      this.#index(g);
    }
  }

  #release(block: Block<M>): void {
    this.pool.release(block);
    this.#wake();
  }

  #quarantine(block: Block<M>): void {
    this.#quarantinedBlocks++;
    this.#quarantinedBytes += block.byteLength;
  }

  /** Tags `block` with its death frontier. */
  #kill(
    a: QueueAllocation<M>,
    block: Block<M>,
    frontier: Fence,
    signal: Fence | undefined,
    affinity: number,
  ): void {
    const r = new DeathRecord<M>(block, capacityOf(block), frontier, signal, affinity);
    a.death = r;
    this.#index(r);
    this.#open.add(r);
    const registration = frontier.onReached((error) => this.#onFrontier(r, error));
    if (this.#open.has(r)) r.registration = registration;
  }

  #onFrontier(r: DeathRecord<M>, error: KeelError | undefined): void {
    this.#open.delete(r);
    r.registration = undefined;
    if (this.#destroyed) return;
    r.status = error === undefined ? 'reached' : 'failed';
    if (r.where === 'dying') {
      this.#unindex(r);
      if (error === undefined) {
        r.where = 'retired';
        this.#release(r.block);
      } else {
        r.where = 'quarantined';
        this.#quarantine(r.block);
      }
    }
    const signal = r.signal;
    r.signal = undefined;
    if (signal === undefined) return;
    if (error === undefined) this.#signalFence(signal);
    else this.#failFence(signal, abortedBy(error, `${this.#what}: dealloca`));
  }

  #index(r: DeathRecord<M>): void {
    r.where = 'dying';
    const first = r.frontier.timepoints[0];
    const key = first === undefined ? EMPTY_KEY : first.semaphore;
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      bucket = [];
      this.#buckets.set(key, bucket);
    }
    r.bucket = bucket;
    r.bucketIndex = bucket.length;
    bucket.push(r);
    r.older = this.#newest;
    r.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = r;
    else this.#oldest = r;
    this.#newest = r;
    this.#dyingBytes += r.block.byteLength;
  }

  #unindex(r: DeathRecord<M>): void {
    const bucket = r.bucket;
    if (bucket === undefined) return;
    const last = bucket.pop() as DeathRecord<M>;
    if (last !== r) {
      bucket[r.bucketIndex] = last;
      last.bucketIndex = r.bucketIndex;
    }
    if (bucket.length === 0) {
      const first = r.frontier.timepoints[0];
      this.#buckets.delete(first === undefined ? EMPTY_KEY : first.semaphore);
    }
    r.bucket = undefined;
    r.bucketIndex = -1;
    if (r.older !== undefined) r.older.newer = r.newer;
    else this.#oldest = r.newer;
    if (r.newer !== undefined) r.newer.older = r.older;
    else this.#newest = r.older;
    r.older = undefined;
    r.newer = undefined;
    this.#dyingBytes -= r.block.byteLength;
  }

  #enqueue(a: QueueAllocation<M>): void {
    a.queued = true;
    a.prevQueued = this.#queueTail;
    a.nextQueued = undefined;
    if (this.#queueTail !== undefined) this.#queueTail.nextQueued = a;
    else this.#queueHead = a;
    this.#queueTail = a;
    this.#queued++;
  }

  #dequeue(a: QueueAllocation<M>): void {
    if (!a.queued) return;
    a.queued = false;
    if (a.prevQueued !== undefined) a.prevQueued.nextQueued = a.nextQueued;
    else this.#queueHead = a.nextQueued;
    if (a.nextQueued !== undefined) a.nextQueued.prevQueued = a.prevQueued;
    else this.#queueTail = a.prevQueued;
    a.prevQueued = undefined;
    a.nextQueued = undefined;
    this.#queued--;
  }

  /**
   * Serves queued requests after memory came back, oldest first; any request that fits is served.
   * Re-entrant calls (from the fences signalled here) make the running loop go round again.
   */
  #wake(): void {
    if (this.#queueHead === undefined) return;
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
        for (let a: QueueAllocation<M> | undefined = this.#queueHead; a !== undefined; ) {
          const next: QueueAllocation<M> | undefined = a.nextQueued;
          let served = false;
          try {
            served = this.#assign(a, false);
          } catch (error) {
            failed.push([
              a,
              KeelError.is(error) ? error : new KeelError(ErrorCode.INTERNAL, describeValue(error)),
            ]);
          }
          if (served) {
            this.#dequeue(a);
            ready.push(a);
          }
          a = next;
        }
        for (const [a, error] of failed) this.#failAllocation(a, error);
        for (const a of ready) {
          if (this.#destroyed) return;
          if (a.waitReached && a.state !== 'failed') this.#goLive(a);
        }
      } while (this.#wakeAgain && !this.#destroyed && this.#queueHead !== undefined);
    } finally {
      this.#waking = false;
    }
  }
}
