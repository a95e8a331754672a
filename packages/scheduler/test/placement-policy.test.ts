/**
 * Properties of the placement rules over random masks, producers and loads (the policy alone: it needs
 * semaphores and fences, not a device).
 */
import { Fence, TimelineSemaphore } from '@keel/fence';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlacementPolicy } from '../src/placement-policy';

const TARGETS = 6;
const ALL = (1 << TARGETS) - 1;

function popcount(mask: number): number {
  let n = 0;
  for (let m = mask >>> 0; m !== 0; m &= m - 1) n++;
  return n;
}

describe('PlacementPolicy', () => {
  it('always picks inside the mask, by the first rule that applies', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            allowed: fc.integer({ min: 1, max: ALL }),
            /** Indices (into earlier steps) of the signals this step waits on. */
            waits: fc.array(fc.nat(), { maxLength: 4 }),
            /** Whether this step's signal completes right away (leaves no load behind). */
            completes: fc.boolean(),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        (steps) => {
          const policy = new PlacementPolicy(Array.from({ length: TARGETS }, (_, i) => `t${i}`));
          const signals: { semaphore: TimelineSemaphore; value: number; target: number }[] = [];
          for (const step of steps) {
            // A fence holds each semaphore once: duplicate picks are one timepoint.
            const picked = [
              ...new Set(signals.length === 0 ? [] : step.waits.map((w) => signals[w % signals.length]!)),
            ];
            const wait = Fence.of(...picked.map(({ semaphore, value }) => ({ semaphore, value })));
            const before = Int32Array.from(policy.inFlight);
            const target = policy.choose(step.allowed, wait, 'test');
            const reason = PlacementPolicy.reasonName(policy.reason);
            expect((step.allowed >>> target) & 1).toBe(1);
            const votes = new Array<number>(TARGETS).fill(0);
            for (const p of picked) votes[p.target]!++;
            let local = 0;
            votes.forEach((v, i) => {
              if (v > 0 && ((step.allowed >>> i) & 1) === 1) local |= 1 << i;
            });
            if (popcount(step.allowed) === 1) {
              expect(reason).toBe('explicit');
            } else if (local !== 0) {
              expect(reason).toBe(popcount(local) === 1 ? 'producer' : 'join');
              expect((local >>> target) & 1).toBe(1);
              const best = Math.max(...votes.filter((_, i) => ((local >>> i) & 1) === 1));
              expect(votes[target]).toBe(best);
              for (let i = 0; i < TARGETS; i++) {
                if (((local >>> i) & 1) === 1 && votes[i] === best)
                  expect(before[target]).toBeLessThanOrEqual(before[i]!);
              }
            } else {
              expect(reason).toBe('least-loaded');
              for (let i = 0; i < TARGETS; i++) {
                if (((step.allowed >>> i) & 1) === 1) expect(before[target]).toBeLessThanOrEqual(before[i]!);
              }
            }
            const semaphore = new TimelineSemaphore(0);
            policy.commit(target, Fence.of({ semaphore, value: 1 }));
            expect(policy.inFlight[target]).toBe(before[target]! + 1);
            if (step.completes) {
              semaphore.signal(1);
              expect(policy.inFlight[target]).toBe(before[target]!);
            }
            expect(policy.producerOf(semaphore)).toBe(target);
            signals.push({ semaphore, value: 1, target });
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('releases load when a signal fails, and spreads ties round-robin', () => {
    const policy = new PlacementPolicy(['a', 'b', 'c']);
    const picks: number[] = [];
    const semaphores: TimelineSemaphore[] = [];
    for (let i = 0; i < 6; i++) {
      const target = policy.choose(0b111, Fence.empty, 'test');
      picks.push(target);
      const semaphore = new TimelineSemaphore(0);
      semaphores.push(semaphore);
      policy.commit(target, Fence.of({ semaphore, value: 1 }));
    }
    expect(picks).toEqual([0, 1, 2, 0, 1, 2]);
    semaphores[0]!.fail(new Error('boom'));
    expect([...policy.inFlight]).toEqual([1, 2, 2]);
    expect(policy.choose(0b111, Fence.empty, 'test')).toBe(0);
  });

  it('refuses to wait on a pending timepoint of a lost target', () => {
    const policy = new PlacementPolicy(['a', 'b']);
    const pending = new TimelineSemaphore(0, { label: 'pending' });
    const reached = new TimelineSemaphore(0, { label: 'reached' });
    policy.commit(1, Fence.of({ semaphore: pending, value: 1 }));
    policy.commit(1, Fence.of({ semaphore: reached, value: 1 }));
    reached.signal(1);
    policy.markLost(0b10);
    expect(() => policy.choose(0b01, Fence.of({ semaphore: pending, value: 1 }), 'op')).toThrow(
      /op: wait timepoint 'pending'@1 was to be signalled by b/,
    );
    expect(policy.choose(0b01, Fence.of({ semaphore: reached, value: 1 }), 'op')).toBe(0);
  });
});
