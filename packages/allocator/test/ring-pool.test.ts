import { describe, expect, it } from 'vitest';
import { type Block, RingPool } from '../src/index';
import { CountingProvider, codeOf, findOverlap } from './helpers';

function ring(capacity: number, alignment?: number) {
  const provider = new CountingProvider();
  return { provider, pool: new RingPool(provider, { capacity, alignment }) };
}

describe('RingPool', () => {
  it('carves blocks in order from one slab of fixed capacity', () => {
    const { pool: p, provider } = ring(1024);
    const a = p.reserve(100) as Block<ArrayBuffer>;
    const b = p.reserve(200) as Block<ArrayBuffer>;
    const c = p.reserve(0) as Block<ArrayBuffer>;
    expect([a.offset, b.offset, c.offset]).toEqual([0, 112, 320]);
    expect(provider.created).toBe(1);
    expect(p.stats.reservedBytes).toBe(1024);
    expect(p.maxBlockBytes).toBe(1024);
    expect(findOverlap([a, b, c])).toBeUndefined();
  });

  it('returns undefined when full and wraps around once the tail moves', () => {
    const { pool: p } = ring(1024);
    const a = p.reserve(400) as Block<ArrayBuffer>;
    const b = p.reserve(400) as Block<ArrayBuffer>;
    expect(p.reserve(400)).toBeUndefined(); // 224 bytes left at the end
    p.release(a);
    const c = p.reserve(400) as Block<ArrayBuffer>; // wraps to offset 0
    expect(c.offset).toBe(0);
    expect(findOverlap([b, c])).toBeUndefined();
    // The skipped end comes back only with c: b is older, so it must go first.
    expect(p.reserve(16)).toBeUndefined();
    p.release(b);
    expect(p.reserve(401)).toBeUndefined(); // free: [400, 800); the end still belongs to c
    const d = p.reserve(400) as Block<ArrayBuffer>;
    expect(d.offset).toBe(400);
    expect(findOverlap([c, d])).toBeUndefined();
  });

  it('reclaims in FIFO order: an early release waits for older blocks', () => {
    const { pool: p } = ring(1024);
    const a = p.reserve(512) as Block<ArrayBuffer>;
    const b = p.reserve(512) as Block<ArrayBuffer>;
    p.release(b); // out of order
    expect(p.stats.liveBytes).toBe(512);
    expect(p.pendingReclaimBytes).toBe(512);
    expect(p.reserve(16)).toBeUndefined();
    p.release(a); // now both come back; the ring is empty and starts over
    expect(p.pendingReclaimBytes).toBe(0);
    const c = p.reserve(1024) as Block<ArrayBuffer>;
    expect(c.offset).toBe(0);
  });

  it('aligns blocks and rejects what can never fit', () => {
    const { pool: p } = ring(4096);
    p.reserve(20);
    const b = p.reserve(10, 256) as Block<ArrayBuffer>;
    expect(b.offset).toBe(256);
    expect(p.reserve(4097)).toBeUndefined();
    expect(codeOf(() => p.reserve(1, 5))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => new RingPool(new CountingProvider(), { capacity: 0 }))).toBe('INVALID_ARGUMENT');
  });

  it('keeps many reservations in flight (the slot queue grows) in steady FIFO use', () => {
    const { pool: p } = ring(1 << 16);
    const live: Block<ArrayBuffer>[] = [];
    for (let i = 0; i < 10_000; i++) {
      let b = p.reserve(16 + (i % 13) * 16);
      while (b === undefined) {
        p.release(live.shift() as Block<ArrayBuffer>);
        b = p.reserve(16 + (i % 13) * 16);
      }
      live.push(b);
      if (i % 1000 === 0) expect(findOverlap(live)).toBeUndefined();
    }
    expect(findOverlap(live)).toBeUndefined();
    for (const b of live) p.release(b);
    expect(p.stats.liveBytes).toBe(0);
    expect(p.stats.growths).toBe(1);
  });

  it('trim gives the slab back only when empty; double release is caught', () => {
    const { pool: p, provider } = ring(1024);
    const a = p.reserve(10) as Block<ArrayBuffer>;
    p.trim();
    expect(provider.destroyed).toBe(0);
    p.release(a);
    expect(codeOf(() => p.release(a))).toBe('FAILED_PRECONDITION');
    expect(p.reserveExisting(10)).toBeDefined();
    const { pool: q, provider: qp } = ring(1024);
    q.release(q.reserve(10) as Block<ArrayBuffer>);
    q.trim();
    expect(qp.destroyed).toBe(1);
    expect(q.stats.reservedBytes).toBe(0);
    expect(q.reserveExisting(10)).toBeUndefined();
    expect(q.reserve(10)).toBeDefined();
    expect(q.stats.growths).toBe(2);
  });
});
