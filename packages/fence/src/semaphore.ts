/**
 * The contract every timeline semaphore of Keel satisfies (`TimelineSemaphore` in one thread,
 * `SharedTimelineSemaphore` across threads), and the one `Fence` and the waits are written against.
 */
import { branded, type KeelError } from './keel-error';
import type { WaitOptions } from './validate';

/**
 * The brand that marks an object as a Keel semaphore. `Symbol.for` makes it the same symbol in every copy
 * of this package loaded in a realm, so fences accept semaphores of a duplicated copy. Implementations
 * outside this package opt in by declaring `readonly [SEMAPHORE_BRAND] = true`.
 */
export const SEMAPHORE_BRAND: unique symbol = Symbol.for('@keel/Semaphore') as never;

/**
 * Runs when a timepoint is reached (`error` undefined) or when its semaphore fails (`error` = the
 * failure, exactly as `semaphore.failure` holds it — not wrapped). Never both, and at most once.
 */
export type ReachedCallback = (error?: KeelError) => void;

/** A pending `onReached` registration. */
export interface Registration {
  /**
   * Removes the registration so its callback never runs; it leaves nothing behind. Idempotent, and a
   * no-op once the callback has run.
   */
  cancel(): void;
}

/**
 * A timeline semaphore: a payload (a non-negative safe integer) that only grows, or a failure that
 * ends the timeline.
 *
 * - `signal(v)` requires `v` > current payload (INVALID_ARGUMENT otherwise, naming the semaphore and
 *   both values). After a failure every signal is a silent no-op.
 * - `fail(error)`: the first failure wins; later fails are ignored. Non-KeelError values are wrapped in a
 *   KeelError INTERNAL whose cause is the value.
 * - `wait(v)` resolves once payload ≥ v; rejects DEADLINE_EXCEEDED on timeout, CANCELLED on abort, and
 *   ABORTED (cause = the failure) if the semaphore is or becomes failed — also when `v` was reached
 *   before the failure: once failed, a timeline answers every wait with its failure. Checks run in this
 *   order: arguments, abort signal, failure, payload, `timeoutMs: 0`.
 * - Waiters of one semaphore (in one thread) are resolved in value order, FIFO among equal values.
 * - A wait that times out or is aborted leaves nothing behind: no queue entry, no abort listener,
 *   no timer (`pendingWaitCount` shows the queue).
 */
export interface Semaphore {
  readonly [SEMAPHORE_BRAND]: true;
  /** A name used in error messages. */
  readonly label: string;
  /** The current payload; never throws (a failed semaphore keeps its last payload). */
  readonly value: number;
  /** The failure, or undefined while the timeline is healthy. */
  readonly failure: KeelError | undefined;
  /**
   * Waits and `onReached` registrations of this object still queued (in this thread). Timed-out,
   * aborted, cancelled, resolved and rejected waits are not counted.
   */
  readonly pendingWaitCount: number;
  /** The payload, or throws the failure. */
  query(): number;
  /** Raises the payload to `value`, then wakes every waiter it satisfies (in value order). */
  signal(value: number): void;
  /** Fails the timeline: every pending and future wait rejects with ABORTED (cause = the failure). */
  fail(error: unknown): void;
  /** Resolves once payload ≥ `value` (see the contract above). */
  wait(value: number, options?: WaitOptions): Promise<void>;
  /**
   * The promise-free form of `wait`, for hot paths: `callback` runs synchronously inside the
   * `signal`/`fail` call that reaches `value` (in value order with the other waiters), or before
   * `onReached` returns if `value` is already reached or the semaphore already failed. A callback may
   * signal, fail, wait or register again (re-entrancy is safe); a registration made from inside a
   * callback of the same dispatch runs in value order before that `signal` returns. An exception thrown
   * by a callback does not disturb the other waiters: it is reported like an exception in an event
   * listener (re-thrown from a microtask).
   */
  onReached(value: number, callback: ReachedCallback): Registration;
}

/** True for any Keel semaphore (from any copy of this package in the realm). */
export function isSemaphore(value: unknown): value is Semaphore {
  return branded(value, SEMAPHORE_BRAND);
}
