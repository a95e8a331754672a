/**
 * Property tests of the queue-ordered engine: random programs of allocas, kernels and deallocas over
 * several queues (timelines), with cross-queue waits, host-gated deallocas, random execution order and
 * injected failures. Checked: blocks of allocations in their use window (from the alloca's signal to the
 * dealloca's frontier) never overlap; statistics match the program (the pool's live bytes are the
 * allocator's live, dying and quarantined bytes); after everything ran every byte is
 * back in the pool (except quarantined blocks of failed frontiers); nothing hangs (a program that
 * deadlocks on memory is ended by destroy, which fails everything pending); a request refused because
 * quarantined blocks leave no room for it (RESOURCE_EXHAUSTED, thrown or failing its signal) indeed
 * cannot be reserved once everything else is back in the pool.
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Allocation, type Pool, QueueAllocator, RingPool, TlsfPool } from '../src/index';
import { CountingProvider } from './helpers';

/** Property runs take a few seconds on a loaded machine; a hang fails instead of blocking. */
const TIMEOUT_MS = 60_000;

type Op =
  | {
      readonly kind: 'alloca';
      readonly queue: number;
      readonly size: number;
      readonly alignLog2: number;
      readonly cross: number;
    }
  | { readonly kind: 'kernel'; readonly queue: number; readonly cross: number }
  | { readonly kind: 'dealloca'; readonly queue: number; readonly pick: number; readonly gate: boolean }
  | { readonly kind: 'step'; readonly pick: number }
  | { readonly kind: 'host' }
  | { readonly kind: 'fail'; readonly queue: number };

const QUEUES = 3;

function opArb(withFailures: boolean): fc.Arbitrary<Op> {
  const queue = fc.integer({ min: 0, max: QUEUES - 1 });
  const cross = fc.integer({ min: -3, max: QUEUES - 1 });
  const arbs: { weight: number; arbitrary: fc.Arbitrary<Op> }[] = [
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('alloca' as const),
        queue,
        size: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(64, 256, 1000, 4096) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 5000 }) },
        ),
        alignLog2: fc.oneof(
          { weight: 3, arbitrary: fc.constant(0) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 9 }) },
        ),
        cross,
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('kernel' as const), queue, cross }) },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('dealloca' as const),
        queue,
        pick: fc.nat(),
        gate: fc.boolean(),
      }),
    },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('step' as const), pick: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('host' as const) }) },
  ];
  if (withFailures)
    arbs.push({ weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), queue }) });
  return fc.oneof(...arbs);
}

interface Tracked {
  readonly a: Allocation<ArrayBuffer>;
  readonly signal: Fence;
  deallocated: boolean;
  /** The dealloca's wait: the use window ends when it is reached. */
  frontier: Fence | undefined;
}

interface Outcome {
  readonly stuck: boolean;
}

function runProgram(pool: Pool<ArrayBuffer>, ops: readonly Op[]): Outcome {
  const errors: unknown[] = [];
  const allocator = new QueueAllocator(pool, { onError: (e) => errors.push(e) });
  const queues = Array.from({ length: QUEUES }, (_, i) => ({
    sem: new TimelineSemaphore(0, { label: `q${i}` }),
    issued: 0,
  }));
  const host = new TimelineSemaphore(0, { label: 'host' });
  let hostIssued = 0;
  let injected = false;
  const tracked: Tracked[] = [];
  const runnable: Fence[] = [];
  const inUse = new Set<Tracked>();
  const violations: string[] = [];
  /** Requests refused because the quarantine leaves no room for them: [byteLength, alignment]. */
  const refused: [number, number][] = [];

  const waitFor = (queue: number, cross: number): Fence => {
    const q = queues[queue] as (typeof queues)[number];
    let fence = Fence.of({ semaphore: q.sem, value: q.issued });
    if (cross >= 0 && cross !== queue) {
      const c = queues[cross] as (typeof queues)[number];
      fence = fence.with(c.sem, c.issued);
    }
    return fence;
  };
  const nextSignal = (queue: number): Fence => {
    const q = queues[queue] as (typeof queues)[number];
    q.issued++;
    return Fence.of({ semaphore: q.sem, value: q.issued });
  };
  // A window ends when every timepoint of the frontier was reached (a failed semaphore keeps the payload
  // it reached before failing; a frontier that failed before being reached never ends its window).
  const windowEnded = (t: Tracked): boolean =>
    t.frontier?.timepoints.every((tp) => tp.semaphore.value >= tp.value) === true;
  const enterUse = (t: Tracked): void => {
    const a = t.a;
    const block = a.block;
    if (block === undefined) {
      violations.push('an alloca signalled without a block');
      return;
    }
    if (block.byteLength !== a.byteLength) violations.push('block length differs from the allocation');
    if (block.offset % a.alignment !== 0)
      violations.push(`offset ${block.offset} not aligned to ${a.alignment}`);
    if (block.offset + block.byteLength > block.slab.byteLength) violations.push('block leaves its slab');
    for (const other of inUse) {
      // Windows end when the frontier is reached, whatever order callbacks of one signal run in.
      if (windowEnded(other)) {
        inUse.delete(other);
        continue;
      }
      const ob = other.a.block;
      if (ob === undefined || ob.slab !== block.slab) continue;
      const end = block.offset + Math.max(1, block.byteLength);
      const otherEnd = ob.offset + Math.max(1, ob.byteLength);
      if (block.offset < otherEnd && ob.offset < end) {
        violations.push(
          `overlap in slab ${block.slab.id}: [${block.offset}, ${end}) and [${ob.offset}, ${otherEnd})`,
        );
      }
    }
    inUse.add(t);
  };
  const checkStats = (): void => {
    let live = 0;
    for (const t of tracked) {
      if ((t.a.state === 'live' || t.a.state === 'pending') && t.a.block !== undefined)
        live += t.a.byteLength;
    }
    const stats = allocator.stats;
    if (stats.liveBytes !== live) violations.push(`liveBytes ${stats.liveBytes}, expected ${live}`);
    if (stats.reservedBytes > stats.pool.budget) violations.push('reserved bytes above the budget');
    if (stats.dyingBytes < 0 || stats.liveBytes < 0) violations.push('negative counters');
    // Every block the pool holds is the allocator's: live, dying or quarantined, counted as asked for
    // by its current user (F6: a reused block is counted as its new user's).
    const held = stats.liveBytes + stats.dyingBytes + stats.quarantinedBytes;
    if (stats.pool.liveBytes !== held) violations.push(`pool.liveBytes ${stats.pool.liveBytes} != ${held}`);
    if (pool instanceof TlsfPool) pool.checkInvariants();
  };
  const dealloca = (queue: number, t: Tracked, gate: boolean): void => {
    let wait = Fence.join(waitFor(queue, -1), t.signal);
    if (gate) wait = wait.with(host, ++hostIssued);
    const signal = nextSignal(queue);
    t.frontier = wait;
    t.deallocated = true;
    allocator.dealloca(1 << queue, wait, signal, t.a); // a mask (affinity 0 is INVALID_ARGUMENT)
  };
  const step = (pick: number): void => {
    if (runnable.length === 0) return;
    const [signal] = runnable.splice(pick % runnable.length, 1);
    (signal as Fence).signal();
  };

  for (const op of ops) {
    switch (op.kind) {
      case 'alloca': {
        const wait = waitFor(op.queue, op.cross);
        const signal = nextSignal(op.queue);
        let a: Allocation<ArrayBuffer>;
        try {
          a = allocator.alloca(1 << op.queue, wait, signal, op.size, { alignment: 1 << op.alignLog2 });
        } catch (error) {
          if (!KeelError.is(error, 'RESOURCE_EXHAUSTED') || allocator.stats.quarantinedBlocks === 0)
            throw error;
          refused.push([op.size, 1 << op.alignLog2]);
          break;
        }
        const t: Tracked = { a, signal, deallocated: false, frontier: undefined };
        tracked.push(t);
        signal.onReached((error) => {
          if (error === undefined) enterUse(t);
        });
        break;
      }
      case 'kernel': {
        const wait = waitFor(op.queue, op.cross);
        const signal = nextSignal(op.queue);
        wait.onReached((error) => {
          if (error === undefined) runnable.push(signal);
          else signal.fail(new KeelError('ABORTED', 'kernel wait failed', { cause: error }));
        });
        break;
      }
      case 'dealloca': {
        const open = tracked.filter((t) => !t.deallocated);
        if (open.length === 0) break;
        dealloca(op.queue, open[op.pick % open.length] as Tracked, op.gate);
        break;
      }
      case 'step':
        step(op.pick);
        break;
      case 'host':
        if (host.value < hostIssued) host.signal(host.value + 1);
        break;
      case 'fail':
        injected = true;
        (queues[op.queue] as (typeof queues)[number]).sem.fail(new KeelError('INTERNAL', 'injected failure'));
        break;
    }
    checkStats();
  }
  // Release everything, then run everything that can run.
  for (const t of tracked) if (!t.deallocated) dealloca(tracked.indexOf(t) % QUEUES, t, false);
  for (;;) {
    if (runnable.length > 0) step(0);
    else if (host.value < hostIssued) host.signal(hostIssued);
    else break;
    checkStats();
  }
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
  const stats = allocator.stats;
  const stuck = stats.pendingAllocas > 0 || stats.queuedRequests > 0 || stats.dyingBytes > 0;
  for (const t of tracked) {
    if (KeelError.is(t.a.failure, 'RESOURCE_EXHAUSTED')) refused.push([t.a.byteLength, t.a.alignment]);
  }
  if (!stuck) {
    expect(stats.liveBytes).toBe(0);
    expect(stats.pool.liveBytes).toBe(stats.quarantinedBytes);
    // Everything but the quarantine is back: a refused request indeed cannot be reserved.
    for (const [byteLength, alignment] of refused) {
      const block = pool.reserve(byteLength, alignment);
      if (block) {
        violations.push(`refused ${byteLength} bytes (alignment ${alignment}) fit at ${block.offset}`);
        pool.release(block);
      }
    }
    expect(violations).toEqual([]);
    if (!injected) expect(stats.quarantinedBytes).toBe(0);
    for (const t of tracked) expect(['deallocated', 'failed']).toContain(t.a.state);
  } else {
    // A program that needs more memory at once than the budget allows deadlocks, as on any
    // queue-ordered allocator; destroy must end it without leaving anything pending.
    allocator.destroy();
    for (const t of tracked) expect(t.a.state).not.toBe('pending');
    expect(allocator.stats.pendingAllocas).toBe(0);
  }
  allocator.destroy();
  return { stuck };
}

describe('QueueAllocator properties (random programs over several queues)', () => {
  it(
    'TLSF, unlimited budget: no overlap, consistent statistics, every byte returns',
    () => {
      fc.assert(
        fc.property(fc.array(opArb(false), { maxLength: 150, size: 'large' }), (ops) => {
          const outcome = runProgram(new TlsfPool(new CountingProvider(), { slabSize: 16384 }), ops);
          expect(outcome.stuck).toBe(false);
        }),
        { numRuns: 150 },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'TLSF, tight budget (waits, rule d, queued requests): no overlap and nothing hangs',
    () => {
      let completed = 0;
      let runs = 0;
      fc.assert(
        fc.property(fc.array(opArb(false), { maxLength: 150, size: 'large' }), (ops) => {
          runs++;
          const outcome = runProgram(
            new TlsfPool(new CountingProvider(), { slabSize: 8192, budget: 16384 }),
            ops,
          );
          if (!outcome.stuck) completed++;
        }),
        { numRuns: 150 },
      );
      expect(completed).toBeGreaterThan(runs / 4);
    },
    TIMEOUT_MS,
  );

  it(
    'TLSF with injected queue failures: no overlap, no double free, quarantine accounts for the rest',
    () => {
      fc.assert(
        fc.property(fc.array(opArb(true), { maxLength: 150, size: 'large' }), fc.boolean(), (ops, tight) => {
          const outcome = runProgram(
            new TlsfPool(new CountingProvider(), { slabSize: 8192, budget: tight ? 16384 : undefined }),
            ops,
          );
          // Failures propagate; without a memory limit nothing may stay pending.
          if (!tight) expect(outcome.stuck).toBe(false);
        }),
        { numRuns: 150 },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'ring pool: no overlap and nothing hangs',
    () => {
      fc.assert(
        fc.property(fc.array(opArb(true), { maxLength: 150, size: 'large' }), (ops) => {
          runProgram(new RingPool(new CountingProvider(), { capacity: 32768 }), ops);
        }),
        { numRuns: 120 },
      );
    },
    TIMEOUT_MS,
  );
});
