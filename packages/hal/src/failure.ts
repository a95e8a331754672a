/**
 * Failure propagation and fence completion shared by every device and the allocator (driver kit):
 * - when a wait timepoint of a queue operation fails, the operation's signal timepoints fail with
 *   ABORTED whose cause is the original failure;
 * - completing an operation signals only the signal timepoints not reached yet: a timepoint some other
 *   signal already passed (or a failed semaphore) is left alone, and nothing here ever throws, neither
 *   synchronously nor from a microtask. What a semaphore throws anyway (a foreign implementation) is
 *   returned to the caller, which reports it through its own hook.
 */
import { describeValue, ErrorCode, type Fence, KeelError } from '@keel/fence';

/** The ABORTED errors `abortedBy` made (their cause is an original failure). */
const PROPAGATED: WeakSet<object> = /* @__PURE__ */ new WeakSet();

/**
 * The ABORTED error a signal receives when `failure` failed one of the operation's waits. Its cause is
 * the original failure: `failure` itself, or, where `failure` is an ABORTED this function made for an
 * earlier operation of the chain, that one's cause. So every operation downstream of a failure, however
 * many hops away, fails ABORTED with the same cause, and messages do not nest.
 */
export function abortedBy(failure: unknown, operation: string): KeelError {
  const cause =
    typeof failure === 'object' && failure !== null && PROPAGATED.has(failure)
      ? (failure as KeelError).cause
      : failure;
  const error = new KeelError(
    ErrorCode.ABORTED,
    `${operation}: a wait timepoint failed (${reasonOf(cause)})`,
    {
      cause,
    },
  );
  PROPAGATED.add(error);
  return error;
}

/**
 * What an operation's own code (a host call's callback, a kernel) threw or rejected with, as the
 * operation's failure: a KeelError as it is; anything else, `undefined` and `null` included, INTERNAL
 * naming the operation (e.g. "device 'cpu' queueHostCall"), with the value as cause. A throw never
 * reads as success.
 */
export function thrownBy(error: unknown, operation: string): KeelError {
  if (KeelError.is(error)) return error;
  const what =
    error instanceof Error
      ? `${error.name}: ${error.message}`
      : `threw or rejected with ${error === undefined || error === null ? `${error}` : describeValue(error)}`;
  return new KeelError(ErrorCode.INTERNAL, `${operation}: ${what}`, { cause: error });
}

/** A failure as text: an Error's message, else the value (describeValue). */
function reasonOf(value: unknown): string {
  return value instanceof Error ? value.message : describeValue(value);
}

/** What a semaphore threw, as something to report (a thrown `undefined` or `null` becomes INTERNAL). */
function caught(error: unknown): unknown {
  return error ?? new KeelError(ErrorCode.INTERNAL, 'a semaphore threw undefined');
}

/** Fails every timepoint of `signal` with the ABORTED error for `cause`. */
export function propagateFailure(signal: Fence, cause: unknown, operation: string): void {
  signal.fail(abortedBy(cause, operation));
}

/**
 * Signals every timepoint of `fence` whose semaphore is healthy and below the timepoint's value; the
 * others are left alone. Never throws: returns the first exception a semaphore threw, else undefined.
 * Allocation-free.
 */
export function signalPendingTimepoints(fence: Fence): unknown {
  const timepoints = fence.timepoints;
  let thrown: unknown;
  for (let i = 0; i < timepoints.length; i++) {
    const tp = timepoints[i]!;
    const semaphore = tp.semaphore;
    try {
      if (semaphore.failure || semaphore.value >= tp.value) continue;
      semaphore.signal(tp.value);
    } catch (error) {
      thrown ??= caught(error);
    }
  }
  return thrown;
}

/** Fails every timepoint of `fence` with `error`. Never throws: returns what a semaphore threw. */
export function failTimepoints(fence: Fence, error: unknown): unknown {
  const timepoints = fence.timepoints;
  let thrown: unknown;
  for (let i = 0; i < timepoints.length; i++) {
    try {
      timepoints[i]!.semaphore.fail(error);
    } catch (e) {
      thrown ??= caught(e);
    }
  }
  return thrown;
}

/**
 * True when some timepoint of `fence` is still pending: its semaphore is healthy and below the value.
 * A failure of an operation whose signal has no pending timepoint reaches nobody waiting for that
 * operation (an empty fence, values something else already passed, semaphores already failed).
 */
export function hasPendingTimepoint(fence: Fence): boolean {
  const timepoints = fence.timepoints;
  for (let i = 0; i < timepoints.length; i++) {
    const tp = timepoints[i]!;
    if (!tp.semaphore.failure && tp.semaphore.value < tp.value) return true;
  }
  return false;
}

/** What `onUnhandledFailure` receives besides the error. */
export interface UnhandledFailureContext {
  /** The device as its messages name it, e.g. "device 'cpu'" or "webgpu device 'webgpu'". */
  readonly device: string;
  /** The failed operation, e.g. "device 'cpu' queueExecute". */
  readonly operation: string;
}

/** A device option: hears about failures no signal timepoint could deliver. */
export type UnhandledFailureHook = (error: KeelError, context: UnhandledFailureContext) => void;

/** What `unhandledFailureReporter` returns: a device calls it with an undeliverable failure. */
export type UnhandledFailureReport = (error: unknown, operation: string) => void;

/**
 * The reporter a device calls with a failure that had no pending signal timepoint (see
 * hasPendingTimepoint): `hook` (the device's `onUnhandledFailure` option) when given, else one console
 * warning per reporter (per device). Never throws: an exception of the hook is dropped. Non-KeelErrors
 * are wrapped (INTERNAL, cause = the value).
 */
export function unhandledFailureReporter(
  hook: UnhandledFailureHook | undefined,
  device: string,
): UnhandledFailureReport {
  let warned = false;
  return (error: unknown, operation: string): void => {
    const failure = KeelError.is(error)
      ? error
      : new KeelError(ErrorCode.INTERNAL, `${operation}: ${reasonOf(error)}`, { cause: error });
    if (hook) {
      try {
        hook(failure, { device, operation });
      } catch {
        // The caller's hook may not disturb the device.
      }
      return;
    }
    if (warned) return;
    warned = true;
    globalThis.console?.warn(
      `${device}: ${operation} failed but no signal timepoint could deliver it (its values already passed, or no signal fence); pass onUnhandledFailure to handle these (further ones on this device are not printed): ${failure.code}: ${failure.message}`,
    );
  };
}

/**
 * Completes an operation's signal: with no `error`, signals its pending timepoints; else fails every
 * timepoint with `error` (failTimepoints) and, when no timepoint of it was still pending
 * (hasPendingTimepoint: nobody waiting for this operation can hear of the failure), reports it through
 * `report` with `operation` (e.g. "device 'cpu' queueExecute"). Not reported: ABORTED (a failed wait
 * propagated: the original failure was delivered, or reported, where it happened), and anything when
 * `report` is undefined (a device passes undefined once destroyed or lost: those failures are the
 * device's, announced by `destroy()` and `lost`). Never throws: returns what a semaphore threw, else
 * undefined. Allocation-free.
 */
export function completeSignal(
  signal: Fence,
  error: unknown,
  operation: string,
  report: UnhandledFailureReport | undefined,
): unknown {
  if (error === undefined) return signalPendingTimepoints(signal);
  const undelivered =
    !!report && !(KeelError.is(error) && error.code === ErrorCode.ABORTED) && !hasPendingTimepoint(signal);
  const thrown = failTimepoints(signal, error);
  if (undelivered) report(error, operation);
  return thrown;
}

/** Fails an operation's signal with `error` and reports it when undelivered: `completeSignal` with an error. */
export function failOperation(
  signal: Fence,
  error: unknown,
  operation: string,
  report: UnhandledFailureReport | undefined,
): unknown {
  return completeSignal(signal, error, operation, report);
}
