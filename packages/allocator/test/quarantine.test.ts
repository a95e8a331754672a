/**
 * Quarantined blocks (a dealloca whose wait failed) never hang later requests:
 *
 * - in the ring pool a quarantined block is a hole the ring allocates around, not a wall: the tail
 *   reclaims past it and later blocks are placed beside it (the probe: one 2048-byte block quarantined
 *   in an 8192-byte ring, then one 2048-byte alloca live at a time, wrapping the ring many times);
 * - a request that the quarantined blocks leave no room for, even once every other block is released,
 *   is RESOURCE_EXHAUSTED (thrown by alloca; a queued one fails its signal when a quarantine makes it
 *   impossible) instead of waiting forever — ring, TLSF (budget-limited) and passthrough pools;
 * - the quarantine keeps its purpose: no later block overlaps a quarantined one, and it stays reserved.
 */
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import {
  type Allocation,
  type Block,
  PassthroughPool,
  type Pool,
  QueueAllocator,
  RingPool,
  TlsfPool,
} from '../src/index';
import { CountingProvider, findOverlap, ResizableCountingProvider, thrown } from './helpers';

const Q0 = 1;
const at = (semaphore: TimelineSemaphore, value: number): Fence => Fence.of({ semaphore, value });
const failure = (): KeelError => new KeelError(ErrorCode.DATA_LOSS, 'gate failed (test)');

/** Allocates `byteLength` bytes (live at once) and deallocates them behind a gate that fails. */
function quarantine(allocator: QueueAllocator<ArrayBuffer>, byteLength: number): Block<ArrayBuffer> {
  const a = allocator.alloca(Q0, Fence.empty, Fence.empty, byteLength, { label: 'quarantined' });
  expect(a.state).toBe('live');
  const block = a.block as Block<ArrayBuffer>;
  const gate = new TimelineSemaphore(0);
  const done = new TimelineSemaphore(0);
  allocator.dealloca(Q0, at(gate, 1), at(done, 1), a);
  gate.fail(failure());
  expect(done.failure?.code).toBe(ErrorCode.ABORTED);
  return block;
}

/**
 * `count` allocas of `byteLength` bytes, strictly one live at a time (each waits for the previous
 * dealloca's signal); returns their blocks. Synchronous: each must go live at once.
 */
function sequential(
  allocator: QueueAllocator<ArrayBuffer>,
  count: number,
  byteLength: number,
): Block<ArrayBuffer>[] {
  const blocks: Block<ArrayBuffer>[] = [];
  let previous = Fence.empty;
  for (let i = 0; i < count; i++) {
    const live = new TimelineSemaphore(0);
    const b = allocator.alloca(Q0, previous, at(live, 1), byteLength, { label: `#${i}` });
    expect({ i, state: b.state, queued: allocator.stats.queuedRequests }).toEqual({
      i,
      state: 'live',
      queued: 0,
    });
    blocks.push(b.block as Block<ArrayBuffer>);
    const freed = new TimelineSemaphore(0);
    allocator.dealloca(Q0, at(live, 1), at(freed, 1), b);
    expect(freed.value).toBe(1);
    previous = at(freed, 1);
  }
  return blocks;
}

function ringAllocator(capacity: number) {
  const provider = new CountingProvider();
  const pool = new RingPool(provider, { label: 'ring', capacity });
  return { provider, pool, allocator: new QueueAllocator(pool, { label: 'q' }) };
}

describe('ring pool: a quarantined block is a hole, not a wall', () => {
  it('the probe: 2048 of 8192 bytes quarantined, then one 2048-byte alloca at a time keeps going', () => {
    const { allocator, pool } = ringAllocator(8192);
    const held = quarantine(allocator, 2048);
    expect(allocator.stats.quarantinedBytes).toBe(2048);
    const blocks = sequential(allocator, 40, 2048);
    // The quarantine keeps its purpose: no later block overlaps the quarantined one.
    for (const b of blocks) expect(findOverlap([held, b])).toBeUndefined();
    expect(pool.stats.liveBytes).toBe(2048); // the quarantined block stays reserved
    expect(pool.stats.growths).toBe(1);
  });

  it('the default device ring (64 MiB, 1 MiB allocas) runs past the 63rd alloca', () => {
    const { allocator } = ringAllocator(64 << 20);
    quarantine(allocator, 1 << 20);
    expect(sequential(allocator, 200, 1 << 20)).toHaveLength(200);
  });

  it('a hole in the middle of the ring: blocks are placed around it, wrapping as before', () => {
    const { allocator } = ringAllocator(8192);
    const first = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    const held = quarantine(allocator, 2048); // [2048, 4096)
    allocator.dealloca(Q0, Fence.empty, Fence.empty, first);
    const live: Allocation<ArrayBuffer>[] = [];
    // Three blocks of 2048 fit beside the hole, a fourth never can.
    for (let i = 0; i < 3; i++) live.push(allocator.alloca(Q0, Fence.empty, Fence.empty, 2048));
    expect(live.map((a) => a.state)).toEqual(['live', 'live', 'live']);
    expect(findOverlap([held, ...live.map((a) => a.block as Block<ArrayBuffer>)])).toBeUndefined();
    // Unequal sizes in FIFO order across many wraps never touch the hole.
    for (const a of live) allocator.dealloca(Q0, Fence.empty, Fence.empty, a);
    for (let i = 0; i < 200; i++) {
      const a = allocator.alloca(Q0, Fence.empty, Fence.empty, 16 + ((i * 389) % 2000));
      expect(a.state).toBe('live');
      expect(findOverlap([held, a.block as Block<ArrayBuffer>])).toBeUndefined();
      allocator.dealloca(Q0, Fence.empty, Fence.empty, a);
    }
  });

  it('a request no gap beside the holes can hold is RESOURCE_EXHAUSTED at the call, nothing enqueued', () => {
    const { allocator } = ringAllocator(8192);
    quarantine(allocator, 2048);
    const before = allocator.stats;
    expect(thrown(() => allocator.alloca(Q0, Fence.empty, Fence.empty, 6145, { label: 'big' }))).toBe(
      "RESOURCE_EXHAUSTED: QueueAllocator 'q': alloca 'big': 6145 bytes can never be served by ring pool 'ring' (8192 bytes at most): 2048 bytes of quarantined blocks (1; their dealloca's wait failed, so they are never handed out again) leave no room for it even once every other block is released, and no pending dealloca frees a block that fits",
    );
    expect(allocator.stats.queuedRequests).toBe(before.queuedRequests);
    expect(allocator.stats.pendingAllocas).toBe(0);
    // What fits beside the hole is still served.
    expect(allocator.alloca(Q0, Fence.empty, Fence.empty, 6144).state).toBe('live');
  });

  it('a queued request a later quarantine leaves no room for fails its signal (RESOURCE_EXHAUSTED)', () => {
    const { allocator } = ringAllocator(4096);
    const first = allocator.alloca(Q0, Fence.empty, Fence.empty, 3072);
    const signal = new TimelineSemaphore(0);
    const queued = allocator.alloca(Q0, Fence.empty, at(signal, 1), 3072, { label: 'late' });
    expect(allocator.stats.queuedRequests).toBe(1);
    const gate = new TimelineSemaphore(0);
    allocator.dealloca(Q0, at(gate, 1), Fence.empty, first);
    gate.fail(failure()); // first is quarantined: 1024 bytes are left, never 3072
    expect(queued.state).toBe('failed');
    expect(signal.failure?.code).toBe(ErrorCode.RESOURCE_EXHAUSTED);
    expect(signal.failure?.message).toMatch(
      /^QueueAllocator 'q': alloca 'late': 3072 bytes can never be served by ring pool 'ring' .*3072 bytes of quarantined blocks \(1;/,
    );
    expect(allocator.stats.queuedRequests).toBe(0);
    expect(allocator.stats.pendingAllocas).toBe(0);
    expect(allocator.alloca(Q0, Fence.empty, Fence.empty, 1024).block?.offset).toBe(3072);
  });

  it('a queued request the quarantine makes room for is served at once (the ring reclaims past it)', () => {
    const { allocator } = ringAllocator(4096);
    const a = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    const b = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    allocator.dealloca(Q0, Fence.empty, Fence.empty, b); // released out of order: held back by a
    const waiting = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    expect(waiting.state).toBe('pending');
    const gate = new TimelineSemaphore(0);
    allocator.dealloca(Q0, at(gate, 1), Fence.empty, a);
    gate.fail(failure());
    expect(waiting.state).toBe('live');
    expect(waiting.block?.offset).toBe(2048);
  });
});

describe('RingPool.quarantine and canEverReserve', () => {
  it('reclaims past the hole, places around it, keeps the slab, refuses a second release', () => {
    const provider = new CountingProvider();
    const pool = new RingPool(provider, { label: 'r', capacity: 1024 });
    const a = pool.reserve(256) as Block<ArrayBuffer>;
    const b = pool.reserve(256) as Block<ArrayBuffer>;
    pool.release(b);
    expect(pool.pendingReclaimBytes).toBe(256);
    pool.quarantine(a);
    expect(pool.pendingReclaimBytes).toBe(0); // reclaimed past the hole
    expect(pool.stats.liveBytes).toBe(256); // the hole stays reserved
    expect(pool.canEverReserve(768)).toBe(true);
    expect(pool.canEverReserve(769)).toBe(false);
    expect(pool.canEverReserve(512, 512)).toBe(true); // [512, 1024)
    expect(pool.canEverReserve(768, 512)).toBe(false);
    const c = pool.reserve(768) as Block<ArrayBuffer>;
    expect(c.offset).toBe(256);
    pool.release(c);
    pool.trim();
    expect(provider.destroyed).toBe(0); // the quarantined block may still be in use
    expect(thrown(() => pool.release(a))).toBe(
      "FAILED_PRECONDITION: RingPool 'r': release: block at offset 0 of slab " +
        `${a.slab.id} is quarantined (reserved for good: its memory is never handed out again)`,
    );
    expect(thrown(() => pool.quarantine(c))).toMatch(
      /^FAILED_PRECONDITION: RingPool 'r': quarantine: .* was already released$/,
    );
    pool.destroy();
    expect(provider.destroyed).toBe(1);
  });
});

describe('TLSF and passthrough pools: a request only quarantined space could hold is refused', () => {
  it('TLSF with a budget whose space is all quarantined: alloca throws RESOURCE_EXHAUSTED', () => {
    const pool = new TlsfPool(new CountingProvider(), { label: 't', slabSize: 4096, budget: 4096 });
    const allocator = new QueueAllocator(pool, { label: 'q' });
    quarantine(allocator, 4096);
    expect(thrown(() => allocator.alloca(Q0, Fence.empty, Fence.empty, 16, { label: 'small' }))).toMatch(
      /^RESOURCE_EXHAUSTED: QueueAllocator 'q': alloca 'small': 16 bytes can never be served by tlsf pool 't' \(4096 bytes at most\): 4096 bytes of quarantined blocks \(1;/,
    );
    expect(allocator.stats.queuedRequests).toBe(0);
    pool.checkInvariants();
  });

  it('TLSF: a gap beside a quarantined block still serves; what fits nowhere is refused', () => {
    const pool = new TlsfPool(new CountingProvider(), { label: 't', slabSize: 8192, budget: 8192 });
    const allocator = new QueueAllocator(pool, { label: 'q' });
    const first = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    const held = quarantine(allocator, 2048); // [2048, 4096)
    allocator.dealloca(Q0, Fence.empty, Fence.empty, first);
    expect(thrown(() => allocator.alloca(Q0, Fence.empty, Fence.empty, 4097))).toMatch(
      /^RESOURCE_EXHAUSTED: /,
    );
    const big = allocator.alloca(Q0, Fence.empty, Fence.empty, 4096);
    const small = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    expect([big.state, small.state]).toEqual(['live', 'live']);
    expect(
      findOverlap([held, big.block as Block<ArrayBuffer>, small.block as Block<ArrayBuffer>]),
    ).toBeUndefined();
    // Everything else is in use now: a further request waits (it could be served once they go).
    const waiting = allocator.alloca(Q0, Fence.empty, Fence.empty, 4096);
    expect(waiting.state).toBe('pending');
    allocator.dealloca(Q0, Fence.empty, Fence.empty, big);
    expect(waiting.state).toBe('live');
    pool.checkInvariants();
  });

  it('TLSF: a queued request a later quarantine leaves no room for fails its signal', () => {
    const pool = new TlsfPool(new CountingProvider(), { label: 't', slabSize: 4096, budget: 4096 });
    const allocator = new QueueAllocator(pool, { label: 'q' });
    const first = allocator.alloca(Q0, Fence.empty, Fence.empty, 4096);
    const signal = new TimelineSemaphore(0);
    const queued = allocator.alloca(Q0, Fence.empty, at(signal, 1), 1024);
    expect(queued.state).toBe('pending');
    const gate = new TimelineSemaphore(0);
    allocator.dealloca(Q0, at(gate, 1), Fence.empty, first);
    gate.fail(failure());
    expect(queued.state).toBe('failed');
    expect(signal.failure?.code).toBe(ErrorCode.RESOURCE_EXHAUSTED);
    expect(allocator.stats.pendingAllocas).toBe(0);
  });

  it('TLSF with a resizable provider: the growable slab beside a quarantined block can still grow', () => {
    const pool = new TlsfPool(new ResizableCountingProvider(1 << 20), {
      label: 't',
      budget: 128 << 10,
      smallThreshold: 0,
    });
    const held = pool.reserve(1024) as Block<ArrayBuffer>;
    const other = pool.reserve(60 << 10) as Block<ArrayBuffer>;
    pool.quarantine(held);
    // Once `other` goes, the slab's tail [1024, 64 KiB) grows in place by the 64 KiB the budget leaves.
    expect(pool.canEverReserve(120 << 10)).toBe(true);
    expect(pool.canEverReserve((127 << 10) + 16)).toBe(false);
    pool.release(other);
    expect(pool.reserve(120 << 10)?.offset).toBe(1024);
    pool.checkInvariants();
  });

  it('TLSF: an empty slab given back to make room lets the growable slab grow in place', () => {
    const pool = new TlsfPool(new ResizableCountingProvider(1 << 20), {
      label: 't',
      budget: 224 << 10,
      smallThreshold: 64 << 10,
    });
    const held = pool.reserve(64 << 10) as Block<ArrayBuffer>; // large heap: a growable slab [0, 64K)
    const next = pool.reserve(64 << 10) as Block<ArrayBuffer>; // it grows in place to 128K
    const small = pool.reserve(32 << 10) as Block<ArrayBuffer>; // small heap: a 64K slab of its own
    expect([next.slab, small.slab === held.slab]).toEqual([held.slab, false]);
    pool.quarantine(held);
    pool.release(next);
    pool.release(small); // an empty slab, still held: 32K of budget left
    // 100K: not in the 64K gap, not in a new slab (96K of budget once the small slab goes), but in the
    // gap grown in place by those 96K.
    expect(pool.canEverReserve(100 << 10)).toBe(true);
    expect(pool.canEverReserve(161 << 10)).toBe(false);
    const big = pool.reserve(100 << 10) as Block<ArrayBuffer>;
    expect([big.slab, big.offset]).toEqual([held.slab, 64 << 10]);
    pool.checkInvariants();
  });

  it('passthrough with a budget: quarantined slabs count against it', () => {
    const pool = new PassthroughPool(new CountingProvider(), { label: 'p', budget: 4096 });
    const allocator = new QueueAllocator(pool, { label: 'q' });
    quarantine(allocator, 3072);
    expect(thrown(() => allocator.alloca(Q0, Fence.empty, Fence.empty, 1025))).toMatch(
      /^RESOURCE_EXHAUSTED: QueueAllocator 'q': alloca: 1025 bytes can never be served by passthrough pool 'p'/,
    );
    const fits = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    expect(fits.state).toBe('live');
    const waiting = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    expect(waiting.state).toBe('pending');
    allocator.dealloca(Q0, Fence.empty, Fence.empty, fits);
    expect(waiting.state).toBe('live');
  });

  it('an unlimited pool never refuses for quarantine', () => {
    for (const pool of [
      new TlsfPool(new CountingProvider(), { slabSize: 4096 }),
      new PassthroughPool(new CountingProvider()),
    ] as Pool<ArrayBuffer>[]) {
      const allocator = new QueueAllocator(pool);
      quarantine(allocator, 4096);
      expect(allocator.alloca(Q0, Fence.empty, Fence.empty, 8192).state).toBe('live');
      expect(pool.canEverReserve?.(1 << 30)).toBe(true);
    }
  });
});
