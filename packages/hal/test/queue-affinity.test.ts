import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeelError, QueueAffinity } from '../src/index';

describe('QueueAffinity', () => {
  it('ANY sets every bit and NONE none', () => {
    expect(QueueAffinity.count(QueueAffinity.ANY)).toBe(32);
    expect(QueueAffinity.count(QueueAffinity.NONE)).toBe(0);
    expect(QueueAffinity.isEmpty(QueueAffinity.NONE)).toBe(true);
  });

  it('of, first, has, and, or, indices', () => {
    const m = QueueAffinity.of(1, 3, 31);
    expect(m).toBe(((1 << 1) | (1 << 3) | (1 << 31)) >>> 0);
    expect(QueueAffinity.first(m)).toBe(1);
    expect(QueueAffinity.first(0)).toBe(-1);
    expect(QueueAffinity.has(m, 31)).toBe(true);
    expect(QueueAffinity.has(m, 2)).toBe(false);
    expect(QueueAffinity.and(m, QueueAffinity.of(3, 4))).toBe(8);
    expect(QueueAffinity.or(1, 2)).toBe(3);
    expect([...QueueAffinity.indices(m)]).toEqual([1, 3, 31]);
    expect(QueueAffinity.firstN(3)).toBe(7);
    expect(QueueAffinity.firstN(32)).toBe(0xffffffff);
  });

  it('rejects queue indices outside 0..31', () => {
    expect(() => QueueAffinity.of(32)).toThrow(/queue index 32/);
    expect(() => QueueAffinity.has(1, -1)).toThrow(KeelError);
  });

  it('select picks the lowest queue of the intersection and rejects an empty one', () => {
    expect(QueueAffinity.select(QueueAffinity.ANY, 4, 'op')).toBe(0);
    expect(QueueAffinity.select(QueueAffinity.of(2, 3), 4, 'op')).toBe(2);
    try {
      QueueAffinity.select(QueueAffinity.of(5), 2, "device 'cpu' queueFill");
      expect.unreachable();
    } catch (e) {
      expect(KeelError.is(e, 'INVALID_ARGUMENT')).toBe(true);
      expect((e as Error).message).toMatch(
        /device 'cpu' queueFill: queue affinity 0x20 selects none of the device's 2 queue/,
      );
    }
  });

  it('count matches the indices of any mask (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (mask) => {
        const idx = [...QueueAffinity.indices(mask)];
        expect(idx.length).toBe(QueueAffinity.count(mask));
        expect(QueueAffinity.of(...idx)).toBe(mask >>> 0);
        expect(QueueAffinity.first(mask)).toBe(idx.length === 0 ? -1 : idx[0]);
      }),
    );
  });
});

describe('QueueAffinity: masks must be 32-bit integers', () => {
  const bad: unknown[] = [
    2 ** 32,
    2 ** 32 + 1,
    2 ** 33,
    1.5,
    Number.NaN,
    Infinity,
    -(2 ** 31) - 1,
    '1',
    1n,
    undefined,
  ];

  it('select refuses every mask that is not a 32-bit integer (never truncates)', () => {
    for (const mask of bad) {
      let error: unknown;
      try {
        QueueAffinity.select(mask as number, 4, 'device x queueCopy');
      } catch (e) {
        error = e;
      }
      expect(KeelError.is(error, 'INVALID_ARGUMENT'), `mask ${String(mask)}`).toBe(true);
    }
    // 2**32 + 1 used to select queue 0 (truncated to 1).
    expect(() => QueueAffinity.select(2 ** 32 + 1, 4, 'q')).toThrow(/got 4294967297/);
    expect(() => QueueAffinity.select(2 ** 33, 4, 'q')).toThrow(/got 8589934592/);
    expect(() => QueueAffinity.select('1' as unknown as number, 4, 'q')).toThrow(/got "1"/);
  });

  it('int32 masks count as their unsigned form; -1 is ANY', () => {
    expect(QueueAffinity.select(-1, 4, 'q')).toBe(0);
    expect(QueueAffinity.select(1 << 31, 32, 'q')).toBe(31);
    expect(QueueAffinity.check(-1, 'q')).toBe(0xffffffff);
    expect(QueueAffinity.isValid(0xffffffff)).toBe(true);
    expect(QueueAffinity.isValid(2 ** 32)).toBe(false);
    expect(() => QueueAffinity.select(0x100, 4, 'q')).toThrow(/0x100 selects none/);
  });

  it('every helper refuses a mask that is not a 32-bit integer', () => {
    for (const mask of [2 ** 32 + 1, 0.5]) {
      expect(() => QueueAffinity.count(mask)).toThrow(KeelError);
      expect(() => QueueAffinity.first(mask)).toThrow(KeelError);
      expect(() => QueueAffinity.and(mask, 1)).toThrow(KeelError);
      expect(() => QueueAffinity.or(1, mask)).toThrow(KeelError);
      expect(() => QueueAffinity.has(mask, 0)).toThrow(KeelError);
      expect(() => QueueAffinity.isEmpty(mask)).toThrow(KeelError);
      expect(() => [...QueueAffinity.indices(mask)]).toThrow(KeelError);
    }
    expect(QueueAffinity.format(2 ** 33)).toBe('8589934592');
    expect(QueueAffinity.format(-1)).toBe('0xffffffff');
  });
});
