/**
 * Fence bookkeeping helpers (internal). A location's "uses" fence is the join of every fence after
 * which some reader or writer of its memory is done; it is compacted as it grows so that a tensor read
 * every step does not accumulate one timepoint per step.
 */
import { Fence, type Timepoint } from '@keel/fence';

function finished(tp: Timepoint): boolean {
  return tp.semaphore.failure !== undefined || tp.semaphore.value >= tp.value;
}

/**
 * `fence` without the timepoints already reached or failed. Only for "uses" fences: a failed use is
 * over (its operation will not touch the memory any more). Never use it on a "ready" fence, whose
 * failure is the error readers must see.
 */
export function compactUses(fence: Fence): Fence {
  const tps = fence.timepoints;
  let keep = 0;
  for (const tp of tps) if (!finished(tp)) keep++;
  if (keep === tps.length) return fence;
  if (keep === 0) return Fence.empty;
  return Fence.of(...tps.filter((tp) => !finished(tp)));
}

/** The join of `uses` and `more`, compacted. */
export function addUse(uses: Fence, more: Fence): Fence {
  if (more.isEmpty) return compactUses(uses);
  return compactUses(Fence.join(uses, more));
}

/** True when every timepoint of `fence` is reached (a failed one counts as pending: never reached). */
export function isReached(fence: Fence): boolean {
  for (const tp of fence.timepoints) {
    if (tp.semaphore.failure !== undefined || tp.semaphore.value < tp.value) return false;
  }
  return true;
}

/** True when no timepoint of a "uses" fence is still pending (reached or failed). */
export function usesOver(fence: Fence): boolean {
  for (const tp of fence.timepoints) if (!finished(tp)) return false;
  return true;
}

/**
 * Calls `callback` once every timepoint of a "uses" fence is over (reached or failed, each one on its
 * own: unlike `Fence.onReached`, a failure does not end the wait while other uses are still pending).
 */
export function whenUsesOver(fence: Fence, callback: () => void): void {
  const pending = compactUses(fence).timepoints;
  let remaining = pending.length;
  if (remaining === 0) {
    callback();
    return;
  }
  const onOne = (): void => {
    if (--remaining === 0) callback();
  };
  for (const tp of pending) tp.semaphore.onReached(tp.value, onOne);
}
