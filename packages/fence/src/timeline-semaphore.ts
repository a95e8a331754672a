/**
 * A timeline semaphore for one thread (IREE's `iree_hal_semaphore_t` on the host): a payload that only
 * grows, waits that resolve in value order, and a sticky failure. For semaphores that other threads
 * signal or wait on, use SharedTimelineSemaphore.
 */
import type { KeelError } from './keel-error';
import { type ReachedCallback, type Registration, SEMAPHORE_BRAND, type Semaphore } from './semaphore';
import {
  type SemaphoreOptions,
  semaphoreLabel,
  semaphoreString,
  signalTooLow,
  toFailure,
} from './semaphore-support';
import { invalidPayload, isPayload, type WaitOptions } from './validate';
import { WaiterQueue } from './waiter-queue';

/**
 * The single-thread timeline semaphore. All operations are synchronous except `wait`; waiters and
 * `onReached` callbacks are settled inside the `signal`/`fail` call that satisfies them.
 */
export class TimelineSemaphore implements Semaphore {
  // Set in the constructor (see SharedTimelineSemaphore): keeps the class removable when unused.
  declare readonly [SEMAPHORE_BRAND]: true;
  declare readonly label: string;
  #value: number;
  #failure: KeelError | undefined = undefined;
  readonly #queue: WaiterQueue;

  /**
   * @param initialValue the starting payload, a non-negative safe integer (INVALID_ARGUMENT otherwise).
   */
  constructor(initialValue = 0, options?: SemaphoreOptions) {
    this[SEMAPHORE_BRAND] = true;
    this.label = semaphoreLabel('timeline', options);
    if (!isPayload(initialValue))
      throw invalidPayload(`semaphore '${this.label}': initial value`, initialValue);
    this.#value = initialValue;
    this.#queue = new WaiterQueue(this);
  }

  get value(): number {
    return this.#value;
  }

  get failure(): KeelError | undefined {
    return this.#failure;
  }

  /**
   * Waits and `onReached` registrations still queued on this semaphore. A wait that resolved,
   * rejected, timed out or was aborted, and a cancelled registration, are not counted: nothing of them
   * is left in the queue.
   */
  get pendingWaitCount(): number {
    return this.#queue.size;
  }

  query(): number {
    if (this.#failure) throw this.#failure;
    return this.#value;
  }

  /**
   * Raises the payload to `value` and settles, synchronously and in value order, every waiter it
   * reaches. `value` must be a non-negative safe integer greater than the current payload
   * (INVALID_ARGUMENT otherwise); once the semaphore failed, a signal is a silent no-op.
   */
  signal(value: number): void {
    if (!isPayload(value)) throw invalidPayload(`semaphore '${this.label}': signal`, value);
    if (this.#failure) return;
    if (value <= this.#value) throw signalTooLow(this.label, value, this.#value);
    this.#value = value;
    this.#queue.dispatch();
  }

  /**
   * Fails the timeline with `error` (a KeelError is kept as is, any other value is wrapped in an
   * INTERNAL KeelError whose cause is the value). The first failure wins; later calls are ignored.
   * Every pending waiter is rejected (or called back) synchronously.
   */
  fail(error: unknown): void {
    if (this.#failure) return;
    this.#failure = toFailure(this.label, error);
    this.#queue.dispatch();
  }

  wait(value: number, options?: WaitOptions): Promise<void> {
    return this.#queue.wait(value, options);
  }

  onReached(value: number, callback: ReachedCallback): Registration {
    return this.#queue.onReached(value, callback);
  }

  toString(): string {
    return semaphoreString('TimelineSemaphore', this);
  }
}
