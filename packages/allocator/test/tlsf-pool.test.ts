import { describe, expect, it } from 'vitest';
import { ArrayBufferSlabProvider, type Block, SharedArrayBufferSlabProvider, TlsfPool } from '../src/index';
import { blockProblem, CountingProvider, codeOf, findOverlap, ResizableCountingProvider } from './helpers';

function pool(options: ConstructorParameters<typeof TlsfPool<ArrayBuffer>>[1] = {}) {
  const provider = new CountingProvider();
  return { provider, pool: new TlsfPool(provider, options) };
}

describe('TlsfPool', () => {
  it('reserves aligned, disjoint blocks and releases them', () => {
    const { pool: p, provider } = pool({ slabSize: 64 * 1024 });
    const blocks: Block<ArrayBuffer>[] = [];
    for (const size of [1, 16, 17, 100, 1000, 4096, 0, 33]) {
      const b = p.reserve(size);
      expect(b).toBeDefined();
      const block = b as Block<ArrayBuffer>;
      expect(block.byteLength).toBe(size);
      expect(blockProblem(block, 16)).toBeUndefined();
      blocks.push(block);
    }
    expect(findOverlap(blocks)).toBeUndefined();
    expect(provider.created).toBe(1);
    const stats = p.stats;
    expect(stats.liveBlocks).toBe(8);
    expect(stats.liveBytes).toBe(1 + 16 + 17 + 100 + 1000 + 4096 + 0 + 33);
    expect(stats.reservedBytes).toBe(64 * 1024);
    p.checkInvariants();
    for (const b of blocks) p.release(b);
    p.checkInvariants();
    expect(p.stats.liveBytes).toBe(0);
    expect(p.stats.liveBlocks).toBe(0);
    expect(p.stats.peakLiveBytes).toBe(stats.liveBytes);
  });

  it('honours alignments above its own', () => {
    const { pool: p } = pool({ slabSize: 1 << 20 });
    const blocks: Block<ArrayBuffer>[] = [];
    for (const alignment of [32, 256, 4096, 65536, 16, 1, 8]) {
      p.reserve(48); // misalign the next free range
      const b = p.reserve(100, alignment) as Block<ArrayBuffer>;
      expect(b.offset % alignment).toBe(0);
      blocks.push(b);
    }
    expect(findOverlap(blocks)).toBeUndefined();
    p.checkInvariants();
  });

  it('coalesces released neighbours into one range', () => {
    const { pool: p, provider } = pool({ slabSize: 4096 });
    const a = p.reserve(1024) as Block<ArrayBuffer>;
    const b = p.reserve(1024) as Block<ArrayBuffer>;
    const c = p.reserve(1024) as Block<ArrayBuffer>;
    const d = p.reserve(1024) as Block<ArrayBuffer>;
    expect([a.offset, b.offset, c.offset, d.offset]).toEqual([0, 1024, 2048, 3072]);
    p.release(a);
    p.release(c);
    // No single 2048-byte range is free yet.
    expect(p.reserveExisting(2048)).toBeUndefined();
    p.release(b); // merges a, b and c
    p.checkInvariants();
    const big = p.reserveExisting(3072) as Block<ArrayBuffer>;
    expect(big.offset).toBe(0);
    p.release(big);
    p.release(d);
    const whole = p.reserveExisting(4096) as Block<ArrayBuffer>;
    expect(whole.offset).toBe(0);
    expect(provider.created).toBe(1);
  });

  it('reuses a released range of the same size without growing', () => {
    const { pool: p } = pool({ slabSize: 8192 });
    const keep = p.reserve(100);
    for (let i = 0; i < 1000; i++) {
      const b = p.reserve(1000 + (i % 7) * 16) as Block<ArrayBuffer>;
      p.release(b);
    }
    expect(keep).toBeDefined();
    expect(p.stats.growths).toBe(1);
  });

  it('grows by slabs and gives large requests a dedicated slab', () => {
    const { pool: p, provider } = pool({ slabSize: 1024 });
    const small = [p.reserve(512), p.reserve(512), p.reserve(512)];
    expect(provider.created).toBe(2);
    expect(small.every((b) => b !== undefined)).toBe(true);
    const large = p.reserve(5000) as Block<ArrayBuffer>;
    expect(large.slab.byteLength).toBe(5008); // rounded to 16, a slab of its own
    expect(large.offset).toBe(0);
    expect(p.stats.growths).toBe(3);
    expect(p.stats.reservedBytes).toBe(1024 + 1024 + 5008);
    p.checkInvariants();
  });

  it('never exceeds its budget, and makes a smaller slab near it', () => {
    const { pool: p } = pool({ slabSize: 1024, budget: 2560 });
    expect(p.maxBlockBytes).toBe(2560);
    const a = p.reserve(1024);
    const b = p.reserve(1024);
    expect(a && b).toBeDefined();
    const c = p.reserve(256) as Block<ArrayBuffer>; // a 512-byte slab: what is left of the budget
    expect(c.slab.byteLength).toBe(512);
    expect(p.reserve(512)).toBeUndefined();
    expect(p.stats.reservedBytes).toBeLessThanOrEqual(2560);
    expect(p.reserve(4096)).toBeUndefined();
    expect(p.stats.failedReserves).toBe(2);
  });

  it('gives empty slabs back to make room for a request near the budget', () => {
    const { pool: p, provider } = pool({ slabSize: 1024, budget: 2048 });
    const a = p.reserve(1024) as Block<ArrayBuffer>;
    const b = p.reserve(1024) as Block<ArrayBuffer>;
    expect(p.reserve(2048)).toBeUndefined();
    p.release(a);
    p.release(b);
    const big = p.reserve(2048) as Block<ArrayBuffer>;
    expect(big.slab.byteLength).toBe(2048);
    expect(provider.destroyed).toBe(2);
    expect(p.stats.reservedBytes).toBe(2048);
  });

  it('trims slabs without live blocks', () => {
    const { pool: p, provider } = pool({ slabSize: 1024 });
    const blocks = [p.reserve(1024), p.reserve(1024), p.reserve(1024)] as Block<ArrayBuffer>[];
    p.release(blocks[0] as Block<ArrayBuffer>);
    p.release(blocks[2] as Block<ArrayBuffer>);
    p.trim();
    expect(provider.destroyed).toBe(2);
    expect(p.stats.reservedBytes).toBe(1024);
    expect(p.stats.slabCount).toBe(1);
    p.checkInvariants();
    p.release(blocks[1] as Block<ArrayBuffer>);
    p.trim();
    expect(p.stats.reservedBytes).toBe(0);
    expect(provider.live.size).toBe(0);
    // Slab indices are recycled.
    expect(p.reserve(10)).toBeDefined();
    p.checkInvariants();
  });

  it('rejects bad arguments, foreign blocks and double releases', () => {
    const { pool: p } = pool();
    const { pool: other } = pool();
    expect(codeOf(() => p.reserve(-1))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => p.reserve(1.5))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => p.reserve(8, 3))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => new TlsfPool(new CountingProvider(), { alignment: 12 }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => new TlsfPool(new CountingProvider(), { budget: -5 }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => new TlsfPool(new CountingProvider(), { slabSize: 0 }))).toBe('INVALID_ARGUMENT');
    const b = p.reserve(8) as Block<ArrayBuffer>;
    expect(codeOf(() => other.release(b))).toBe('INVALID_ARGUMENT');
    p.release(b);
    expect(codeOf(() => p.release(b))).toBe('FAILED_PRECONDITION');
    expect(codeOf(() => p.release({ slab: b.slab, offset: 0, byteLength: 8 }))).toBe('INVALID_ARGUMENT');
  });

  it('turns a failing provider into RESOURCE_EXHAUSTED', () => {
    const { pool: p, provider } = pool();
    provider.fail = true;
    expect(codeOf(() => p.reserve(8))).toBe('RESOURCE_EXHAUSTED');
    expect(p.stats.reservedBytes).toBe(0);
  });

  it('destroy gives every slab back and ends the pool', () => {
    const { pool: p, provider } = pool({ slabSize: 1024 });
    p.reserve(1000);
    p.reserve(1000);
    p.destroy();
    p.destroy();
    expect(provider.live.size).toBe(0);
    expect(p.stats.reservedBytes).toBe(0);
    expect(codeOf(() => p.reserve(8))).toBe('FAILED_PRECONDITION');
    expect(codeOf(() => p.trim())).toBe('FAILED_PRECONDITION');
  });

  it('serves every size class boundary', () => {
    const { pool: p } = pool({ slabSize: 1 << 22, alignment: 1 });
    const blocks: Block<ArrayBuffer>[] = [];
    for (let bits = 0; bits < 21; bits++) {
      for (const delta of [-1, 0, 1]) {
        const size = Math.max(0, (1 << bits) + delta);
        const b = p.reserve(size) as Block<ArrayBuffer>;
        expect(b).toBeDefined();
        blocks.push(b);
      }
    }
    expect(findOverlap(blocks)).toBeUndefined();
    p.checkInvariants();
    for (let i = 0; i < blocks.length; i += 2) p.release(blocks[i] as Block<ArrayBuffer>);
    p.checkInvariants();
    for (let i = 1; i < blocks.length; i += 2) p.release(blocks[i] as Block<ArrayBuffer>);
    p.checkInvariants();
    expect(p.stats.liveBytes).toBe(0);
  });

  describe('over a resizable provider', () => {
    const K = 1024;

    it('grows its slab in place by what is missing, keeping views valid', () => {
      const provider = new ResizableCountingProvider(1 << 24);
      const p = new TlsfPool(provider, { growthGranule: 64 * K });
      expect(p.resizable).toBe(true);
      expect(p.smallThreshold).toBe(64 * K);
      const a = p.reserve(100 * K) as Block<ArrayBuffer>;
      new Uint8Array(a.slab.memory, a.offset, 4).set([1, 2, 3, 4]);
      expect(p.stats.reservedBytes).toBe(128 * K);
      const b = p.reserve(100 * K) as Block<ArrayBuffer>;
      expect(b.slab).toBe(a.slab);
      expect(p.stats.reservedBytes).toBe(256 * K); // 28K free at the end were used, 64K × 2 added
      expect(p.stats.slabCount).toBe(1);
      expect(provider.created).toBe(1);
      expect(provider.resizes).toBe(1);
      expect([...new Uint8Array(a.slab.memory, a.offset, 4)]).toEqual([1, 2, 3, 4]);
      expect(a.slab.byteLength).toBe(256 * K);
      p.checkInvariants();
    });

    it('serves small requests from a heap of their own', () => {
      const p = new TlsfPool(new ResizableCountingProvider(1 << 24));
      const big = p.reserve(200 * K) as Block<ArrayBuffer>;
      const small = p.reserve(1 * K) as Block<ArrayBuffer>;
      expect(small.slab).not.toBe(big.slab);
      const big2 = p.reserve(100 * K) as Block<ArrayBuffer>;
      expect(big2.slab).toBe(big.slab);
      p.checkInvariants();
    });

    it('trim shrinks free tails and gives empty slabs back', () => {
      const provider = new ResizableCountingProvider(1 << 24);
      const p = new TlsfPool(provider, { smallThreshold: 0 });
      const a = p.reserve(100 * K) as Block<ArrayBuffer>;
      const b = p.reserve(500 * K) as Block<ArrayBuffer>;
      expect(p.stats.reservedBytes).toBe(640 * K);
      p.release(b);
      p.trim();
      expect(p.stats.reservedBytes).toBe(128 * K);
      expect(a.slab.byteLength).toBe(128 * K);
      expect(provider.bytes).toBe(128 * K);
      p.checkInvariants();
      p.release(a);
      p.trim();
      expect(p.stats.reservedBytes).toBe(0);
      expect(provider.live.size).toBe(0);
    });

    it('starts a new slab when the provider refuses to grow, and stays within the budget', () => {
      const provider = new ResizableCountingProvider(256 * K);
      const p = new TlsfPool(provider, { smallThreshold: 0, budget: 512 * K });
      const blocks = [p.reserve(200 * K), p.reserve(200 * K)] as Block<ArrayBuffer>[];
      expect(provider.created).toBe(2);
      expect(p.reserve(200 * K)).toBeUndefined();
      expect(p.stats.reservedBytes).toBeLessThanOrEqual(512 * K);
      expect(findOverlap(blocks)).toBeUndefined();
      p.checkInvariants();
    });

    it('package providers have resizeSlab only when resizable (absent, not undefined)', () => {
      // exactOptionalPropertyTypes consumers compare the optional member exactly: a property holding
      // undefined does not implement SlabProvider there, and `'resizeSlab' in provider` must not lie.
      for (const fixed of [new ArrayBufferSlabProvider(), new SharedArrayBufferSlabProvider()]) {
        expect('resizeSlab' in fixed).toBe(false);
      }
      for (const resizable of [
        new ArrayBufferSlabProvider({ maxByteLength: 1 << 20 }),
        new SharedArrayBufferSlabProvider({ maxByteLength: 1 << 20 }),
      ]) {
        expect(typeof resizable.resizeSlab).toBe('function');
      }
    });

    it('works with the package providers (resizable ArrayBuffer, growable SharedArrayBuffer)', () => {
      for (const provider of [
        new ArrayBufferSlabProvider({ maxByteLength: 1 << 22 }),
        new SharedArrayBufferSlabProvider({ maxByteLength: 1 << 22 }),
      ]) {
        const p = new TlsfPool<ArrayBufferLike>(provider);
        const blocks = [1000, 70_000, 300_000, 5].map((n) => p.reserve(n) as Block<ArrayBufferLike>);
        expect(findOverlap(blocks)).toBeUndefined();
        expect(p.stats.growths).toBeGreaterThan(p.stats.slabCount);
        p.checkInvariants();
        for (const b of blocks) p.release(b);
        p.trim();
        expect(p.stats.reservedBytes).toBe(0);
      }
    });
  });
});
