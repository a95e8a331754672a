/**
 * Fence dominance, the test behind same-queue reuse (rule b): a wait fence dominates a death frontier
 * when, for every timepoint of the frontier, the wait has a timepoint of the same semaphore with a value
 * at least as high. Whoever waits on the wait fence then runs after the frontier is reached, without
 * waiting on anything more.
 */
import type { Fence } from '@keel/fence';

/** True when every timepoint of `frontier` is covered by a timepoint of `wait` (same semaphore, ≥ value). */
export function fenceDominates(wait: Fence, frontier: Fence): boolean {
  const covered = frontier.timepoints;
  const by = wait.timepoints;
  for (let i = 0; i < covered.length; i++) {
    const tp = covered[i] as (typeof covered)[number];
    let ok = false;
    for (let j = 0; j < by.length; j++) {
      const other = by[j] as (typeof by)[number];
      if (other.semaphore === tp.semaphore) {
        ok = other.value >= tp.value;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}
