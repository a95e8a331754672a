/**
 * Failure propagation shared by every device: when a wait timepoint of a queue operation fails, the
 * operation's signal timepoints fail with ABORTED whose cause is the original failure.
 */
import { ErrorCode, type Fence, KeelError } from '@keel/fence';

/** The ABORTED error a signal receives when `cause` failed one of the operation's waits. */
export function abortedBy(cause: unknown, operation: string): KeelError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new KeelError(ErrorCode.ABORTED, `${operation}: a wait timepoint failed (${reason})`, { cause });
}

/** Fails every timepoint of `signal` with the ABORTED error for `cause`. */
export function propagateFailure(signal: Fence, cause: unknown, operation: string): void {
  signal.fail(abortedBy(cause, operation));
}
