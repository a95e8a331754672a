/**
 * Fence dominance, the test behind same-queue reuse (rule b): a wait fence dominates a death frontier
 * when, for every timepoint of the frontier, the wait has a timepoint of the same semaphore with a value
 * at least as high. Whoever waits on the wait fence then runs after the frontier is reached, without
 * waiting on anything more. Also `reachedNow`: whether a wait is reached already (a request that
 * depends on nothing pending may go ahead of queued ones).
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

/** Whether every timepoint of `fence` is reached now (and none of its semaphores failed). */
export function reachedNow(fence: Fence): boolean {
  const tps = fence.timepoints;
  for (let i = 0; i < tps.length; i++) {
    const tp = tps[i] as (typeof tps)[number];
    if (tp.semaphore.failure !== undefined || tp.semaphore.value < tp.value) return false;
  }
  return true;
}
