import { describe, expect, it } from 'vitest';
import { type Block, PassthroughPool } from '../src/index';
import { CountingProvider, codeOf } from './helpers';

describe('PassthroughPool', () => {
  it('makes a slab per block and destroys it at release', () => {
    const provider = new CountingProvider();
    const p = new PassthroughPool(provider);
    const a = p.reserve(100) as Block<ArrayBuffer>;
    const b = p.reserve(0) as Block<ArrayBuffer>;
    expect(a.offset).toBe(0);
    expect(a.slab).not.toBe(b.slab);
    expect(a.slab.byteLength).toBe(112);
    expect(provider.created).toBe(2);
    expect(p.reserveExisting(10)).toBeUndefined();
    p.release(a);
    expect(provider.destroyed).toBe(1);
    expect(codeOf(() => p.release(a))).toBe('FAILED_PRECONDITION');
    expect(p.stats.reservedBytes).toBe(16);
    p.destroy();
    expect(provider.live.size).toBe(0);
  });

  it('respects its budget', () => {
    const p = new PassthroughPool(new CountingProvider(), { budget: 1000 });
    expect(p.maxBlockBytes).toBe(992);
    expect(p.reserve(600)).toBeDefined();
    expect(p.reserve(600)).toBeUndefined();
    expect(p.stats.failedReserves).toBe(1);
  });
});
