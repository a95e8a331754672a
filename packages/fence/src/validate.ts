/**
 * Argument checks shared by semaphores, fences and waits. Every check throws (or the caller rejects
 * with) a KeelError INVALID_ARGUMENT whose message names the object and the broken rule.
 */
import { describeValue } from './describe-value';
import { ErrorCode, KeelError } from './keel-error';

export { describeValue };

/** True for a payload a timeline may hold: a non-negative safe integer (0 … 2^53 − 1). */
export function isPayload(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A KeelError INVALID_ARGUMENT; `message` names the object and the broken rule. */
export function invalidArgument(message: string): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message);
}

/** The INVALID_ARGUMENT error for a value that is not a payload; `what` names the object and argument. */
export function invalidPayload(what: string, value: unknown): KeelError {
  return invalidArgument(`${what}: ${describeValue(value)} is not a non-negative safe integer`);
}

/** Throws INVALID_ARGUMENT unless `callback` is a function; `what` names the call. */
export function checkCallback(what: string, callback: unknown): void {
  if (typeof callback !== 'function')
    throw invalidArgument(`${what}: callback must be a function, got ${describeValue(callback)}`);
}

/** Options of every asynchronous wait in this package. */
export interface WaitOptions {
  /**
   * Milliseconds to wait before rejecting with DEADLINE_EXCEEDED. Omitted or `Infinity`: no deadline.
   * `0` polls: the wait resolves if already satisfied and otherwise rejects at once.
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Aborting it rejects the wait with CANCELLED (cause = `abortSignal.reason`); already aborted: at
   * once.
   */
  readonly abortSignal?: AbortSignal | undefined;
  /**
   * The former name of `abortSignal`, kept for one minor release. Giving both with different signals
   * is INVALID_ARGUMENT.
   *
   * @deprecated Use `abortSignal` (`signal` reads like the fence a queue operation signals).
   */
  readonly signal?: AbortSignal | undefined;
}

/** Options of a blocking wait (`SharedTimelineSemaphore.waitSync`). */
export interface WaitSyncOptions {
  /** As `WaitOptions.timeoutMs`. */
  readonly timeoutMs?: number | undefined;
  /**
   * Microseconds to spin (re-reading the payload, no sleep) before blocking, default 0. A thread that
   * expects its value soon (a worker in a tight ping-pong with another thread) avoids the cost of being
   * woken from a sleep, which on virtual machines is tens of microseconds; the price is a busy core
   * while spinning. Must be a finite number ≥ 0 (INVALID_ARGUMENT otherwise).
   */
  readonly spinMicros?: number | undefined;
}

/** Validates wait options; returns an INVALID_ARGUMENT error to reject with, or undefined if valid. */
export function checkWaitOptions(what: string, options: WaitOptions): KeelError | undefined {
  if (typeof options !== 'object' || options === null)
    return invalidArgument(`${what}: options must be an object`);
  const { timeoutMs, abortSignal, signal } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs >= 0))
    return invalidArgument(
      `${what}: timeoutMs ${describeValue(timeoutMs)} must be a number ≥ 0 (or Infinity)`,
    );
  return (
    checkSignal(what, 'abortSignal', abortSignal) ??
    checkSignal(what, 'signal (deprecated alias of abortSignal)', signal) ??
    (abortSignal && signal && abortSignal !== signal
      ? invalidArgument(
          `${what}: abortSignal and its deprecated alias signal name different AbortSignals (give abortSignal only)`,
        )
      : undefined)
  );
}

function checkSignal(what: string, name: string, value: unknown): KeelError | undefined {
  return value === undefined || isAbortSignal(value)
    ? undefined
    : invalidArgument(`${what}: ${name} must be an AbortSignal, got ${describeValue(value)}`);
}

/** The AbortSignal of checked wait options: `abortSignal`, else the deprecated `signal`. */
export function abortSignalOf(options: WaitOptions): AbortSignal | undefined {
  return options.abortSignal ?? options.signal;
}

/** Duck-typed, so that signals of another realm (an iframe, a polyfill) are accepted. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Partial<AbortSignal>;
  return (
    typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
  );
}
