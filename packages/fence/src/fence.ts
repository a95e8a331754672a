/**
 * Fences: immutable sets of timepoints, the currency of ordering in Keel (IREE's
 * `iree_hal_semaphore_list_t`). A queue operation waits on one fence and signals another.
 */
import type { KeelError } from './keel-error';
import { isSemaphore, type ReachedCallback, type Registration, type Semaphore } from './semaphore';
import { signalTooLow } from './semaphore-support';
import {
  checkCallback,
  describeValue,
  invalidArgument,
  invalidPayload,
  isPayload,
  type WaitOptions,
} from './validate';
import { waitForFences } from './wait-group';
import { ignore, invoke, NOOP_REGISTRATION } from './waiter-queue';

/** A point on a semaphore's timeline: reached once `semaphore.value >= value`. */
export interface Timepoint {
  readonly semaphore: Semaphore;
  readonly value: number;
}

function checkTimepoint(what: string, timepoint: unknown): Timepoint {
  if (typeof timepoint !== 'object' || timepoint === null)
    throw invalidArgument(`${what}: ${describeValue(timepoint)} is not a timepoint { semaphore, value }`);
  const { semaphore, value } = timepoint as { semaphore?: unknown; value?: unknown };
  if (!isSemaphore(semaphore)) {
    throw invalidArgument(
      `${what}: semaphore ${describeValue(semaphore)} is not a Keel semaphore (TimelineSemaphore or SharedTimelineSemaphore)`,
    );
  }
  if (!isPayload(value)) throw invalidPayload(`${what} on semaphore '${semaphore.label}': value`, value);
  return { semaphore, value };
}

/**
 * Merges timepoints keeping, per semaphore, one timepoint with the highest value, in order of first
 * appearance. Input timepoints must be valid and frozen; unchanged ones are reused, not copied.
 */
function merge(target: Timepoint[], timepoint: Timepoint): void {
  const n = target.length;
  for (let i = 0; i < n; i++) {
    const existing = target[i] as Timepoint;
    if (existing.semaphore === timepoint.semaphore) {
      if (timepoint.value > existing.value) target[i] = timepoint;
      return;
    }
  }
  target.push(timepoint);
}

/** Above this many timepoints, merging indexes semaphores in a Map instead of scanning. */
// A const enum: the build writes the value in place (a top-level const stays a variable).
enum Limit {
  SCAN_LIMIT = 32,
}

function mergeAll(groups: readonly (readonly Timepoint[])[]): Timepoint[] {
  let total = 0;
  for (const group of groups) total += group.length;
  const out: Timepoint[] = [];
  if (total <= Limit.SCAN_LIMIT) {
    for (const group of groups) for (const tp of group) merge(out, tp);
    return out;
  }
  const index = new Map<Semaphore, number>();
  for (const group of groups) {
    for (const tp of group) {
      const at = index.get(tp.semaphore);
      if (at === undefined) {
        index.set(tp.semaphore, out.length);
        out.push(tp);
      } else if (tp.value > (out[at] as Timepoint).value) {
        out[at] = tp;
      }
    }
  }
  return out;
}

/**
 * An immutable set of timepoints: each semaphore appears once, with the highest value it was given.
 * Timepoints keep the order in which their semaphores first appeared. `Fence.empty` is reached
 * at once and signals nothing.
 */
export class Fence {
  /** The fence with no timepoints: waits resolve at once, signal and fail do nothing. */
  static readonly empty: Fence = new Fence([]);

  readonly #timepoints: readonly Timepoint[];

  private constructor(timepoints: Timepoint[]) {
    this.#timepoints = Object.freeze(timepoints);
  }

  /**
   * A fence of the given timepoints (a semaphore given twice keeps its highest value). INVALID_ARGUMENT
   * if a semaphore is not a Keel semaphore or a value is not a non-negative safe integer.
   */
  static of(...timepoints: Timepoint[]): Fence {
    if (timepoints.length === 0) return Fence.empty;
    const out: Timepoint[] = [];
    for (let i = 0; i < timepoints.length; i++) {
      const tp = checkTimepoint(`Fence.of: timepoint ${i}`, timepoints[i]);
      merge(out, Object.freeze(tp));
    }
    return new Fence(out);
  }

  /**
   * The union of fences, reached when all of them are; per semaphore the highest value. Joining is
   * commutative, associative and idempotent as a set of timepoints (order: first appearance).
   */
  static join(...fences: Fence[]): Fence {
    const groups: (readonly Timepoint[])[] = [];
    for (let i = 0; i < fences.length; i++) {
      const fence = fences[i];
      if (!(fence instanceof Fence))
        throw invalidArgument(`Fence.join: argument ${i} (${describeValue(fence)}) is not a Fence`);
      if (fence.#timepoints.length > 0) groups.push(fence.#timepoints);
    }
    if (groups.length === 0) return Fence.empty;
    if (groups.length === 1) {
      for (const fence of fences) if (fence.#timepoints === groups[0]) return fence;
    }
    return new Fence(mergeAll(groups));
  }

  /** This fence plus `{ semaphore, value }` (a no-op copy if the semaphore already has a value ≥ it). */
  with(semaphore: Semaphore, value: number): Fence {
    const tp = Object.freeze(checkTimepoint('Fence.with', { semaphore, value }));
    const out = this.#timepoints.slice();
    merge(out, tp);
    return new Fence(out);
  }

  /** The timepoints (a frozen array of frozen objects). */
  get timepoints(): readonly Timepoint[] {
    return this.#timepoints;
  }

  get isEmpty(): boolean {
    return this.#timepoints.length === 0;
  }

  /**
   * Resolves once every timepoint is reached. Same options and errors as `Semaphore.wait`: ABORTED
   * (cause = that semaphore's failure) as soon as one of its semaphores fails, DEADLINE_EXCEEDED,
   * CANCELLED; leaves nothing behind when it times out or is aborted.
   */
  wait(options?: WaitOptions): Promise<void> {
    const timepoints = this.#timepoints;
    if (timepoints.length === 1) {
      const tp = timepoints[0] as Timepoint;
      return tp.semaphore.wait(tp.value, options);
    }
    return waitForFences('Fence.wait', [this], options).then(ignore);
  }

  /**
   * Signals every timepoint. All are checked first: if a (healthy) semaphore is already at or past its
   * value, nothing is signalled and INVALID_ARGUMENT is thrown. Failed semaphores are skipped (a signal
   * after failure is a no-op).
   */
  signal(): void {
    const timepoints = this.#timepoints;
    for (const tp of timepoints) {
      const current = tp.semaphore.value;
      if (!tp.semaphore.failure && tp.value <= current)
        throw signalTooLow(tp.semaphore.label, tp.value, current, 'Fence.signal: ');
    }
    for (const tp of timepoints) tp.semaphore.signal(tp.value);
  }

  /** Fails every semaphore of the fence with `error` (the first failure of each semaphore wins). */
  fail(error: unknown): void {
    for (const tp of this.#timepoints) tp.semaphore.fail(error);
  }

  /** 'signaled' when every timepoint is reached, else 'pending'; throws the first failure found. */
  query(): 'signaled' | 'pending' {
    let state: 'signaled' | 'pending' = 'signaled';
    for (const tp of this.#timepoints) {
      const failure = tp.semaphore.failure;
      if (failure) throw failure;
      if (tp.semaphore.value < tp.value) state = 'pending';
    }
    return state;
  }

  /**
   * The promise-free form of `wait`: `callback()` once every timepoint is reached, or
   * `callback(failure)` at the first failure among them; at most once. Runs synchronously inside the
   * signal/fail that completes it, or before `onReached` returns if already complete (see
   * `Semaphore.onReached` for re-entrancy). `cancel()` drops every registration it made.
   */
  onReached(callback: ReachedCallback): Registration {
    const timepoints = this.#timepoints;
    checkCallback('Fence.onReached', callback);
    if (timepoints.length === 0) {
      invoke(callback);
      return NOOP_REGISTRATION;
    }
    if (timepoints.length === 1) {
      const tp = timepoints[0] as Timepoint;
      return tp.semaphore.onReached(tp.value, callback);
    }
    return new FenceRegistration(timepoints, callback);
  }

  toString(): string {
    return `Fence(${this.#timepoints.map((tp) => `${tp.semaphore.label}@${tp.value}`).join(', ')})`;
  }
}

/** Counts down the timepoints of a multi-timepoint fence; fails at the first failure. */
class FenceRegistration implements Registration {
  #remaining: number;
  #callback: ReachedCallback | undefined;
  readonly #registrations: Registration[] = [];

  constructor(timepoints: readonly Timepoint[], callback: ReachedCallback) {
    this.#remaining = timepoints.length;
    this.#callback = callback;
    const onOne = (error?: KeelError): void => this.#onOne(error);
    for (const tp of timepoints) {
      if (!this.#callback) break; // completed (failed) during registration
      this.#registrations.push(tp.semaphore.onReached(tp.value, onOne));
    }
    if (!this.#callback) this.cancel();
  }

  cancel(): void {
    this.#callback = undefined;
    const registrations = this.#registrations;
    for (const registration of registrations) registration.cancel();
    registrations.length = 0;
  }

  #onOne(error: KeelError | undefined): void {
    const callback = this.#callback;
    if (!callback) return;
    if (!error && --this.#remaining > 0) return;
    this.cancel();
    invoke(callback, error);
  }
}
