import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Fence, type Semaphore, TimelineSemaphore } from '../src/index';
import { flush, kinds } from './helpers';

describe.each(kinds)('ordering over $name (property)', (kind) => {
  it('after every signal, exactly the waiters with value ≤ payload have resolved, in value order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 15 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 10 }),
        async (waitValues, increments, initial) => {
          const s = kind.create(initial);
          const resolvedOrder: number[] = [];
          const callbackOrder: number[] = [];
          // Promise waits and onReached callbacks, registered in the generated (random) order.
          const waits = waitValues.map((v, i) =>
            s.wait(v).then(() => {
              resolvedOrder.push(i);
            }),
          );
          waitValues.forEach((v, i) => {
            s.onReached(v, () => callbackOrder.push(i));
          });
          const check = () => {
            const expected = waitValues
              .map((v, i) => ({ v, i }))
              .filter(({ v }) => v <= s.value)
              .sort((x, y) => x.v - y.v || x.i - y.i);
            const reachedNow = expected.map(({ i }) => i);
            // Exactly the reached waiters have resolved (order is checked per signal below).
            expect(new Set(resolvedOrder)).toEqual(new Set(reachedNow));
            expect(new Set(callbackOrder)).toEqual(new Set(reachedNow));
            expect(s.pendingWaitCount).toBe(2 * (waitValues.length - reachedNow.length));
          };
          await flush();
          check();
          for (const inc of increments) {
            const before = resolvedOrder.length;
            s.signal(s.value + inc);
            await flush();
            check();
            // The batch this signal released is in value order (FIFO among equals).
            const batch = resolvedOrder.slice(before);
            const batchValues = batch.map((i) => waitValues[i] as number);
            expect(batchValues).toEqual([...batchValues].sort((x, y) => x - y));
            for (let k = 1; k < batch.length; k++) {
              if (batchValues[k] === batchValues[k - 1])
                expect(batch[k]).toBeGreaterThan(batch[k - 1] as number);
            }
            expect(callbackOrder.slice(before)).toEqual(batch);
          }
          // Release the rest so nothing dangles.
          s.signal(s.value + 100);
          await Promise.all(waits);
          expect(s.pendingWaitCount).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('join (property)', () => {
  const pool: Semaphore[] = Array.from({ length: 6 }, (_, i) => new TimelineSemaphore(0, { label: `s${i}` }));
  const fenceArb = fc
    .array(fc.tuple(fc.integer({ min: 0, max: pool.length - 1 }), fc.integer({ min: 0, max: 1000 })), {
      maxLength: 10,
    })
    .map((tps) => Fence.of(...tps.map(([s, value]) => ({ semaphore: pool[s] as Semaphore, value }))));

  /** A fence as a set: semaphore → value (and a check that no semaphore appears twice). */
  function asMap(fence: Fence): Map<Semaphore, number> {
    const map = new Map<Semaphore, number>();
    for (const tp of fence.timepoints) {
      expect(map.has(tp.semaphore)).toBe(false);
      map.set(tp.semaphore, tp.value);
    }
    return map;
  }

  it('is commutative, associative and idempotent, keeps the max per semaphore, one per semaphore', () => {
    fc.assert(
      fc.property(fenceArb, fenceArb, fenceArb, (a, b, c) => {
        const ab = Fence.join(a, b);
        expect(asMap(ab)).toEqual(asMap(Fence.join(b, a)));
        expect(asMap(Fence.join(ab, c))).toEqual(asMap(Fence.join(a, Fence.join(b, c))));
        expect(asMap(Fence.join(a, a))).toEqual(asMap(a));
        expect(asMap(Fence.join(a, Fence.empty))).toEqual(asMap(a));
        const abc = Fence.join(a, b, c);
        const expected = new Map<Semaphore, number>();
        for (const f of [a, b, c]) {
          for (const tp of f.timepoints)
            expected.set(tp.semaphore, Math.max(expected.get(tp.semaphore) ?? -1, tp.value));
        }
        expect(asMap(abc)).toEqual(expected);
        expect(abc.timepoints.length).toBe(expected.size);
        // with() agrees with join of a one-timepoint fence.
        for (const tp of b.timepoints) {
          expect(asMap(a.with(tp.semaphore, tp.value))).toEqual(asMap(Fence.join(a, Fence.of(tp))));
        }
      }),
      { numRuns: 300 },
    );
  });
});
