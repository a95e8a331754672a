import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import {
  type Allocation,
  type Block,
  fenceDominates,
  PassthroughPool,
  QueueAllocator,
  RingPool,
  TlsfPool,
} from '../src/index';
import { CountingProvider, codeOf } from './helpers';

const Q0 = 1;
const Q1 = 2;

function at(semaphore: TimelineSemaphore, value: number): Fence {
  return Fence.of({ semaphore, value });
}

function tlsf(options: ConstructorParameters<typeof TlsfPool<ArrayBuffer>>[1] = {}) {
  const provider = new CountingProvider();
  const pool = new TlsfPool(provider, { slabSize: 1 << 16, ...options });
  return { provider, pool, allocator: new QueueAllocator(pool) };
}

function sameMemory(a: Allocation<ArrayBuffer>, b: Allocation<ArrayBuffer>): boolean {
  return (
    a.block !== undefined &&
    b.block !== undefined &&
    a.block.slab === b.block.slab &&
    a.block.offset === b.block.offset
  );
}

function failure(message = 'kernel failed'): KeelError {
  return new KeelError('INTERNAL', message);
}

describe('QueueAllocator: alloca', () => {
  it('allocates at once with an empty wait and signals its fence', () => {
    const { allocator } = tlsf();
    const done = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, Fence.empty, at(done, 1), 1000);
    expect(a.state).toBe('live');
    expect(a.block?.byteLength).toBe(1000);
    expect(a.source).toBe('grown');
    expect(a.affinity).toBe(Q0);
    expect(done.value).toBe(1);
    const stats = allocator.stats;
    expect(stats.liveBytes).toBe(1000);
    expect(stats.allocas).toBe(1);
    expect(stats.growths).toBe(1);
    expect(stats.queues.get(Q0)?.liveBytes).toBe(1000);
  });

  it('assigns the block at the call but goes live only once its wait is reached', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, at(q, 1), at(q, 2), 64, { alignment: 256, label: 'x' });
    expect(a.state).toBe('pending');
    expect(a.block).toBeDefined();
    expect((a.block as Block<ArrayBuffer>).offset % 256).toBe(0);
    expect(q.value).toBe(0);
    expect(allocator.stats.pendingAllocas).toBe(1);
    q.signal(1);
    expect(a.state).toBe('live');
    expect(q.value).toBe(2);
    expect(allocator.stats.pendingAllocas).toBe(0);
  });

  it('accepts zero bytes', () => {
    const { allocator } = tlsf();
    const s = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, Fence.empty, at(s, 1), 0);
    const b = allocator.alloca(Q0, Fence.empty, at(s, 2), 0);
    expect(a.state).toBe('live');
    expect(a.byteLength).toBe(0);
    expect(a.block?.offset).not.toBe(b.block?.offset);
    allocator.dealloca(Q0, Fence.empty, Fence.empty, a);
    allocator.dealloca(Q0, Fence.empty, Fence.empty, b);
    expect(allocator.pool.stats.liveBlocks).toBe(0);
  });

  it('rejects bad arguments synchronously, enqueuing and signalling nothing', () => {
    const { allocator } = tlsf({ budget: 1 << 16 });
    const s = new TimelineSemaphore(0);
    expect(codeOf(() => allocator.alloca(Q0, Fence.empty, at(s, 1), -1))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => allocator.alloca(Q0, Fence.empty, at(s, 1), 8, { alignment: 6 }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(() => allocator.alloca(1.5, Fence.empty, at(s, 1), 8))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => allocator.alloca(Q0, {} as Fence, at(s, 1), 8))).toBe('INVALID_ARGUMENT');
    expect(s.value).toBe(0);
    expect(allocator.stats.allocas).toBe(0);
  });

  it('fails only a request larger than the whole budget: RESOURCE_EXHAUSTED, thrown at once', () => {
    const { allocator } = tlsf({ slabSize: 1024, budget: 2048 });
    const s = new TimelineSemaphore(0);
    const err = (() => {
      try {
        allocator.alloca(Q0, Fence.empty, at(s, 1), 2049, { label: 'huge' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(KeelError.is(err, 'RESOURCE_EXHAUSTED')).toBe(true);
    expect((err as KeelError).message).toMatch(/2049 bytes exceed/);
    expect(s.value).toBe(0);
    expect(s.failure).toBeUndefined();
    // Exactly the budget is fine.
    const a = allocator.alloca(Q0, Fence.empty, at(s, 1), 2048);
    expect(a.state).toBe('live');
  });
});

describe('QueueAllocator: reuse rules', () => {
  it('rule b: a chained alloca → dealloca → alloca on one queue reuses the block without waiting', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    // q@1 alloca a1, q@2 kernel, q@3 dealloca a1, q@4 alloca a2: all issued before anything ran.
    const a1 = allocator.alloca(Q0, at(q, 0), at(q, 1), 4096);
    // The kernel (q@1 → q@2) has not run: the frontier q@2 is pending.
    allocator.dealloca(Q0, at(q, 2), at(q, 3), a1);
    expect(a1.state).toBe('deallocated');
    const a2 = allocator.alloca(Q0, at(q, 3), at(q, 4), 4000);
    expect(sameMemory(a2, a1)).toBe(true);
    expect(a2.source).toBe('dominated');
    expect(a2.state).toBe('pending');
    let stats = allocator.stats;
    expect(stats.reuseDominated).toBe(1);
    expect(stats.waits).toBe(0);
    expect(stats.growths).toBe(1);
    expect(stats.dyingBytes).toBe(0);
    q.signal(2); // the kernel finishes: dealloca signals q@3, a2 goes live and signals q@4
    expect(q.value).toBe(4);
    expect(a2.state).toBe('live');
    stats = allocator.stats;
    expect(stats.pool.liveBlocks).toBe(1);
    expect(stats.pool.releases).toBe(0);
    expect(stats.liveBytes).toBe(4000);
  });

  it('does not reuse under rule b when the wait does not dominate the frontier', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, at(q, 1), 4096);
    allocator.dealloca(Q0, at(q, 5), at(q, 6), a1);
    const a2 = allocator.alloca(Q0, at(q, 4), Fence.empty, 4096); // 4 < 5: might run before the frontier
    expect(sameMemory(a2, a1)).toBe(false);
    expect(a2.source).toBe('frontier-reached');
  });

  it('rule a: memory returns to the pool when the frontier is reached', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, Fence.empty, 4096);
    allocator.dealloca(Q0, at(q, 1), at(q, 2), a1);
    expect(allocator.stats.dyingBytes).toBe(4096);
    q.signal(1);
    expect(q.value).toBe(2);
    expect(allocator.stats.dyingBytes).toBe(0);
    expect(allocator.pool.stats.liveBytes).toBe(0);
    const other = new TimelineSemaphore(0);
    const a2 = allocator.alloca(Q1, at(other, 0), Fence.empty, 4096);
    expect(a2.block?.offset).toBe(a1.block?.offset);
    expect(a2.source).toBe('frontier-reached');
    expect(allocator.stats.reuseFrontierReached).toBe(1);
  });

  it('cross-queue reuse waits for the death frontier (rule d) when the pool cannot grow', () => {
    const { allocator } = tlsf({ slabSize: 4096, budget: 4096 });
    const qa = new TimelineSemaphore(0);
    const qb = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, at(qa, 1), 4096);
    allocator.dealloca(Q0, at(qa, 2), at(qa, 3), a1);
    const a2 = allocator.alloca(Q1, at(qb, 0), at(qb, 1), 4096);
    expect(sameMemory(a2, a1)).toBe(true);
    expect(a2.source).toBe('waited');
    expect(a2.state).toBe('pending');
    expect(qb.value).toBe(0);
    expect(allocator.stats.waits).toBe(1);
    qa.signal(2);
    expect(a2.state).toBe('live');
    expect(qb.value).toBe(1);
    expect(qa.value).toBe(3);
  });

  it('cross-queue requests grow the pool rather than wait when the budget allows', () => {
    const { allocator } = tlsf({ slabSize: 4096 });
    const qa = new TimelineSemaphore(0);
    const qb = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, at(qa, 1), 4096);
    allocator.dealloca(Q0, at(qa, 2), at(qa, 3), a1);
    const a2 = allocator.alloca(Q1, at(qb, 0), at(qb, 1), 4096);
    expect(sameMemory(a2, a1)).toBe(false);
    expect(a2.source).toBe('grown');
    expect(a2.state).toBe('live');
  });

  it('a wait of several timepoints dominates a frontier of several', () => {
    const a = new TimelineSemaphore(0);
    const b = new TimelineSemaphore(0);
    const c = new TimelineSemaphore(0);
    const frontier = Fence.of({ semaphore: a, value: 3 }, { semaphore: b, value: 2 });
    expect(fenceDominates(Fence.of({ semaphore: b, value: 2 }, { semaphore: a, value: 4 }), frontier)).toBe(
      true,
    );
    expect(fenceDominates(Fence.of({ semaphore: a, value: 4 }), frontier)).toBe(false);
    expect(fenceDominates(Fence.of({ semaphore: a, value: 2 }, { semaphore: b, value: 9 }), frontier)).toBe(
      false,
    );
    expect(fenceDominates(Fence.of({ semaphore: c, value: 1 }), Fence.empty)).toBe(true);

    const { allocator } = tlsf();
    const x = allocator.alloca(Q0, Fence.empty, Fence.empty, 128);
    allocator.dealloca(Q0, frontier, Fence.empty, x);
    const y = allocator.alloca(
      Q1,
      Fence.of({ semaphore: a, value: 3 }, { semaphore: b, value: 5 }),
      Fence.empty,
      100,
    );
    expect(sameMemory(y, x)).toBe(true);
    expect(y.source).toBe('dominated');
  });

  it('leaves a much larger dying block alone (reuse slack)', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const big = allocator.alloca(Q0, Fence.empty, Fence.empty, 16384);
    allocator.dealloca(Q0, at(q, 1), Fence.empty, big);
    const small = allocator.alloca(Q0, at(q, 1), Fence.empty, 100);
    expect(sameMemory(small, big)).toBe(false);
    const half = allocator.alloca(Q0, at(q, 1), Fence.empty, 8192);
    expect(sameMemory(half, big)).toBe(true);
  });

  it('runs 10 000 alloca/dealloca cycles on one queue without growing (rule b chain)', () => {
    const { allocator, provider } = tlsf({ slabSize: 1 << 20 });
    const q = new TimelineSemaphore(0);
    const cycles = 10_000;
    const blocks = new Set<string>();
    // Cycle i: alloca (q@3i → q@3i+1), kernel (q@3i+1 → q@3i+2), dealloca (q@3i+2 → q@3i+3).
    for (let i = 0; i < cycles; i++) {
      const a = allocator.alloca(Q0, at(q, 3 * i), at(q, 3 * i + 1), 256 * 1024);
      expect(a.state).toBe('live');
      q.onReached(3 * i + 1, () => q.signal(3 * i + 2)); // the kernel
      allocator.dealloca(Q0, at(q, 3 * i + 2), at(q, 3 * i + 3), a);
      blocks.add(`${a.block?.slab.id}:${a.block?.offset}`);
    }
    expect(q.value).toBe(3 * cycles);
    const stats = allocator.stats;
    expect(stats.growths).toBe(1);
    expect(provider.created).toBe(1);
    expect(blocks.size).toBe(1);
    expect(stats.reuseDominated + stats.reuseFrontierReached).toBe(cycles - 1);
    expect(stats.waits).toBe(0);
    expect(stats.liveBytes).toBe(0);
    expect(stats.pool.liveBytes).toBe(0);
    expect(stats.peakReservedBytes).toBe(1 << 20);
  }, 20_000);

  it('runs 10 000 cycles issued ahead of execution, all reusing one block by rule b', () => {
    const { allocator } = tlsf({ slabSize: 1 << 20 });
    const q = new TimelineSemaphore(0);
    const gate = new TimelineSemaphore(0);
    const cycles = 10_000;
    for (let i = 0; i < cycles; i++) {
      const wait = i === 0 ? at(gate, 1) : at(q, 3 * i);
      const a = allocator.alloca(Q0, wait, at(q, 3 * i + 1), 1000 - (i % 3) * 16);
      q.onReached(3 * i + 1, () => q.signal(3 * i + 2));
      allocator.dealloca(Q0, at(q, 3 * i + 2), at(q, 3 * i + 3), a);
    }
    let stats = allocator.stats;
    expect(stats.reuseDominated).toBe(cycles - 1);
    expect(stats.growths).toBe(1);
    expect(stats.pool.liveBlocks).toBe(1);
    gate.signal(1); // everything runs
    expect(q.value).toBe(3 * cycles);
    stats = allocator.stats;
    expect(stats.pool.liveBytes).toBe(0);
    expect(stats.dyingBytes).toBe(0);
    expect(stats.pendingAllocas).toBe(0);
  }, 20_000);
});

describe('QueueAllocator: exhaustion', () => {
  it('a request that nothing can serve waits and proceeds when a dealloca retires', () => {
    const { allocator } = tlsf({ slabSize: 1024, budget: 2048 });
    const host = new TimelineSemaphore(0);
    const done = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    const a2 = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    const a3 = allocator.alloca(Q1, Fence.empty, at(done, 1), 2048);
    expect(a3.state).toBe('pending');
    expect(a3.block).toBeUndefined();
    expect(allocator.stats.queuedRequests).toBe(1);
    expect(allocator.stats.waits).toBe(1);
    allocator.dealloca(Q0, at(host, 1), Fence.empty, a1);
    allocator.dealloca(Q0, at(host, 2), Fence.empty, a2);
    host.signal(1);
    expect(a3.state).toBe('pending'); // 1024 bytes free: not enough
    host.signal(2);
    expect(a3.state).toBe('live');
    expect(done.value).toBe(1);
    expect(a3.block?.byteLength).toBe(2048);
    expect(a3.source).toBe('waited');
    expect(allocator.stats.queuedRequests).toBe(0);
    expect(allocator.stats.reservedBytes).toBeLessThanOrEqual(2048);
  });

  it('serves queued requests that fit even when an older one does not', () => {
    const { allocator } = tlsf({ slabSize: 1024, budget: 2048 });
    const host = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    const a2 = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    const big = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    const small = allocator.alloca(Q0, Fence.empty, Fence.empty, 512);
    expect(big.block).toBeUndefined();
    expect(small.block).toBeUndefined();
    allocator.dealloca(Q0, at(host, 1), Fence.empty, a1);
    host.signal(1);
    expect(small.state).toBe('live');
    expect(big.state).toBe('pending');
    allocator.dealloca(Q0, Fence.empty, Fence.empty, small);
    allocator.dealloca(Q0, Fence.empty, Fence.empty, a2);
    expect(big.state).toBe('live');
  });

  it('signals each queued request once, also when one request waits on another served in the same pass', () => {
    const errors: unknown[] = [];
    const pool = new TlsfPool(new CountingProvider(), { slabSize: 2048, budget: 2048 });
    const allocator = new QueueAllocator(pool, { onError: (e) => errors.push(e) });
    const host = new TimelineSemaphore(0);
    const q = new TimelineSemaphore(0);
    const hog = allocator.alloca(Q0, Fence.empty, Fence.empty, 2048);
    const x = allocator.alloca(Q0, Fence.empty, at(q, 1), 1024);
    const y = allocator.alloca(Q0, at(q, 1), at(q, 2), 1024);
    expect(allocator.stats.queuedRequests).toBe(2);
    allocator.dealloca(Q0, at(host, 1), Fence.empty, hog);
    host.signal(1);
    expect(x.state).toBe('live');
    expect(y.state).toBe('live');
    expect(q.value).toBe(2);
    expect(errors).toEqual([]);
  });

  it('a queued request deallocated before it got memory releases it as soon as it gets it', () => {
    const { allocator } = tlsf({ slabSize: 1024, budget: 1024 });
    const host = new TimelineSemaphore(0);
    const q = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, Fence.empty, 1024);
    const a2 = allocator.alloca(Q0, Fence.empty, at(q, 1), 1024);
    expect(a2.block).toBeUndefined();
    allocator.dealloca(Q0, at(q, 1), at(q, 2), a2);
    expect(a2.state).toBe('deallocated');
    allocator.dealloca(Q0, at(host, 1), Fence.empty, a1);
    host.signal(1); // a1 retires, a2 gets it, goes live (q@1), and its dealloca retires (q@2)
    expect(q.value).toBe(2);
    expect(allocator.stats.pool.liveBytes).toBe(0);
    expect(allocator.stats.liveBytes).toBe(0);
  });

  it('works over a ring pool and over a passthrough pool', () => {
    for (const pool of [
      new RingPool(new CountingProvider(), { capacity: 4096 }),
      new PassthroughPool(new CountingProvider(), { budget: 4096 }),
    ]) {
      const allocator = new QueueAllocator(pool);
      const q = new TimelineSemaphore(0);
      const live: Allocation<ArrayBuffer>[] = [];
      for (let i = 0; i < 100; i++) {
        const a = allocator.alloca(Q0, at(q, 2 * i), at(q, 2 * i + 1), 1000);
        live.push(a);
        if (live.length === 3) {
          allocator.dealloca(Q0, at(q, 2 * i + 1), at(q, 2 * i + 2), live.shift() as Allocation<ArrayBuffer>);
        } else {
          q.onReached(2 * i + 1, () => q.signal(2 * i + 2));
        }
      }
      expect(q.value).toBe(200);
      for (const a of live) allocator.dealloca(Q0, Fence.empty, Fence.empty, a);
      expect(pool.stats.liveBytes).toBe(0);
      expect(pool.stats.reservedBytes).toBeLessThanOrEqual(4096);
      allocator.destroy();
    }
  });
});

describe('QueueAllocator: failures', () => {
  it('a failed alloca wait fails its signal and gives the block back', () => {
    const { allocator } = tlsf();
    const s = new TimelineSemaphore(0);
    const out = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, at(s, 1), at(out, 1), 512);
    expect(a.block).toBeDefined();
    const cause = failure();
    s.fail(cause);
    expect(a.state).toBe('failed');
    expect(a.block).toBeUndefined();
    expect(KeelError.is(a.failure, 'ABORTED')).toBe(true);
    expect(KeelError.is(out.failure, 'ABORTED')).toBe(true);
    expect((out.failure as KeelError).cause).toBe(cause);
    expect(allocator.stats.pool.liveBytes).toBe(0);
    expect(allocator.stats.failures).toBe(1);
    // A dealloca of a failed allocation frees nothing but still signals after its wait.
    const d = new TimelineSemaphore(0);
    allocator.dealloca(Q0, Fence.empty, at(d, 1), a);
    expect(d.value).toBe(1);
    expect(codeOf(() => allocator.dealloca(Q0, Fence.empty, Fence.empty, a))).toBe('FAILED_PRECONDITION');
  });

  it('a failed dealloca wait fails its signal and frees nothing', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const d = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, Fence.empty, Fence.empty, 512);
    allocator.dealloca(Q0, at(q, 1), at(d, 1), a);
    q.fail(failure());
    expect(KeelError.is(d.failure, 'ABORTED')).toBe(true);
    const stats = allocator.stats;
    expect(stats.pool.liveBytes).toBe(512);
    expect(stats.pool.releases).toBe(0);
    expect(stats.quarantinedBlocks).toBe(1);
    expect(stats.quarantinedBytes).toBe(512);
    expect(stats.dyingBytes).toBe(0);
    // The block is never handed out again.
    const b = allocator.alloca(Q0, Fence.empty, Fence.empty, 512);
    expect(b.block?.offset).not.toBe(a.block?.offset);
  });

  it('an alloca that took a block by rule b fails with the failed frontier; the block stays out', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, at(q, 1), 512);
    const dealloca = new TimelineSemaphore(0);
    allocator.dealloca(Q0, at(q, 2), at(dealloca, 1), a1);
    const a2 = allocator.alloca(Q0, at(q, 3), at(q, 4), 512);
    expect(sameMemory(a2, a1)).toBe(true);
    q.fail(failure());
    expect(a2.state).toBe('failed');
    expect(dealloca.failure).toBeDefined();
    const stats = allocator.stats;
    expect(stats.quarantinedBlocks).toBe(1);
    expect(stats.pool.releases).toBe(0);
    expect(stats.pool.liveBlocks).toBe(1);
    expect(stats.liveBytes).toBe(0);
  });

  it('a rule-b taker whose own wait fails hands the block back to the pending dealloca', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const other = new TimelineSemaphore(0);
    const a1 = allocator.alloca(Q0, Fence.empty, Fence.empty, 512);
    allocator.dealloca(Q0, at(q, 1), Fence.empty, a1);
    const a2 = allocator.alloca(
      Q0,
      Fence.of({ semaphore: q, value: 1 }, { semaphore: other, value: 1 }),
      Fence.empty,
      512,
    );
    expect(sameMemory(a2, a1)).toBe(true);
    other.fail(failure());
    expect(a2.state).toBe('failed');
    expect(allocator.stats.pool.liveBlocks).toBe(1); // the old users may still run
    expect(allocator.stats.dyingBytes).toBe(512);
    q.signal(1);
    expect(allocator.stats.pool.liveBlocks).toBe(0);
    expect(allocator.stats.quarantinedBlocks).toBe(0);
  });

  it('an alloca that fails after its dealloca was issued still gives its block back', () => {
    const { allocator } = tlsf();
    const q = new TimelineSemaphore(0);
    const d = new TimelineSemaphore(0);
    const a = allocator.alloca(Q0, at(q, 1), at(q, 2), 512);
    allocator.dealloca(Q0, at(q, 3), at(d, 1), a);
    q.fail(failure());
    expect(a.state).toBe('failed');
    expect(d.failure).toBeDefined();
    expect(allocator.stats.pool.liveBytes).toBe(0);
    expect(allocator.stats.quarantinedBlocks).toBe(0);
  });

  it('use after dealloca is FAILED_PRECONDITION; foreign allocations are INVALID_ARGUMENT', () => {
    const { allocator } = tlsf();
    const { allocator: other } = tlsf();
    const a = allocator.alloca(Q0, Fence.empty, Fence.empty, 64);
    expect(codeOf(() => other.dealloca(Q0, Fence.empty, Fence.empty, a))).toBe('INVALID_ARGUMENT');
    allocator.dealloca(Q0, Fence.empty, Fence.empty, a);
    expect(a.state).toBe('deallocated');
    expect(codeOf(() => allocator.dealloca(Q0, Fence.empty, Fence.empty, a))).toBe('FAILED_PRECONDITION');
    expect(allocator.stats.pool.releases).toBe(1);
  });

  it('destroy fails pending allocas and deallocas with UNAVAILABLE and ends the allocator', () => {
    const { allocator, provider } = tlsf({ slabSize: 1024, budget: 1024 });
    const host = new TimelineSemaphore(0);
    const s = new TimelineSemaphore(0);
    const t = new TimelineSemaphore(0);
    const u = new TimelineSemaphore(0);
    const live = allocator.alloca(Q0, Fence.empty, Fence.empty, 512);
    const waiting = allocator.alloca(Q0, at(host, 1), at(s, 1), 256);
    const queued = allocator.alloca(Q0, Fence.empty, at(t, 1), 1024);
    expect(queued.block).toBeUndefined();
    allocator.dealloca(Q0, at(host, 1), at(u, 1), live);
    allocator.destroy();
    allocator.destroy();
    for (const sem of [s, t, u]) expect(KeelError.is(sem.failure, 'UNAVAILABLE')).toBe(true);
    expect(waiting.state).toBe('failed');
    expect(queued.state).toBe('failed');
    expect(KeelError.is(queued.failure, 'UNAVAILABLE')).toBe(true);
    expect(provider.live.size).toBe(0);
    expect(codeOf(() => allocator.alloca(Q0, Fence.empty, Fence.empty, 1))).toBe('FAILED_PRECONDITION');
    host.signal(1); // late callbacks do nothing
    expect(host.pendingWaitCount).toBe(0);
  });

  it('leaves a signal timepoint that something else already passed alone', () => {
    const errors: unknown[] = [];
    const pool = new TlsfPool(new CountingProvider());
    const allocator = new QueueAllocator(pool, { onError: (e) => errors.push(e) });
    const s = new TimelineSemaphore(5);
    const other = new TimelineSemaphore(0);
    const a = allocator.alloca(
      Q0,
      Fence.empty,
      Fence.of({ semaphore: s, value: 3 }, { semaphore: other, value: 1 }),
      64,
    );
    expect(a.state).toBe('live');
    expect(errors).toEqual([]);
    expect(s.value).toBe(5);
    expect(other.value).toBe(1);
    allocator.dealloca(Q0, Fence.empty, at(s, 4), a);
    expect(errors).toEqual([]);
    expect(pool.stats.liveBytes).toBe(0);
  });

  it('with the default onError, a passed signal timepoint throws nothing, not even from a microtask', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      uncaught.push(error);
    };
    process.prependListener('uncaughtException', onUncaught);
    try {
      const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()));
      const s = new TimelineSemaphore(5);
      const a = allocator.alloca(Q0, Fence.empty, at(s, 3), 64);
      allocator.dealloca(Q0, Fence.empty, at(s, 2), a);
      const host = new TimelineSemaphore(0);
      const b = allocator.alloca(Q0, at(host, 1), at(s, 4), 64);
      host.signal(1);
      expect(b.state).toBe('live');
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(uncaught).toEqual([]);
      expect(s.value).toBe(5);
      expect(s.failure).toBeUndefined();
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});

describe('options are validated at creation (issue 15)', () => {
  const provider = new CountingProvider();
  it.each([
    [
      'TlsfPool',
      () => new TlsfPool(provider, { slabsize: 4096 } as never),
      /TlsfPool: unknown option 'slabsize'/,
    ],
    [
      'TlsfPool',
      () => new TlsfPool(provider, { slabSize: '4096' } as never),
      /TlsfPool: option 'slabSize' must be an integer ≥ 1, got "4096"/,
    ],
    [
      'TlsfPool',
      () => new TlsfPool(provider, 'big' as never),
      /TlsfPool: options must be an object, got "big"/,
    ],
    [
      'RingPool',
      () => new RingPool(provider, { capacity: 1024, size: 5 } as never),
      /RingPool: unknown option 'size'/,
    ],
    [
      'RingPool',
      () => new RingPool(provider, { capacity: 1.5 }),
      /RingPool: option 'capacity' must be an integer ≥ 1, got 1.5/,
    ],
    [
      'PassthroughPool',
      () => new PassthroughPool(provider, { budget: '1' } as never),
      /PassthroughPool: option 'budget' must be a number ≥ 1 or Infinity, got "1"/,
    ],
    [
      'PassthroughPool',
      () => new PassthroughPool(provider, { labels: 'x' } as never),
      /unknown option 'labels'/,
    ],
    [
      'QueueAllocator',
      () => new QueueAllocator(new TlsfPool(provider), { onError: 'log' } as never),
      /QueueAllocator: option 'onError' must be a function, got "log"/,
    ],
    [
      'QueueAllocator',
      () => new QueueAllocator(new TlsfPool(provider), { slack: 2 } as never),
      /QueueAllocator: unknown option 'slack'/,
    ],
    [
      'QueueAllocator',
      () => new QueueAllocator(new TlsfPool(provider), { destroyPool: 1 } as never),
      /option 'destroyPool' must be a boolean, got 1/,
    ],
  ])('%s refuses bad options', (_name, make, message) => {
    let error: unknown;
    try {
      make();
    } catch (e) {
      error = e;
    }
    expect(KeelError.is(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(message);
  });

  it('accepts the documented options', () => {
    const pool = new TlsfPool(provider, {
      label: 'p',
      alignment: 16,
      budget: Number.POSITIVE_INFINITY,
      slabSize: 4096,
      smallSlabSize: 1024,
      smallThreshold: 0,
      dedicatedThreshold: 4096,
      growthGranule: 4096,
    });
    const allocator = new QueueAllocator(pool, {
      label: 'a',
      reuseSlack: 2,
      maxCandidates: 4,
      destroyPool: true,
      onError: () => {},
    });
    expect(allocator.label).toBe('a');
    allocator.destroy();
    new RingPool(provider, { label: 'r', capacity: 4096, alignment: 16 }).destroy();
    new PassthroughPool(provider, { label: 'x', alignment: 16, budget: 1 << 20 }).destroy();
  });
});
