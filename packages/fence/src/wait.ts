/**
 * Waiting on several fences at once (IREE's wait-all and wait-any over semaphore lists).
 */
import { Fence } from './fence';
import type { KeelError } from './keel-error';
import { describeValue, invalidArgument, type WaitOptions } from './validate';
import { waitForFences } from './wait-group';
import { ignore } from './waiter-queue';

/** The INVALID_ARGUMENT error for `fences` that is not an array of Fence, else undefined. */
function checkFences(what: string, fences: unknown): KeelError | undefined {
  if (!Array.isArray(fences))
    return invalidArgument(`${what}: fences must be an array of Fence, got ${describeValue(fences)}`);
  for (let i = 0; i < fences.length; i++) {
    if (!(fences[i] instanceof Fence))
      return invalidArgument(`${what}: fences[${i}] (${describeValue(fences[i])}) is not a Fence`);
  }
  return undefined;
}

/**
 * Resolves once every fence is reached (an empty list resolves at once). Rejects ABORTED (cause = the
 * failure) as soon as one of their semaphores fails, DEADLINE_EXCEEDED on timeout, CANCELLED on abort;
 * INVALID_ARGUMENT for a list that is not of fences. Nothing is left behind once it settles.
 */
export function waitAll(fences: readonly Fence[], options?: WaitOptions): Promise<void> {
  const invalid = checkFences('waitAll', fences);
  return invalid
    ? Promise.reject(invalid)
    : waitForFences('waitAll', [Fence.joinList(fences)], options).then(ignore);
}

/**
 * Resolves with the index of the first fence reached (an empty fence is reached at once; when several
 * already are, the lowest index). Like IREE's wait-any, a failure of any awaited semaphore rejects the
 * wait with ABORTED (cause = the failure) unless a fence was reached first; failures present when the
 * call starts take precedence. DEADLINE_EXCEEDED on timeout, CANCELLED on abort; INVALID_ARGUMENT for an
 * empty list (nothing could complete it). Nothing is left behind once it settles.
 */
export function waitAny(fences: readonly Fence[], options?: WaitOptions): Promise<number> {
  const invalid =
    checkFences('waitAny', fences) ??
    (fences.length === 0
      ? invalidArgument('waitAny: the list of fences is empty (no fence could complete it)')
      : undefined);
  return invalid ? Promise.reject(invalid) : waitForFences('waitAny', fences, options);
}
