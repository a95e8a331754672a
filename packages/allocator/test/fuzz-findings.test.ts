/**
 * Contract violations found by fuzzing the allocator (F1–F6; F4 was the device's), one describe per
 * finding: each test failed (hung, refused or miscounted) before its fix. F1: a TLSF reserve that
 * `canEverReserve` promised is found (aligned fits, ranges past the own-class probes). F2: a new
 * allocator over a kept pool refuses what the pool's quarantine leaves no room for. F3: a request whose
 * wait is not reached never takes memory (rule b, a, c or d) ahead of an earlier queued request, so a
 * program that fits the budget does not deadlock. F5: destroy lets the owner fail its pending work
 * first (PoolRegistry.destroy's `failPending`), so a queued alloca fails with destroy's reason. F6:
 * dying and quarantined bytes count the deallocated allocation as asked for, and the pool's live bytes
 * count what each block's current user asked for: `pool.liveBytes >= live + dying + quarantined`.
 */
import { Fence, type Fence as FenceType, KeelError, TimelineSemaphore } from '@keel/fence';
import { ErrorCode } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import {
  type Allocation,
  type Block,
  PassthroughPool,
  type Pool,
  PoolRegistry,
  QueueAllocator,
  RingPool,
  type SlabProvider,
  TlsfPool,
} from '../src/index';
import { CountingProvider, ResizableCountingProvider, thrown } from './helpers';

const Q0 = 1;
const at = (semaphore: TimelineSemaphore, value = 1): FenceType => Fence.of({ semaphore, value });
const fresh = (): FenceType => at(new TimelineSemaphore(0));
const lost = (): KeelError => new KeelError(ErrorCode.DATA_LOSS, 'kernel lost (test)');

/** Deallocates `a` behind a gate that fails: its block is quarantined. */
function quarantineOf(allocator: QueueAllocator<ArrayBuffer>, a: Allocation<ArrayBuffer>): void {
  const gate = new TimelineSemaphore(0);
  allocator.dealloca(Q0, at(gate), fresh(), a);
  gate.fail(lost());
}

/** The three pools over a budget (capacity) of `bytes`. */
function pools(bytes: number): [string, Pool<ArrayBuffer>][] {
  return [
    ['tlsf', new TlsfPool(new CountingProvider(), { slabSize: bytes, budget: bytes })],
    ['ring', new RingPool(new CountingProvider(), { capacity: bytes })],
    ['passthrough', new PassthroughPool(new CountingProvider(), { budget: bytes })],
  ];
}

describe('F1: TLSF reserves what canEverReserve promises', () => {
  for (const [name, provider] of [
    ['fixed slabs', () => new CountingProvider()],
    ['resizable slabs', () => new ResizableCountingProvider(1024)],
  ] as const) {
    it(`${name}: an aligned request fits at the start of a free range too short for size + alignment`, () => {
      const pool = new TlsfPool(provider() as SlabProvider<ArrayBuffer>, { slabSize: 1024, budget: 1024 });
      const a = pool.reserve(176) as Block<ArrayBuffer>; // [0, 176)
      const b = pool.reserve(16) as Block<ArrayBuffer>; // [176, 192)
      pool.release(a);
      pool.quarantine(b);
      expect(pool.canEverReserve(64, 1024)).toBe(true);
      expect(pool.reserve(64, 1024)?.offset).toBe(0);
      pool.checkInvariants();
    });
  }

  it('the allocator serves such a request instead of queueing it forever (the probe)', () => {
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 1024, budget: 1024 });
    const allocator = new QueueAllocator(pool);
    const a = allocator.alloca(Q0, Fence.empty, fresh(), 176);
    const b = allocator.alloca(Q0, Fence.empty, fresh(), 16);
    allocator.dealloca(Q0, Fence.empty, fresh(), a);
    quarantineOf(allocator, b);
    const signal = fresh();
    const c = allocator.alloca(Q0, Fence.empty, signal, 64, { alignment: 1024 });
    expect([c.state, c.block?.offset, allocator.stats.queuedRequests]).toEqual(['live', 0, 0]);
  });

  it('a range of its own class past the first probes is found when the pool cannot grow', () => {
    // Ten free ranges between quarantined 16-byte separators: one of 65 units (released first, so
    // last in its class's list) and nine of 64 units, which share its class but are too short.
    const unit = 16;
    const bytes = (65 + 1 + 9 * (64 + 1)) * unit;
    const pool = new TlsfPool(new CountingProvider(), { slabSize: bytes, budget: bytes });
    const ranges = [pool.reserve(65 * unit) as Block<ArrayBuffer>];
    const separators = [pool.reserve(unit) as Block<ArrayBuffer>];
    for (let i = 0; i < 9; i++) {
      ranges.push(pool.reserve(64 * unit) as Block<ArrayBuffer>);
      separators.push(pool.reserve(unit) as Block<ArrayBuffer>);
    }
    expect(pool.stats.reservedBytes).toBe(bytes);
    for (const r of ranges) pool.release(r);
    for (const s of separators) pool.quarantine(s);
    expect(pool.canEverReserve(65 * unit)).toBe(true);
    expect(pool.reserve(65 * unit)?.offset).toBe(0);
    pool.checkInvariants();
  });
});

describe("F2: a new allocator over a kept pool asks the pool's quarantine", () => {
  for (const [name, make] of [
    ['ring', () => new RingPool(new CountingProvider(), { capacity: 512 })],
    ['tlsf', () => new TlsfPool(new CountingProvider(), { slabSize: 512, budget: 512 })],
  ] as const) {
    it(`${name}: what the quarantine an earlier allocator left leaves no room for is refused at the call`, () => {
      const pool: Pool<ArrayBuffer> = make();
      const first = new QueueAllocator(pool, { destroyPool: false });
      quarantineOf(first, first.alloca(Q0, Fence.empty, fresh(), 256));
      first.destroy();
      const second = new QueueAllocator(pool, { label: 'second' });
      expect(thrown(() => second.alloca(Q0, Fence.empty, fresh(), 512))).toMatch(
        /^RESOURCE_EXHAUSTED: QueueAllocator 'second': alloca: 512 bytes can never be served by .*quarantined blocks an earlier user of the pool left/,
      );
      expect(second.stats.queuedRequests).toBe(0);
      expect(second.alloca(Q0, Fence.empty, fresh(), 256).state).toBe('live');
      second.destroy();
    });
  }
});

describe('F3: a request whose wait is not reached takes nothing ahead of an earlier queued request', () => {
  for (const [name, pool] of pools(256)) {
    it(`${name}: rule d does not give an earlier dealloca's block to a request behind a queued one (the probe)`, () => {
      const allocator = new QueueAllocator(pool);
      const gA = new TimelineSemaphore(0);
      const gD = new TimelineSemaphore(0);
      const sB = new TimelineSemaphore(0);
      const sC = new TimelineSemaphore(0);
      const a = allocator.alloca(Q0, at(gA), fresh(), 200);
      const b = allocator.alloca(Q0, Fence.empty, at(sB), 200); // queued: no room until `a` goes
      allocator.dealloca(Q0, at(gD), fresh(), a);
      allocator.dealloca(Q0, at(sB), fresh(), b); // `b` dies as soon as it is live
      const c = allocator.alloca(Q0, at(sB), at(sC), 160); // runs after `b`: it must not take `a`'s block
      expect(c.block).toBeUndefined();
      gA.signal(1);
      gD.signal(1);
      expect([sB.value, sC.value]).toEqual([1, 1]);
      expect(allocator.stats).toMatchObject({ queuedRequests: 0, pendingAllocas: 0, liveBytes: 160 });
      allocator.destroy();
    });
  }

  it('rule a: free memory at the call does not go to a request that waits for a queued one', () => {
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 256, budget: 256 });
    const allocator = new QueueAllocator(pool);
    const host = new TimelineSemaphore(0);
    const sQ = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, Fence.empty, fresh(), 100); // [0, 112)
    const x = allocator.alloca(Q0, Fence.empty, fresh(), 100); // [112, 224)
    const q = allocator.alloca(Q0, Fence.empty, at(sQ), 200); // queued: 32 bytes free
    allocator.dealloca(Q0, Fence.empty, fresh(), a); // 144 free (not one range): `q` still waits
    allocator.dealloca(Q0, at(sQ), fresh(), q);
    const c = allocator.alloca(Q0, at(sQ), fresh(), 100); // fits [0, 112), but runs after `q`
    expect([q.state, c.block]).toEqual(['deallocated', undefined]);
    allocator.dealloca(Q0, at(host), fresh(), x);
    host.signal(1);
    expect([sQ.value, c.state, allocator.stats.queuedRequests]).toEqual([1, 'live', 0]);
    allocator.destroy();
  });

  it('rule b: a dominated block does not go to a request that waits for a queued one either', () => {
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 256, budget: 256 });
    const allocator = new QueueAllocator(pool);
    const f = new TimelineSemaphore(0);
    const sQ = new TimelineSemaphore(0);
    const x = allocator.alloca(Q0, Fence.empty, fresh(), 200);
    const q = allocator.alloca(Q0, Fence.empty, at(sQ), 200); // queued
    allocator.dealloca(Q0, at(sQ), fresh(), q);
    allocator.dealloca(Q0, at(f), fresh(), x); // x's block dies at f@1
    // Its wait dominates x's frontier, and `q`'s signal: it runs after both.
    const c = allocator.alloca(Q0, Fence.join(at(f), at(sQ)), fresh(), 200);
    expect(c.source).toBeUndefined();
    f.signal(1); // x's block goes to `q`, which dies at once; then `c` gets it
    expect([sQ.value, c.state, c.source]).toEqual([1, 'live', 'waited']);
    allocator.destroy();
  });

  it('rule b still reuses at once while nothing is queued; a request whose wait is reached goes ahead', () => {
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 256, budget: 256 });
    const allocator = new QueueAllocator(pool);
    const q = new TimelineSemaphore(0);
    const x = allocator.alloca(Q0, Fence.empty, at(q, 1), 200);
    allocator.dealloca(Q0, at(q, 2), fresh(), x);
    const y = allocator.alloca(Q0, at(q, 2), at(q, 3), 200);
    expect(y.source).toBe('dominated');
    const waiting = allocator.alloca(Q0, Fence.empty, fresh(), 200); // no room: queued
    expect(waiting.block).toBeUndefined();
    // 48 bytes are free: a request whose wait is reached takes them at the call…
    const ready = allocator.alloca(Q0, Fence.empty, fresh(), 16);
    expect([ready.state, ready.source]).toEqual(['live', 'frontier-reached']);
    // …one whose wait is not reached queues behind `waiting`, and goes ahead once its wait is reached.
    const later = allocator.alloca(Q0, at(q, 5), fresh(), 16);
    expect(later.block).toBeUndefined();
    q.signal(5);
    expect([later.state, waiting.state]).toEqual(['live', 'pending']);
    allocator.destroy();
  });

  it('queued: behind a request not served, only those whose wait is reached are served', () => {
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 256, budget: 256 });
    const allocator = new QueueAllocator(pool);
    const host = new TimelineSemaphore(0);
    const s1 = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, Fence.empty, fresh(), 100); // [0, 112)
    const x = allocator.alloca(Q0, Fence.empty, fresh(), 100); // [112, 224)
    const q1 = allocator.alloca(Q0, Fence.empty, at(s1), 200); // queued
    const q2 = allocator.alloca(Q0, at(s1), fresh(), 100); // queued too (there is no room at all)
    allocator.dealloca(Q0, at(s1), fresh(), q1);
    allocator.dealloca(Q0, at(host, 1), fresh(), a);
    host.signal(1); // 144 bytes free: `q1` does not fit, `q2` would but waits for `q1`
    expect([q1.block, q2.block]).toEqual([undefined, undefined]);
    allocator.dealloca(Q0, at(host, 2), fresh(), x);
    host.signal(2);
    expect([s1.value, q2.state]).toEqual([1, 'live']);
    allocator.destroy();
  });

  it('a queued request whose wait is reached later overtakes one that waits for its memory', () => {
    // The README's case: a large request waits for memory that only frees after a smaller one runs.
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 1024, budget: 2048 });
    const allocator = new QueueAllocator(pool);
    const host = new TimelineSemaphore(0);
    const k = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, fresh(), 1024);
    const a2 = allocator.alloca(Q0, Fence.empty, fresh(), 1024);
    const big = allocator.alloca(Q0, Fence.empty, fresh(), 2048);
    const small = allocator.alloca(Q0, at(host), at(k, 1), 512); // behind `big`: queued
    allocator.dealloca(Q0, Fence.empty, fresh(), a1);
    expect([big.state, small.block]).toEqual(['pending', undefined]); // `small` waits for host@1
    host.signal(1);
    expect(small.state).toBe('live'); // its wait is reached: it goes ahead of `big`
    allocator.dealloca(Q0, at(k, 1), fresh(), small);
    allocator.dealloca(Q0, at(k, 2), fresh(), a2); // a2 is used with `small`
    k.signal(2);
    expect(big.state).toBe('live');
    allocator.destroy();
  });
});

describe('F5: destroy lets the owner fail its pending work first', () => {
  it('PoolRegistry.destroy: a queued alloca fails with the reason, not for a quarantine', () => {
    const registry = new PoolRegistry(new CountingProvider(), {
      poolLabel: 'test',
      deviceLabel: 'dev',
      backend: 'test',
      alignment: 16,
      slabSize: 4096,
      ringCapacity: 4096,
    });
    const allocator = registry.allocator('ring', 'queueAlloca');
    const kernel = new TimelineSemaphore(0); // the device's pending work using `a`
    const a = allocator.alloca(Q0, Fence.empty, fresh(), 4096);
    const queued = allocator.alloca(Q0, Fence.empty, fresh(), 4096);
    const deallocaSignal = fresh();
    allocator.dealloca(Q0, at(kernel), deallocaSignal, a);
    const reason = new KeelError(ErrorCode.UNAVAILABLE, 'device: the device was destroyed');
    let ran = false;
    registry.destroy(true, reason, () => {
      ran = true;
      kernel.fail(reason); // what the device's failPending does to the kernel's signal
    });
    expect(ran).toBe(true);
    expect(queued.failure).toBe(reason);
    expect(deallocaSignal.timepoints[0]?.semaphore.failure).toBe(reason);
  });

  it('QueueAllocator.destroy runs beforeFailing also when destroyed already', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()));
    allocator.destroy();
    let ran = 0;
    allocator.destroy(undefined, () => ran++);
    expect(ran).toBe(1);
  });
});

describe('F6: dying and quarantined bytes count the allocation as asked for', () => {
  it("a 16-byte allocation in a zero-byte allocation's block: dying 16, quarantined 16", () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider(), { slabSize: 1024 }));
    const g = new TimelineSemaphore(0);
    const h = new TimelineSemaphore(0);
    const z = allocator.alloca(Q0, Fence.empty, fresh(), 0);
    allocator.dealloca(Q0, at(g), fresh(), z);
    const x = allocator.alloca(Q0, at(g), fresh(), 16);
    expect(x.source).toBe('dominated');
    expect([allocator.stats.liveBytes, allocator.stats.pool.liveBytes]).toEqual([16, 16]);
    allocator.dealloca(Q0, at(h), fresh(), x);
    expect([allocator.stats.dyingBytes, allocator.stats.pool.liveBytes]).toEqual([16, 16]);
    g.signal(1);
    h.fail(lost());
    const s = allocator.stats;
    expect([s.dyingBytes, s.quarantinedBytes, s.quarantinedBlocks, s.pool.liveBytes]).toEqual([0, 16, 1, 16]);
  });

  it('a 60-byte allocation in a 100-byte dying block: dying 60, and the pool counts 60', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider(), { slabSize: 1024 }));
    const g = new TimelineSemaphore(0);
    const h = new TimelineSemaphore(0);
    const big = allocator.alloca(Q0, Fence.empty, fresh(), 100);
    allocator.dealloca(Q0, at(g), fresh(), big);
    expect(allocator.stats.dyingBytes).toBe(100);
    const small = allocator.alloca(Q0, at(g), fresh(), 60);
    expect(small.source).toBe('dominated');
    allocator.dealloca(Q0, at(h), fresh(), small);
    expect([allocator.stats.dyingBytes, allocator.stats.pool.liveBytes]).toEqual([60, 60]);
    g.signal(1);
    h.signal(1);
    expect([allocator.stats.dyingBytes, allocator.stats.pool.liveBytes]).toEqual([0, 0]);
  });

  it('a failed taker hands its block back to the pending dealloca: counted as that allocation again', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider(), { slabSize: 1024 }));
    const g = new TimelineSemaphore(0);
    const w = new TimelineSemaphore(0);
    const big = allocator.alloca(Q0, Fence.empty, fresh(), 100);
    allocator.dealloca(Q0, at(g), fresh(), big);
    const small = allocator.alloca(Q0, Fence.join(at(g), at(w)), fresh(), 60);
    expect([small.source, allocator.stats.pool.liveBytes]).toEqual(['dominated', 60]);
    w.fail(lost()); // its own wait fails: the block goes back to big's dealloca
    expect([allocator.stats.dyingBytes, allocator.stats.pool.liveBytes]).toEqual([100, 100]);
    g.fail(lost());
    expect([allocator.stats.quarantinedBytes, allocator.stats.pool.liveBytes]).toEqual([100, 100]);
  });
});
