/**
 * Contract violations found by the allocator audit (notes/audit-alloc.md, findings 1–11), one describe
 * per finding: each test failed before its fix. Pools over slab providers (creation checks, provider
 * failures), and the queue-ordered engine (alloca's options and affinity, provider out of memory under
 * rule d, destroy with `destroyPool: false`, failure messages).
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { ErrorCode } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import {
  ArrayBufferSlabProvider,
  type Block,
  PassthroughPool,
  type Pool,
  PoolRegistry,
  type PoolStats,
  QueueAllocator,
  RingPool,
  SharedArrayBufferSlabProvider,
  type SlabProvider,
  TlsfPool,
} from '../src/index';
import { CountingProvider, thrown } from './helpers';

/** The KeelError `fn` throws (fails the test otherwise). */
function keelErrorOf(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return error;
    throw error;
  }
  throw new Error('nothing thrown');
}

const at = (semaphore: TimelineSemaphore, value: number): Fence => Fence.of({ semaphore, value });

/** A pool that can hold nothing (maxBlockBytes 0), as a third-party Pool might be. */
class EmptyPool implements Pool<ArrayBuffer> {
  readonly kind = 'tlsf' as const;
  readonly label = 'empty';
  readonly alignment = 16;
  readonly maxBlockBytes = 0;
  reserve(): Block<ArrayBuffer> | undefined {
    return undefined;
  }
  reserveExisting(): Block<ArrayBuffer> | undefined {
    return undefined;
  }
  release(): void {}
  get stats(): PoolStats {
    return new TlsfPool(new CountingProvider()).stats;
  }
  resetPeaks(): void {}
  trim(): void {}
  destroy(): void {}
}

describe('finding 1: a pool that can hold nothing never makes a zero-byte alloca hang', () => {
  it('a budget below the alignment is INVALID_ARGUMENT at creation (TlsfPool, PassthroughPool)', () => {
    const provider = new CountingProvider();
    expect(thrown(() => new TlsfPool(provider, { label: 'tiny', budget: 8 }))).toMatch(
      /^INVALID_ARGUMENT: TlsfPool 'tiny': budget 8 must be at least the alignment \(16 bytes\)/,
    );
    expect(thrown(() => new PassthroughPool(provider, { label: 'tiny', budget: 8 }))).toMatch(
      /^INVALID_ARGUMENT: PassthroughPool 'tiny': budget 8 must be at least the alignment \(16 bytes\)/,
    );
    expect(thrown(() => new TlsfPool(provider, { label: 'ok', budget: 16 }))).toBe('nothing thrown');
  });

  it('a zero-byte alloca on a pool whose maxBlockBytes is 0 is RESOURCE_EXHAUSTED, nothing enqueued', () => {
    const allocator = new QueueAllocator(new EmptyPool(), { label: 'q5' });
    const s = new TimelineSemaphore(0);
    expect(thrown(() => allocator.alloca(1, Fence.empty, at(s, 1), 0))).toMatch(
      /^RESOURCE_EXHAUSTED: QueueAllocator 'q5': alloca: 0 bytes exceed what tlsf pool 'empty' can ever hold \(0 bytes\)/,
    );
    expect(allocator.stats.queuedRequests).toBe(0);
    expect(allocator.stats.pendingAllocas).toBe(0);
    expect(allocator.stats.allocas).toBe(0);
  });
});

describe('finding 2: a slab provider out of memory makes the request wait for a fitting dealloca', () => {
  it.each([
    ['TlsfPool', (p: CountingProvider) => new TlsfPool(p, { label: 't', slabSize: 1 << 16 })],
    ['PassthroughPool', (p: CountingProvider) => new PassthroughPool(p, { label: 't' })],
  ])('%s: rule d applies when growth throws', async (_type, make) => {
    const provider = new CountingProvider();
    const allocator = new QueueAllocator(make(provider), { label: 'oom' });
    const q0 = new TimelineSemaphore(0);
    const q1 = new TimelineSemaphore(0);
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 1 << 16);
    allocator.dealloca(1, at(q0, 1), Fence.empty, a);
    provider.fail = true;
    const b = allocator.alloca(2, at(q1, 0), at(q1, 1), 1 << 16);
    expect(b.source).toBe('waited');
    expect(b.state).toBe('pending');
    expect(allocator.stats.waits).toBe(1);
    q0.signal(1);
    await at(q1, 1).wait({ timeoutMs: 1000 });
    expect(b.state).toBe('live');
    allocator.destroy();
  });

  it('with nothing dying that fits, RESOURCE_EXHAUSTED names the allocator and the alloca; nothing enqueued', () => {
    const provider = new CountingProvider();
    const allocator = new QueueAllocator(new PassthroughPool(provider, { label: 'p' }), { label: 'oom' });
    allocator.alloca(1, Fence.empty, Fence.empty, 64);
    provider.fail = true;
    const s = new TimelineSemaphore(0);
    const error = keelErrorOf(() => allocator.alloca(1, Fence.empty, at(s, 1), 64, { label: 'x' }));
    expect(error.code).toBe(ErrorCode.RESOURCE_EXHAUSTED);
    expect(error.message).toMatch(
      /^QueueAllocator 'oom': alloca 'x': the pool could not grow and no pending dealloca frees a block that fits: PassthroughPool 'p': reserve: the slab provider could not create a slab/,
    );
    expect(KeelError.is(error.cause, 'RESOURCE_EXHAUSTED')).toBe(true);
    const stats = allocator.stats;
    expect([stats.allocas, stats.waits, stats.queuedRequests, stats.pendingAllocas]).toEqual([1, 0, 0, 0]);
    expect(s.value).toBe(0);
  });
});

describe('finding 3: alloca options are checked (INVALID_ARGUMENT, nothing enqueued)', () => {
  it.each([
    [{ alignmnet: 64 }, /unknown option 'alignmnet' \(known options: alignment, label\)/],
    [{ label: 42 }, /option 'label' must be a string, got 42/],
    ['abc', /options must be an object \(\{ alignment\?, label\? \}\), got "abc"/],
    [null, /options must be an object \(\{ alignment\?, label\? \}\), got null/],
    [[], /options must be an object/],
    [{ alignment: '64' }, /alignment "64" must be a power of two/],
  ])('%j', (options, message) => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()), { label: 'q' });
    const s = new TimelineSemaphore(0);
    const text = thrown(() => allocator.alloca(1, Fence.empty, at(s, 1), 16, options as never));
    expect(text).toMatch(/^INVALID_ARGUMENT: QueueAllocator 'q': alloca: /);
    expect(text).toMatch(message);
    expect(allocator.stats.allocas).toBe(0);
    expect(allocator.stats.pool.liveBlocks).toBe(0);
    expect(s.value).toBe(0);
  });

  it('good options pass', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()));
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 16, { alignment: 64, label: 'w' });
    expect([a.alignment, a.label, a.state]).toEqual([64, 'w', 'live']);
    expect(allocator.alloca(1, Fence.empty, Fence.empty, 16, {}).state).toBe('live');
    expect(allocator.alloca(1, Fence.empty, Fence.empty, 16, { label: undefined }).state).toBe('live');
  });
});

const POOLS = [
  ['TlsfPool', (p: unknown) => new TlsfPool(p as SlabProvider<ArrayBuffer>, { label: 'p' })],
  ['RingPool', (p: unknown) => new RingPool(p as SlabProvider<ArrayBuffer>, { label: 'p', capacity: 64 })],
  ['PassthroughPool', (p: unknown) => new PassthroughPool(p as SlabProvider<ArrayBuffer>, { label: 'p' })],
] as const;

describe('findings 4 and 5: every pool checks its provider at creation', () => {
  const notProviders: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['{}', {}],
    ['{ createSlab: 1 }', { createSlab: 1, destroySlab() {} }],
    ['no destroySlab', { createSlab: (n: number) => new ArrayBuffer(n) }],
    ['destroySlab not a function', { createSlab: (n: number) => new ArrayBuffer(n), destroySlab: 'x' }],
    [
      'resizeSlab not a function',
      { createSlab: (n: number) => new ArrayBuffer(n), destroySlab() {}, resizeSlab: 1 },
    ],
  ];
  for (const [type, make] of POOLS) {
    it.each(notProviders)(`${type}: %s`, (_name, provider) => {
      expect(thrown(() => make(provider))).toBe(
        `INVALID_ARGUMENT: ${type} 'p': provider must be a SlabProvider (createSlab and destroySlab functions, resizeSlab a function if present)`,
      );
    });
  }
});

/** A provider whose destroySlab throws the first time. */
class FlakyDestroyProvider extends CountingProvider {
  destroyCalls = 0;
  readonly failure = new Error('destroy failed (test)');
  override destroySlab(memory: ArrayBuffer): void {
    this.destroyCalls++;
    if (this.destroyCalls === 1) throw this.failure;
    super.destroySlab(memory);
  }
}

describe('finding 6: a provider whose destroySlab throws never corrupts the pool', () => {
  it('PassthroughPool release: INTERNAL naming the pool, counted once, destroySlab called once', () => {
    const provider = new FlakyDestroyProvider();
    const pool = new PassthroughPool(provider, { label: 'pp' });
    const block = pool.reserve(16) as Block<ArrayBuffer>;
    const error = keelErrorOf(() => pool.release(block));
    expect(error.code).toBe(ErrorCode.INTERNAL);
    expect(error.message).toMatch(
      /^PassthroughPool 'pp': release: the slab provider threw while destroying a slab \(destroy failed \(test\)\)/,
    );
    expect(error.cause).toBe(provider.failure);
    expect(thrown(() => pool.release(block))).toMatch(/^FAILED_PRECONDITION: .*was already released/);
    expect(provider.destroyCalls).toBe(1);
    const { reservedBytes, slabCount, liveBlocks, liveBytes, slabsDestroyed } = pool.stats;
    expect({ reservedBytes, slabCount, liveBlocks, liveBytes, slabsDestroyed }).toEqual({
      reservedBytes: 0,
      slabCount: 0,
      liveBlocks: 0,
      liveBytes: 0,
      slabsDestroyed: 1,
    });
  });

  it('TlsfPool destroy: every slab is given back once even when one destroySlab throws', () => {
    const provider = new FlakyDestroyProvider();
    const pool = new TlsfPool(provider, { label: 'tt', slabSize: 1024 });
    pool.reserve(1024);
    pool.reserve(1024);
    expect(provider.created).toBe(2);
    expect(thrown(() => pool.destroy())).toMatch(
      /^INTERNAL: TlsfPool 'tt': destroy: the slab provider threw/,
    );
    expect(provider.destroyCalls).toBe(2);
    expect(pool.stats.slabCount).toBe(0);
    expect(pool.stats.reservedBytes).toBe(0);
  });

  it('TlsfPool trim: the other empty slabs are still trimmed', () => {
    const provider = new FlakyDestroyProvider();
    const pool = new TlsfPool(provider, { label: 'tt', slabSize: 1024 });
    const blocks = [pool.reserve(1024), pool.reserve(1024)] as Block<ArrayBuffer>[];
    for (const b of blocks) pool.release(b);
    expect(thrown(() => pool.trim())).toMatch(/^INTERNAL: TlsfPool 'tt': trim: the slab provider threw/);
    expect(provider.destroyCalls).toBe(2);
    expect(pool.stats.slabCount).toBe(0);
    expect(thrown(() => pool.trim())).toBe('nothing thrown');
  });
});

describe('finding 7: slab provider options are checked', () => {
  for (const Provider of [ArrayBufferSlabProvider, SharedArrayBufferSlabProvider]) {
    const name = Provider.name;
    it.each([
      [null, /options must be an object, got null/],
      ['abc', /options must be an object, got "abc"/],
      [{ maxByteLength: 'big' }, /option 'maxByteLength' must be an integer ≥ 1, got "big"/],
      [{ maxByteLength: -1 }, /option 'maxByteLength' must be an integer ≥ 1, got -1/],
      [{ maxByteLength: 1.5 }, /option 'maxByteLength' must be an integer ≥ 1, got 1\.5/],
      [{ maxByteLenght: 1024 }, /unknown option 'maxByteLenght' \(known options: maxByteLength\)/],
    ])(`${name}: %j`, (options, message) => {
      const text = thrown(() => new Provider(options as never));
      expect(text).toMatch(new RegExp(`^INVALID_ARGUMENT: ${name}: `));
      expect(text).toMatch(message);
    });
    it(`${name}: good options pass`, () => {
      expect(new Provider().maxByteLength).toBeUndefined();
      expect(new Provider({}).resizeSlab).toBeUndefined();
      expect(new Provider({ maxByteLength: 1 << 20 }).maxByteLength).toBe(1 << 20);
    });
  }
});

describe('finding 8: the allocator checks the shape of its pool', () => {
  it.each([
    ['reserve only', { reserve() {} }],
    ['no release', { reserve() {}, reserveExisting() {}, destroy() {}, trim() {}, resetPeaks() {} }],
    [
      'no maxBlockBytes',
      {
        alignment: 16,
        stats: {},
        reserve() {},
        reserveExisting() {},
        release() {},
        destroy() {},
        trim() {},
        resetPeaks() {},
      },
    ],
  ])('%s', (_name, pool) => {
    expect(thrown(() => new QueueAllocator(pool as never, { label: 'q' }))).toBe(
      "INVALID_ARGUMENT: QueueAllocator 'q': pool must be a Pool (reserve, reserveExisting, release, resetPeaks, trim and destroy functions, numeric alignment and maxBlockBytes, stats)",
    );
  });

  it('a third-party pool of the right shape is accepted', () => {
    expect(new QueueAllocator(new EmptyPool()).pool).toBeInstanceOf(EmptyPool);
  });
});

describe('finding 9: destroy() with destroyPool: false gives the blocks it holds back to the pool', () => {
  it('live, pending, dying and waiting blocks go back; the pool serves a new allocator at once', () => {
    const pool = new TlsfPool(new CountingProvider(), { label: 'kept', slabSize: 4096, budget: 4096 });
    const allocator = new QueueAllocator(pool, { label: 'old', destroyPool: false });
    const q = new TimelineSemaphore(0);
    allocator.alloca(1, Fence.empty, Fence.empty, 1024); // live
    allocator.alloca(1, at(q, 5), at(q, 6), 1024); // pending, with a block
    const dying = allocator.alloca(1, Fence.empty, Fence.empty, 1024);
    allocator.dealloca(1, at(q, 1), Fence.empty, dying); // dying (frontier pending)
    const inherits = allocator.alloca(1, Fence.empty, Fence.empty, 1024); // free memory: grown
    allocator.dealloca(1, at(q, 2), Fence.empty, inherits);
    allocator.alloca(2, Fence.empty, Fence.empty, 1024); // rule d: waits for a dying block
    expect(pool.stats.liveBlocks).toBe(4);
    allocator.destroy();
    expect(pool.stats.liveBlocks).toBe(0);
    expect(pool.stats.liveBytes).toBe(0);
    const fresh = new QueueAllocator(pool, { label: 'new' });
    const whole = fresh.alloca(1, Fence.empty, Fence.empty, 4096);
    expect(whole.state).toBe('live');
    fresh.destroy();
  });

  it('a quarantined block stays reserved (its users may still run)', () => {
    const pool = new TlsfPool(new CountingProvider(), { label: 'kept', slabSize: 4096 });
    const allocator = new QueueAllocator(pool, { label: 'old', destroyPool: false });
    const q = new TimelineSemaphore(0);
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 1024);
    allocator.dealloca(1, at(q, 1), Fence.empty, a);
    q.fail(new KeelError(ErrorCode.ABORTED, 'test failure'));
    expect(allocator.stats.quarantinedBlocks).toBe(1);
    allocator.destroy();
    expect(pool.stats.liveBlocks).toBe(1);
  });
});

describe('finding 10: affinity 0 (QueueAffinity.NONE) is INVALID_ARGUMENT', () => {
  it('alloca and dealloca', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()), { label: 'q' });
    expect(thrown(() => allocator.alloca(0, Fence.empty, Fence.empty, 16))).toBe(
      "INVALID_ARGUMENT: QueueAllocator 'q': alloca: queue affinity 0 (QueueAffinity.NONE) names no queue and is never valid for an operation",
    );
    expect(allocator.stats.allocas).toBe(0);
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 16);
    expect(thrown(() => allocator.dealloca(0, Fence.empty, Fence.empty, a))).toMatch(
      /^INVALID_ARGUMENT: QueueAllocator 'q': dealloca: queue affinity 0 \(QueueAffinity\.NONE\)/,
    );
    expect(a.state).toBe('live');
  });
});

describe('finding 11: failure messages name the allocation and the caller', () => {
  it('a failed dealloca wait names the allocation', () => {
    const allocator = new QueueAllocator(new TlsfPool(new CountingProvider()), { label: 'c1' });
    const q = new TimelineSemaphore(0);
    const out = new TimelineSemaphore(0);
    const a = allocator.alloca(1, Fence.empty, Fence.empty, 64, { label: 'act' });
    allocator.dealloca(1, at(q, 1), at(out, 1), a);
    q.fail(new KeelError(ErrorCode.UNAVAILABLE, 'lost'));
    expect(KeelError.is(out.failure, 'ABORTED')).toBe(true);
    expect((out.failure as KeelError).message).toMatch(
      /^QueueAllocator 'c1': dealloca of allocation 'act' \(64 bytes\): /,
    );
  });

  it("PoolRegistry.dealloca with a bad queue index names the caller's what", () => {
    const pools = new PoolRegistry(new ArrayBufferSlabProvider(), {
      poolLabel: 'test alloca',
      deviceLabel: 'test',
      backend: 'test',
      alignment: 16,
      slabSize: 64 * 1024,
      ringCapacity: 64 * 1024,
    });
    const allocation = pools.allocator('tlsf', 'alloca').alloca(1, Fence.empty, Fence.empty, 16);
    const buffer = { byteLength: 16, label: 'b' };
    expect(
      thrown(() => pools.dealloca(40, Fence.empty, Fence.empty, buffer, allocation, 'test queueDealloca')),
    ).toBe('INVALID_ARGUMENT: test queueDealloca: queue index 40 is outside 0..31');
  });
});
