/**
 * What a failed data-parallel run rethrows: the root cause, the same whichever operation noticed it.
 *
 * - An ABORTED KeelError is a failure propagated to what waited on it (hal's `abortedBy` makes the
 *   failure its direct cause; `Semaphore.wait` wraps a failed semaphore's error the same way): its
 *   cause chain is walked, at most MAX_CAUSE_DEPTH links, to the first KeelError that is not ABORTED.
 * - A device lost or destroyed during the run (hal Device `lostReason`, set synchronously at the loss)
 *   is the cause of whatever its loss made fail: an ABORTED chain, a FAILED_PRECONDITION of the
 *   scheduler or of the device for an operation submitted after the loss. The first lost device's
 *   reason (device order) is rethrown instead (UNAVAILABLE for both Keel devices).
 * CANCELLED (the run's abortSignal) and errors that are not KeelErrors (a throwing callback) are
 * rethrown as they are.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';

/** Most ABORTED links followed down a cause chain. */
export const MAX_CAUSE_DEPTH = 16;

/** The error a run that failed with `error` on `devices` rethrows (see the file comment). */
export function rootCause(error: unknown, devices: readonly Device[]): unknown {
  let root = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (!KeelError.is(root, ErrorCode.ABORTED) || !KeelError.is(root.cause)) break;
    root = root.cause;
  }
  if (!KeelError.is(root) || root.code === ErrorCode.CANCELLED) return root;
  for (const device of devices) {
    const lost = device.lostReason;
    if (lost !== undefined) return lost;
  }
  return root;
}
