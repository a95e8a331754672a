/**
 * The argument and state checks of the pools and the queue allocator: each keeps its ErrorCode and a
 * message that names the object (kind and label), the operation and the broken rule. Written for the
 * size pass that moved these checks into shared code (PoolBase, checkOptions, hal's fence check).
 */
import { Fence, TimelineSemaphore } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { type Block, PassthroughPool, type Pool, QueueAllocator, RingPool, TlsfPool } from '../src/index';
import { CountingProvider, thrown } from './helpers';

describe('creation checks', () => {
  const provider = new CountingProvider();
  it.each([
    [
      () => new TlsfPool(provider, { dedicatedThreshold: 0 }),
      /^INVALID_ARGUMENT: TlsfPool: option 'dedicatedThreshold' must be an integer ≥ 1, got 0$/,
    ],
    [
      () => new TlsfPool(provider, { label: 't', budget: 1.5 }),
      /^INVALID_ARGUMENT: TlsfPool 't': budget 1\.5 must be a positive integer number of bytes or Infinity$/,
    ],
    [
      () => new PassthroughPool(provider, { label: 'p', alignment: 24 }),
      /^INVALID_ARGUMENT: PassthroughPool 'p': alignment 24 must be a power of two between 1 and 1073741824$/,
    ],
    [
      () => new TlsfPool({ createSlab: 1 } as never, { label: 't' }),
      /^INVALID_ARGUMENT: TlsfPool 't': provider must be a SlabProvider \(createSlab and destroySlab functions, resizeSlab a function if present\)$/,
    ],
    [
      () => new RingPool(provider, { label: 'r' } as never),
      /^INVALID_ARGUMENT: RingPool 'r': capacity undefined must be a positive safe integer number of bytes$/,
    ],
    [
      () => new QueueAllocator(null as never, { label: 'q' }),
      /^INVALID_ARGUMENT: QueueAllocator 'q': pool must be a Pool \(/,
    ],
    [
      () => new QueueAllocator(new TlsfPool(provider), { reuseSlack: 0.5 }),
      /^INVALID_ARGUMENT: QueueAllocator: option 'reuseSlack' must be a number ≥ 1, got 0\.5$/,
    ],
    [
      () => new QueueAllocator(new TlsfPool(provider), { maxCandidates: 0 }),
      /^INVALID_ARGUMENT: QueueAllocator: option 'maxCandidates' must be an integer ≥ 1, got 0$/,
    ],
  ])('%#: %s', (make, message) => {
    expect(thrown(make)).toMatch(message);
  });

  it('default labels are <kind>-<n>, and kind comes from the pool type', () => {
    const pools: Pool<ArrayBuffer>[] = [
      new TlsfPool(provider),
      new RingPool(provider, { capacity: 64 }),
      new PassthroughPool(provider),
    ];
    expect(pools.map((p) => p.kind)).toEqual(['tlsf', 'ring', 'passthrough']);
    for (const p of pools) expect(p.label).toMatch(new RegExp(`^${p.kind}-\\d+$`));
    expect(new QueueAllocator(pools[0] as Pool<ArrayBuffer>).label).toMatch(/^allocator-\d+$/);
  });
});

describe.each([
  ['TlsfPool', (p: CountingProvider) => new TlsfPool(p, { label: 'x' })],
  ['RingPool', (p: CountingProvider) => new RingPool(p, { label: 'x', capacity: 4096 })],
  ['PassthroughPool', (p: CountingProvider) => new PassthroughPool(p, { label: 'x' })],
])('%s call checks', (type, make) => {
  const name = `${type} 'x'`;

  it('bad reserve arguments are INVALID_ARGUMENT naming the pool, the operation and the rule', () => {
    const pool = make(new CountingProvider());
    expect(thrown(() => pool.reserve(-1))).toBe(
      `INVALID_ARGUMENT: ${name}: reserve: byteLength -1 must be a non-negative safe integer`,
    );
    expect(thrown(() => pool.reserveExisting(1.5))).toBe(
      `INVALID_ARGUMENT: ${name}: reserveExisting: byteLength 1.5 must be a non-negative safe integer`,
    );
    expect(thrown(() => pool.reserve(8, 3))).toBe(
      `INVALID_ARGUMENT: ${name}: reserve: alignment 3 must be a power of two between 1 and 1073741824`,
    );
  });

  it('a provider that throws is RESOURCE_EXHAUSTED with its message', () => {
    const provider = new CountingProvider();
    const pool = make(provider);
    provider.fail = true;
    expect(thrown(() => pool.reserve(16))).toMatch(
      new RegExp(
        `^RESOURCE_EXHAUSTED: ${name}: reserve: the slab provider could not create a slab of \\d+ bytes \\(out of memory \\(test\\)\\)$`,
      ),
    );
    expect(pool.stats.slabCount).toBe(0);
  });

  it('release checks ownership and double release; every call after destroy is FAILED_PRECONDITION', () => {
    const provider = new CountingProvider();
    const pool = make(provider);
    const other = make(provider);
    const block = pool.reserve(16) as Block<ArrayBuffer>;
    const foreign = other.reserve(16) as Block<ArrayBuffer>;
    expect(thrown(() => pool.release(foreign))).toBe(
      `INVALID_ARGUMENT: ${name}: release: the block does not belong to this pool`,
    );
    expect(thrown(() => pool.release({ ...block }))).toBe(
      `INVALID_ARGUMENT: ${name}: release: the block does not belong to this pool`,
    );
    pool.release(block);
    expect(thrown(() => pool.release(block))).toBe(
      `FAILED_PRECONDITION: ${name}: release: block at offset ${block.offset} of slab ${block.slab.id} was already released`,
    );
    expect(pool.stats).toMatchObject({ liveBlocks: 0, liveBytes: 0, reserves: 1, releases: 1 });
    pool.destroy();
    pool.destroy();
    for (const [op, call] of [
      ['reserve', () => pool.reserve(16)],
      ['reserveExisting', () => pool.reserveExisting(16)],
      ['release', () => pool.release(foreign)],
      ['trim', () => pool.trim()],
    ] as const) {
      expect(thrown(call)).toBe(`FAILED_PRECONDITION: ${name}: ${op}: the pool was destroyed`);
    }
    other.destroy();
    expect(provider.live.size).toBe(0);
  });
});

describe('QueueAllocator call checks', () => {
  const make = () => new QueueAllocator(new TlsfPool(new CountingProvider()), { label: 'q' });

  it('bad alloca and dealloca arguments are INVALID_ARGUMENT naming the allocator, the call and the rule', () => {
    const allocator = make();
    expect(thrown(() => allocator.alloca(1, 'now' as never, Fence.empty, 8))).toMatch(
      /^INVALID_ARGUMENT: QueueAllocator 'q': alloca: wait must be a Fence/,
    );
    expect(thrown(() => allocator.alloca(1, Fence.empty, {} as never, 8))).toMatch(
      /^INVALID_ARGUMENT: QueueAllocator 'q': alloca: signal must be a Fence/,
    );
    expect(thrown(() => allocator.alloca(1.5 as never, Fence.empty, Fence.empty, 8))).toMatch(
      /^INVALID_ARGUMENT: QueueAllocator 'q': alloca/,
    );
    expect(thrown(() => allocator.alloca(1, Fence.empty, Fence.empty, -8))).toBe(
      "INVALID_ARGUMENT: QueueAllocator 'q': alloca: byteLength -8 must be a non-negative safe integer",
    );
    expect(thrown(() => allocator.alloca(1, Fence.empty, Fence.empty, 8, { alignment: 12 }))).toBe(
      "INVALID_ARGUMENT: QueueAllocator 'q': alloca: alignment 12 must be a power of two between 1 and 1073741824",
    );
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 64, { label: 'w' });
    expect(thrown(() => allocator.dealloca(1, Fence.empty, 5 as never, a))).toMatch(
      /^INVALID_ARGUMENT: QueueAllocator 'q': dealloca: signal must be a Fence/,
    );
    expect(thrown(() => make().dealloca(1, Fence.empty, Fence.empty, a))).toBe(
      "INVALID_ARGUMENT: QueueAllocator 'q': dealloca: the allocation does not belong to this allocator",
    );
    allocator.dealloca(1, Fence.empty, Fence.empty, a);
    expect(thrown(() => allocator.dealloca(1, Fence.empty, Fence.empty, a))).toBe(
      "FAILED_PRECONDITION: QueueAllocator 'q': dealloca: allocation 'w' (64 bytes) was already deallocated and cannot be used",
    );
    allocator.destroy();
    expect(thrown(() => allocator.alloca(1, Fence.empty, Fence.empty, 8))).toBe(
      "FAILED_PRECONDITION: QueueAllocator 'q': alloca: the allocator was destroyed",
    );
  });

  it('destroy fails a late dealloca of a queued request and the request itself, UNAVAILABLE', () => {
    const pool = new RingPool(new CountingProvider(), { capacity: 256 });
    const allocator = new QueueAllocator(pool, { label: 'q' });
    const s = new TimelineSemaphore(0);
    const never = new TimelineSemaphore(0);
    const first = allocator.alloca(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), 256);
    allocator.dealloca(
      1,
      Fence.of({ semaphore: never, value: 1 }),
      Fence.of({ semaphore: s, value: 2 }),
      first,
    );
    // The ring is full until the first block's frontier (never@1) is reached: the next request takes
    // the dying block with a joined wait (rule d), the one after it queues.
    const waiting = allocator.alloca(1, Fence.empty, Fence.of({ semaphore: s, value: 3 }), 256);
    const queued = allocator.alloca(1, Fence.empty, Fence.of({ semaphore: s, value: 4 }), 256);
    expect(waiting.source).toBe('waited');
    expect(queued.block).toBeUndefined();
    expect(allocator.stats.queuedRequests).toBe(1);
    allocator.dealloca(1, Fence.empty, Fence.of({ semaphore: s, value: 5 }), queued);
    allocator.destroy();
    expect(waiting.state).toBe('failed');
    expect(queued.state).toBe('failed');
    expect(queued.failure?.code).toBe('UNAVAILABLE');
    expect(s.failure?.code).toBe('UNAVAILABLE');
    expect(allocator.stats.queuedRequests).toBe(0);
    expect(allocator.stats.pendingAllocas).toBe(0);
  });
});

describe('RingPool reservation records', () => {
  it('survive a growth of the record queue that wraps around, with releases out of order', () => {
    const provider = new CountingProvider();
    const pool = new RingPool(provider, { capacity: 1 << 16, alignment: 16 });
    const live: Block<ArrayBuffer>[] = [];
    // Move the queue's first record away from 0, then fill past 64 records so that it grows wrapped.
    for (let i = 0; i < 40; i++) live.push(pool.reserve(16) as Block<ArrayBuffer>);
    for (let i = 0; i < 30; i++) pool.release(live.shift() as Block<ArrayBuffer>);
    for (let i = 0; i < 200; i++) live.push(pool.reserve(32) as Block<ArrayBuffer>);
    expect(live.every((b) => b !== undefined)).toBe(true);
    // Release every other block: nothing is reclaimed before the oldest goes.
    const odd = live.filter((_, i) => i % 2 === 1);
    for (const b of odd) pool.release(b);
    expect(pool.pendingReclaimBytes).toBe(odd.reduce((n, b) => n + b.byteLength, 0));
    for (const b of live.filter((_, i) => i % 2 === 0)) pool.release(b);
    expect(pool.pendingReclaimBytes).toBe(0);
    expect(pool.stats).toMatchObject({ liveBlocks: 0, liveBytes: 0, releases: 240 });
    expect((pool.reserve(1 << 16) as Block<ArrayBuffer>).offset).toBe(0);
  });
});
