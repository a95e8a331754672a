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
 * The constructor's second argument: only this module has it, so `new Fence(...)` from JavaScript
 * (where `private` does not exist) cannot build an unchecked fence.
 */
const MINT: object = {};

/** `Fence.empty`, made on first use. */
let empty: Fence | undefined;

/**
 * An immutable set of timepoints: each semaphore appears once, with the highest value it was given.
 * Timepoints keep the order in which their semaphores first appeared. `Fence.empty` is reached
 * at once and signals nothing.
 */
export class Fence {
  readonly #timepoints: readonly Timepoint[];

  /** Build fences with `Fence.of`, `Fence.join` or `fence.with`; any other caller gets INVALID_ARGUMENT. */
  private constructor(timepoints: Timepoint[], mint: object) {
    if (mint !== MINT) {
      throw invalidArgument(
        'new Fence(): the constructor is private; build a fence with Fence.of(...timepoints), Fence.join(...fences) or fence.with(semaphore, value)',
      );
    }
    this.#timepoints = Object.freeze(timepoints);
  }

  /** The fence with no timepoints: waits resolve at once, signal and fail do nothing (read-only). */
  static get empty(): Fence {
    empty ??= new Fence([], MINT);
    return empty;
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
    return new Fence(out, MINT);
  }

  /**
   * The union of fences, reached when all of them are; per semaphore the highest value. Joining is
   * commutative, associative and idempotent as a set of timepoints (order: first appearance).
   */
  static join(...fences: Fence[]): Fence {
    return Fence.joinList(fences);
  }

  /**
   * `Fence.join` over a list of any length (spreading a very long list into `join` overflows the
   * stack); `waitAll` joins its fences with it.
   *
   * @internal
   */
  static joinList(fences: readonly Fence[]): Fence {
    const groups: (readonly Timepoint[])[] = [];
    for (let i = 0; i < fences.length; i++) {
      const fence = fences[i];
      if (!(fence instanceof Fence))
        throw invalidArgument(`Fence.join: argument ${i} (${describeValue(fence)}) is not a Fence`);
      const timepoints = fence.#timepoints;
      // The same fence again in a row adds nothing (joining is idempotent).
      if (timepoints.length > 0 && timepoints !== groups[groups.length - 1]) groups.push(timepoints);
    }
    if (groups.length === 0) return Fence.empty;
    if (groups.length === 1) {
      for (const fence of fences) if (fence.#timepoints === groups[0]) return fence;
    }
    return new Fence(mergeAll(groups), MINT);
  }

  /** This fence plus `{ semaphore, value }` (a no-op copy if the semaphore already has a value ≥ it). */
  with(semaphore: Semaphore, value: number): Fence {
    const tp = Object.freeze(checkTimepoint('Fence.with', { semaphore, value }));
    const out = this.#timepoints.slice();
    merge(out, tp);
    return new Fence(out, MINT);
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
   * (cause = that semaphore's failure) as soon as one of its semaphores fails — also one whose
   * timepoint was reached before it failed — DEADLINE_EXCEEDED,
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
   * `callback(failure)` at the first failure of any of its semaphores before that (reached timepoints
   * included: see FenceRegistration); at most once. Runs synchronously inside the
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

/** The largest payload: a registration for it runs only when its semaphore fails (or gets there). */
const WATCH_VALUE = Number.MAX_SAFE_INTEGER;

/** The first failure among the fence's semaphores, or undefined. */
function firstFailure(timepoints: readonly Timepoint[]): KeelError | undefined {
  for (const tp of timepoints) {
    const failure = tp.semaphore.failure;
    if (failure) return failure;
  }
  return undefined;
}

/**
 * Counts down the timepoints of a multi-timepoint fence and completes at the first failure of any of
 * its semaphores, also of one whose timepoint is already reached (once failed, a timeline answers every
 * wait with its failure). While the fence is pending, each reached semaphore carries a watch: a
 * registration at the largest payload, which in practice runs only on failure. A fence that completes
 * during registration (all reached, or one failed) sets no watch and allocates nothing more than before;
 * a pending timepoint costs one closure (it must know its semaphore to watch it once reached).
 */
class FenceRegistration implements Registration {
  readonly #timepoints: readonly Timepoint[];
  #remaining: number;
  #callback: ReachedCallback | undefined;
  /** Registrations of the timepoints, then the watches of reached ones. */
  readonly #registrations: Registration[] = [];
  #onWatch: ReachedCallback | undefined;
  /** A watch ran without failure (its semaphore reached the largest payload): check at completion. */
  #blind = false;

  constructor(timepoints: readonly Timepoint[], callback: ReachedCallback) {
    this.#timepoints = timepoints;
    this.#remaining = timepoints.length;
    this.#callback = callback;
    const registrations = this.#registrations;
    const onReached = (error?: KeelError): void => this.#onReached(error);
    for (const tp of timepoints) {
      if (!this.#callback) break; // completed (failed) during registration
      const { semaphore, value } = tp;
      registrations.push(
        semaphore.onReached(
          value,
          semaphore.value >= value ? onReached : (error) => this.#onPending(semaphore, error),
        ),
      );
    }
    if (!this.#callback) {
      this.cancel();
      return;
    }
    // Still pending: watch the semaphores whose timepoints are already reached.
    for (const tp of timepoints) {
      if (!this.#callback) break;
      if (tp.semaphore.value >= tp.value) this.#watch(tp.semaphore);
    }
  }

  cancel(): void {
    this.#callback = undefined;
    const registrations = this.#registrations;
    for (const registration of registrations) registration.cancel();
    registrations.length = 0;
  }

  /** A timepoint that was reached at registration. */
  #onReached(error: KeelError | undefined): void {
    if (!this.#callback) return;
    if (error || --this.#remaining === 0) this.#complete(error);
  }

  /** A timepoint that was pending at registration: once reached, its semaphore is watched. */
  #onPending(semaphore: Semaphore, error: KeelError | undefined): void {
    if (!this.#callback) return;
    if (error || --this.#remaining === 0) this.#complete(error);
    else this.#watch(semaphore);
  }

  #watch(semaphore: Semaphore): void {
    this.#onWatch ??= (error) => {
      if (error) this.#complete(error);
      else this.#blind = true;
    };
    this.#registrations.push(semaphore.onReached(WATCH_VALUE, this.#onWatch));
  }

  #complete(error: KeelError | undefined): void {
    const callback = this.#callback;
    if (!callback) return;
    const failure = error ?? (this.#blind ? firstFailure(this.#timepoints) : undefined);
    this.cancel();
    invoke(callback, failure);
  }
}
