/**
 * The one wait engine of this package (internal).
 *
 * - `TimedWait`: what every pending promise wait holds beyond its promise: the deadline timer (re-armed
 *   past setTimeout's limit) and the abort subscription; a semaphore's waiter and a fence wait
 *   (wait-group.ts) both extend it, so that timeout, abort and release are written once.
 * - `WaiterQueue`: the waiters of one semaphore, kept sorted by value (FIFO among equal values), so that
 *   signalling settles them in value order and a cancelled, timed-out or aborted wait is removed at
 *   once rather than left for later. Inserting scans from the end (waits usually come in value order).
 *
 * A queue does not own the payload: it reads `value` and `failure` from its source whenever it
 * dispatches, so the same code serves a plain field (TimelineSemaphore) and shared memory
 * (SharedTimelineSemaphore). Waits allocate no closure: the promise executor and the timer callback
 * are module functions, the waiter is the abort subscriber and the timer's argument.
 */
import { type AbortSubscriber, subscribeAbort, unsubscribeAbort } from './abort-hub';
import { ErrorCode, KeelError } from './keel-error';
import type { ReachedCallback, Registration } from './semaphore';
import {
  abortSignalOf,
  checkCallback,
  checkWaitOptions,
  invalidPayload,
  isPayload,
  type WaitOptions,
} from './validate';

/** What a queue reads from the semaphore it serves. */
export interface WaiterSource {
  readonly label: string;
  readonly value: number;
  readonly failure: KeelError | undefined;
}

/** Notifications to the owning semaphore when the queue changes between empty and non-empty. */
export interface WaiterHooks {
  /** The queue went from empty to one waiter. */
  pending(): void;
  /** The queue became empty (settled, cancelled, timed out or aborted). */
  idle(): void;
}

/** setTimeout's largest delay (2^31 − 1 ms, about 24.8 days); longer deadlines re-arm. */
// A const enum: the build writes the value in place (a top-level const stays a variable).
enum Limit {
  MAX_TIMER_MS = 0x7fffffff,
}

/** Shared by every wait that is already satisfied (a resolved promise carries no state). */
const RESOLVED: Promise<void> = /* @__PURE__ */ Promise.resolve();

/** Turns a fence wait's index into `void` (`.then(ignore)`). */
export function ignore(): void {}

export const NOOP_REGISTRATION: Registration = /* @__PURE__ */ Object.freeze({ cancel(): void {} });

// The promise executor stores its functions here, so creating a wait allocates no closure of its own.
// `never`: the same executor serves Promise<void> and Promise<number>; the taker casts.
export let capturedResolve: ((value: never) => void) | undefined;
export let capturedReject: ((reason: unknown) => void) | undefined;
export function capture(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** Takes what the last `capture` stored (one promise, one taker). */
export function takeCaptured(): void {
  capturedResolve = capturedReject = undefined;
}

/** Runs `callback(failure)` (or `callback()`); an exception is reported as an event listener's is. */
export function invoke(callback: ReachedCallback, failure?: KeelError): void {
  try {
    if (!failure) callback();
    else callback(failure);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

/** ABORTED: `what` ended because `who` failed (cause = the failure). */
export function abortedError(what: string, who: string, failure: KeelError): KeelError {
  return new KeelError(
    ErrorCode.ABORTED,
    `${what}: aborted because ${who} failed (${failure.code}: ${failure.message})`,
    { cause: failure },
  );
}

/** DEADLINE_EXCEEDED: `what` timed out; `state` shows what it still waited for. */
export function deadlineError(what: string, timeoutMs: number | undefined, state: string): KeelError {
  return new KeelError(ErrorCode.DEADLINE_EXCEEDED, `${what}: timed out after ${timeoutMs} ms (${state})`);
}

function cancelledError(what: string, signal: AbortSignal): KeelError {
  return new KeelError(ErrorCode.CANCELLED, `${what}: cancelled by its abort signal`, {
    cause: signal.reason,
  });
}

/**
 * Checks given wait options: returns the error to reject with (INVALID_ARGUMENT, or CANCELLED for an
 * already-aborted signal), else undefined.
 */
export function checkWait(what: string, options: WaitOptions): KeelError | undefined {
  const invalid = checkWaitOptions(what, options);
  if (invalid) return invalid;
  const signal = abortSignalOf(options);
  return signal?.aborted ? cancelledError(what, signal) : undefined;
}

/**
 * A pending promise wait's deadline and abort subscription. `arm` starts them, `release` drops them;
 * at the deadline or on abort, `end` gets the error to reject with (DEADLINE_EXCEEDED or CANCELLED).
 */
export abstract class TimedWait implements AbortSubscriber {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timeoutMs: number | undefined;
  /** Milliseconds of the deadline beyond the armed timer. */
  #remainingMs = 0;
  #signal: AbortSignal | undefined;

  /** True until the wait settles, times out, is aborted or cancelled. */
  abstract get live(): boolean;
  /** The wait, for messages: "semaphore 'a': wait for 3", "waitAll". */
  abstract what(): string;
  /** What it still waits for, for the DEADLINE_EXCEEDED message. */
  abstract state(): string;
  /** Ends the wait (leaves the queue, drops registrations, releases) and rejects with `error`. */
  abstract end(error: KeelError): void;

  /**
   * Starts the deadline and the abort subscription of checked options — unless the wait has already
   * settled: a semaphore's waiter is queued before it is armed, and can be settled in between (by a
   * signal from another thread that the queue's `pending` hook picks up, or by an options getter).
   */
  arm(options: WaitOptions | undefined): void {
    const timeoutMs = options?.timeoutMs;
    const signal = options && abortSignalOf(options);
    if (!this.live) return;
    if (timeoutMs !== undefined && timeoutMs !== Infinity) {
      this.#timeoutMs = this.#remainingMs = timeoutMs;
      TimedWait.#onTimer(this);
    }
    if (signal) {
      this.#signal = signal;
      subscribeAbort(signal, this);
    }
  }

  release(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#signal) {
      unsubscribeAbort(this.#signal, this);
      this.#signal = undefined;
    }
  }

  /** AbortSubscriber: the wait's AbortSignal aborted. */
  onAbort(): void {
    const signal = this.#signal;
    if (this.live && signal) this.end(cancelledError(this.what(), signal));
  }

  /** Arms the next stretch of the deadline, or ends the wait once it has passed (a timer callback). */
  static #onTimer(wait: TimedWait): void {
    if (!wait.live) return;
    const next = Math.min(wait.#remainingMs, Limit.MAX_TIMER_MS);
    if (next > 0) {
      wait.#remainingMs -= next;
      wait.#timer = setTimeout(TimedWait.#onTimer, next, wait);
    } else {
      wait.#timer = undefined;
      wait.end(deadlineError(wait.what(), wait.#timeoutMs, wait.state()));
    }
  }
}

function waitWhat(source: WaiterSource, value: number): string {
  return `semaphore '${source.label}': wait for ${value}`;
}

/**
 * One queued wait: a promise wait (resolve/reject set) or an `onReached` registration (callback set);
 * all three are cleared once it leaves the queue.
 */
class Waiter extends TimedWait implements Registration {
  readonly #queue: WaiterQueue;
  declare readonly value: number;
  #callback: ReachedCallback | undefined;
  #resolve: (() => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(queue: WaiterQueue, value: number, callback: ReachedCallback | undefined) {
    super();
    this.#queue = queue;
    this.value = value;
    this.#callback = callback;
    this.#resolve = capturedResolve as (() => void) | undefined;
    this.#reject = capturedReject;
    takeCaptured();
  }

  get live(): boolean {
    return !!(this.#callback ?? this.#resolve);
  }

  what(): string {
    return waitWhat(this.#queue.source, this.value);
  }

  state(): string {
    return `payload ${this.#queue.source.value}`;
  }

  cancel(): void {
    if (this.live) this.#queue.remove(this);
  }

  end(error: KeelError): void {
    const reject = this.#reject;
    this.#queue.remove(this);
    reject?.(error);
  }

  /** Drops the timer, the abort listener and the callbacks. */
  override release(): void {
    super.release();
    this.#callback = this.#resolve = this.#reject = undefined;
  }

  /** Settles the waiter, which has left the queue: reached (`failure` undefined) or aborted. */
  settle(failure: KeelError | undefined): void {
    const callback = this.#callback;
    const resolve = this.#resolve;
    const reject = this.#reject;
    this.release();
    if (callback) invoke(callback, failure);
    else if (!failure) resolve?.();
    else reject?.(abortedError(this.what(), 'the semaphore', failure));
  }
}

export class WaiterQueue {
  declare readonly source: WaiterSource;
  readonly #hooks: WaiterHooks | undefined;
  /** Sorted by value; FIFO among equal values. */
  readonly #list: Waiter[] = [];
  #dispatching = false;

  constructor(source: WaiterSource, hooks?: WaiterHooks) {
    this.source = source;
    this.#hooks = hooks;
  }

  /** Waiters still queued. */
  get size(): number {
    return this.#list.length;
  }

  /** True while `dispatch` runs (callbacks may re-enter). */
  get dispatching(): boolean {
    return this.#dispatching;
  }

  /** True if the earliest waiter can be settled now (reached, or the source failed). */
  dispatchable(): boolean {
    const top = this.#list[0];
    return !!top && (!!this.source.failure || top.value <= this.source.value);
  }

  wait(value: number, options: WaitOptions | undefined): Promise<void> {
    const source = this.source;
    if (!isPayload(value)) return Promise.reject(invalidPayload(`semaphore '${source.label}': wait`, value));
    const invalid = options === undefined ? undefined : checkWait(waitWhat(source, value), options);
    if (invalid) return Promise.reject(invalid);
    const failure = source.failure;
    if (failure) return Promise.reject(abortedError(waitWhat(source, value), 'the semaphore', failure));
    if (source.value >= value) return RESOLVED;
    if (options?.timeoutMs === 0)
      return Promise.reject(deadlineError(waitWhat(source, value), 0, `payload ${source.value}`));
    const promise = new Promise<void>(capture);
    const waiter = new Waiter(this, value, undefined);
    this.#push(waiter);
    waiter.arm(options);
    return promise;
  }

  onReached(value: number, callback: ReachedCallback): Registration {
    const source = this.source;
    if (!isPayload(value)) throw invalidPayload(`semaphore '${source.label}': onReached`, value);
    checkCallback(`semaphore '${source.label}': onReached`, callback);
    if (!this.#dispatching) {
      const failure = source.failure;
      if (failure || source.value >= value) {
        invoke(callback, failure);
        return NOOP_REGISTRATION;
      }
    }
    // Inside a dispatch of this queue the waiter is queued even if reached: the running dispatch
    // settles it in value order.
    const waiter = new Waiter(this, value, callback);
    this.#push(waiter);
    return waiter;
  }

  /**
   * Settles, in (value, arrival) order, every waiter the source's payload reaches — or all of them if
   * the source failed. Re-entrant calls (from callbacks) return at once: the running loop re-reads the
   * payload and failure before each waiter, so it picks up their effects.
   */
  dispatch(): void {
    const list = this.#list;
    if (this.#dispatching || list.length === 0) return;
    this.#dispatching = true;
    const source = this.source;
    try {
      while (this.dispatchable()) {
        const top = list.shift() as Waiter;
        if (list.length === 0) this.#hooks?.idle();
        top.settle(source.failure);
      }
    } finally {
      this.#dispatching = false;
    }
  }

  /** Takes a queued waiter out and drops its timer and abort listener (no settlement). */
  remove(waiter: Waiter): void {
    const list = this.#list;
    const index = list.indexOf(waiter);
    if (index < 0) return;
    list.copyWithin(index, index + 1).pop();
    waiter.release();
    if (list.length === 0) this.#hooks?.idle();
  }

  #push(waiter: Waiter): void {
    const list = this.#list;
    let i = list.length;
    // After every waiter of a lower or equal value.
    for (; i > 0 && (list[i - 1] as Waiter).value > waiter.value; i--) list[i] = list[i - 1] as Waiter;
    list[i] = waiter;
    if (list.length === 1) this.#hooks?.pending();
  }
}
