/**
 * The waiter queue behind every semaphore of this package (internal): a binary min-heap of waiters
 * keyed by (value, arrival), with O(log n) removal, so that signalling settles waiters in value order
 * (FIFO among equal values) and a cancelled wait is removed at once rather than left for later.
 *
 * A queue does not own the payload: it reads `value` and `failure` from its source whenever it
 * dispatches, so the same code serves a plain field (TimelineSemaphore) and shared memory
 * (SharedTimelineSemaphore).
 */
import { type AbortSubscriber, subscribeAbort, unsubscribeAbort } from './abort-hub';
import { ErrorCode, KeelError } from './keel-error';
import type { ReachedCallback, Registration } from './semaphore';
import {
  abortSignalOf,
  checkWaitOptions,
  describeValue,
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

type TimerHandle = ReturnType<typeof setTimeout>;

/** setTimeout's largest delay (2^31 − 1 ms, about 24.8 days); longer deadlines re-arm. */
const MAX_TIMER_MS = 0x7fffffff;

/** Shared by every wait that is already satisfied (a resolved promise carries no state). */
const RESOLVED: Promise<void> = /* @__PURE__ */ Promise.resolve();

const NOOP_REGISTRATION: Registration = /* @__PURE__ */ Object.freeze({ cancel(): void {} });

// The promise executor stores its functions here, so creating a wait allocates no closure of its own.
let capturedResolve: (() => void) | undefined;
let capturedReject: ((reason: unknown) => void) | undefined;
function capture(resolve: () => void, reject: (reason: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** Reports an exception of a callback the way an event listener's exception is reported. */
function report(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

function invoke(callback: ReachedCallback, failure: KeelError | undefined): void {
  try {
    if (failure === undefined) callback();
    else callback(failure);
  } catch (error) {
    report(error);
  }
}

/** The error a wait rejects with when its semaphore fails. */
export function abortedError(label: string, value: number, failure: KeelError): KeelError {
  return new KeelError(
    ErrorCode.ABORTED,
    `semaphore '${label}': wait for ${value} aborted because the semaphore failed (${failure.code}: ${failure.message})`,
    { cause: failure },
  );
}

function deadlineError(label: string, value: number, timeoutMs: number, payload: number): KeelError {
  return new KeelError(
    ErrorCode.DEADLINE_EXCEEDED,
    `semaphore '${label}': wait for ${value} timed out after ${timeoutMs} ms (payload ${payload})`,
  );
}

function cancelledError(label: string, value: number, signal: AbortSignal): KeelError {
  return new KeelError(
    ErrorCode.CANCELLED,
    `semaphore '${label}': wait for ${value} cancelled by its abort signal`,
    { cause: signal.reason },
  );
}

/**
 * One queued wait: a promise wait (resolve/reject set) or an `onReached` registration (callback set).
 * It is also the abort subscriber (`onAbort`, see abort-hub.ts) and the timer's argument, so that a wait with options
 * allocates no closure either.
 */
class Waiter implements Registration, AbortSubscriber {
  /** Position in the heap; -1 once it left the queue (settled or removed). */
  index = -1;
  timer: TimerHandle | undefined = undefined;
  /** Milliseconds of the deadline beyond the armed timer (deadlines longer than MAX_TIMER_MS). */
  remainingMs = 0;
  timeoutMs = 0;
  abortSignal: AbortSignal | undefined = undefined;

  constructor(
    readonly queue: WaiterQueue,
    readonly value: number,
    readonly seq: number,
    public callback: ReachedCallback | undefined,
    public resolve: (() => void) | undefined,
    public reject: ((reason: unknown) => void) | undefined,
  ) {}

  cancel(): void {
    if (this.index >= 0) this.queue.remove(this);
  }

  /** AbortSubscriber: the wait's AbortSignal aborted. */
  onAbort(): void {
    const signal = this.abortSignal;
    if (this.index < 0 || signal === undefined) return;
    const reject = this.reject;
    this.queue.remove(this);
    reject?.(cancelledError(this.queue.source.label, this.value, signal));
  }
}

function onWaiterTimeout(waiter: Waiter): void {
  if (waiter.index < 0) return;
  if (waiter.remainingMs > 0) {
    const next = Math.min(waiter.remainingMs, MAX_TIMER_MS);
    waiter.remainingMs -= next;
    waiter.timer = setTimeout(onWaiterTimeout, next, waiter);
    return;
  }
  waiter.timer = undefined;
  const reject = waiter.reject;
  const { source } = waiter.queue;
  waiter.queue.remove(waiter);
  reject?.(deadlineError(source.label, waiter.value, waiter.timeoutMs, source.value));
}

function before(a: Waiter, b: Waiter): boolean {
  return a.value < b.value || (a.value === b.value && a.seq < b.seq);
}

export class WaiterQueue {
  readonly source: WaiterSource;
  readonly #hooks: WaiterHooks | undefined;
  readonly #heap: Waiter[] = [];
  #seq = 0;
  #dispatching = false;

  constructor(source: WaiterSource, hooks?: WaiterHooks) {
    this.source = source;
    this.#hooks = hooks;
  }

  /** Waiters still queued. */
  get size(): number {
    return this.#heap.length;
  }

  /** True while `dispatch` runs (callbacks may re-enter). */
  get dispatching(): boolean {
    return this.#dispatching;
  }

  /** True if the earliest waiter can be settled now (reached, or the source failed). */
  dispatchable(): boolean {
    const top = this.#heap[0];
    return top !== undefined && (this.source.failure !== undefined || top.value <= this.source.value);
  }

  wait(value: number, options: WaitOptions | undefined): Promise<void> {
    const source = this.source;
    if (!isPayload(value)) return Promise.reject(invalidPayload(`semaphore '${source.label}': wait`, value));
    let timeoutMs: number | undefined;
    let signal: AbortSignal | undefined;
    if (options !== undefined) {
      const invalid = checkWaitOptions(`semaphore '${source.label}': wait for ${value}`, options);
      if (invalid !== undefined) return Promise.reject(invalid);
      timeoutMs = options.timeoutMs;
      signal = abortSignalOf(options);
      if (signal?.aborted) return Promise.reject(cancelledError(source.label, value, signal));
    }
    const failure = source.failure;
    if (failure !== undefined) return Promise.reject(abortedError(source.label, value, failure));
    if (source.value >= value) return RESOLVED;
    if (timeoutMs === 0) return Promise.reject(deadlineError(source.label, value, 0, source.value));

    const promise = new Promise<void>(capture);
    const waiter = new Waiter(this, value, this.#seq++, undefined, capturedResolve, capturedReject);
    capturedResolve = undefined;
    capturedReject = undefined;
    if (timeoutMs !== undefined && timeoutMs !== Number.POSITIVE_INFINITY) {
      const first = Math.min(timeoutMs, MAX_TIMER_MS);
      waiter.timeoutMs = timeoutMs;
      waiter.remainingMs = timeoutMs - first;
      waiter.timer = setTimeout(onWaiterTimeout, first, waiter);
    }
    if (signal !== undefined) {
      waiter.abortSignal = signal;
      subscribeAbort(signal, waiter);
    }
    this.#push(waiter);
    return promise;
  }

  onReached(value: number, callback: ReachedCallback): Registration {
    const source = this.source;
    if (!isPayload(value)) throw invalidPayload(`semaphore '${source.label}': onReached`, value);
    if (typeof callback !== 'function') {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `semaphore '${source.label}': onReached callback must be a function, got ${describeValue(callback)}`,
      );
    }
    if (!this.#dispatching) {
      const failure = source.failure;
      if (failure !== undefined || source.value >= value) {
        invoke(callback, failure);
        return NOOP_REGISTRATION;
      }
    }
    // Inside a dispatch of this queue the waiter is queued even if reached: the running dispatch
    // settles it in value order.
    const waiter = new Waiter(this, value, this.#seq++, callback, undefined, undefined);
    this.#push(waiter);
    return waiter;
  }

  /**
   * Settles, in (value, arrival) order, every waiter the source's payload reaches — or all of them if
   * the source failed. Re-entrant calls (from callbacks) return at once: the running loop re-reads the
   * payload and failure before each waiter, so it picks up their effects.
   */
  dispatch(): void {
    const heap = this.#heap;
    if (this.#dispatching || heap.length === 0) return;
    this.#dispatching = true;
    const source = this.source;
    try {
      while (heap.length > 0) {
        const top = heap[0] as Waiter;
        const failure = source.failure;
        if (failure === undefined && top.value > source.value) break;
        this.#removeAt(0);
        this.#settle(top, failure);
      }
    } finally {
      this.#dispatching = false;
    }
  }

  /** Takes a queued waiter out and drops its timer and abort listener (no settlement). */
  remove(waiter: Waiter): void {
    if (waiter.index < 0) return;
    this.#removeAt(waiter.index);
    this.#release(waiter);
  }

  #settle(waiter: Waiter, failure: KeelError | undefined): void {
    const { callback, resolve, reject } = waiter;
    this.#release(waiter);
    if (callback !== undefined) invoke(callback, failure);
    else if (failure === undefined) resolve?.();
    else reject?.(abortedError(this.source.label, waiter.value, failure));
  }

  #release(waiter: Waiter): void {
    if (waiter.timer !== undefined) {
      clearTimeout(waiter.timer);
      waiter.timer = undefined;
    }
    if (waiter.abortSignal !== undefined) {
      unsubscribeAbort(waiter.abortSignal, waiter);
      waiter.abortSignal = undefined;
    }
    waiter.callback = undefined;
    waiter.resolve = undefined;
    waiter.reject = undefined;
  }

  #push(waiter: Waiter): void {
    const heap = this.#heap;
    waiter.index = heap.length;
    heap.push(waiter);
    this.#siftUp(waiter.index);
    if (heap.length === 1) this.#hooks?.pending();
  }

  #removeAt(index: number): void {
    const heap = this.#heap;
    const removed = heap[index] as Waiter;
    const last = heap.pop() as Waiter;
    removed.index = -1;
    if (last !== removed) {
      heap[index] = last;
      last.index = index;
      if (index > 0 && before(last, heap[(index - 1) >> 1] as Waiter)) this.#siftUp(index);
      else this.#siftDown(index);
    }
    if (heap.length === 0) this.#hooks?.idle();
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    const item = heap[index] as Waiter;
    let i = index;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = heap[parentIndex] as Waiter;
      if (!before(item, parent)) break;
      heap[i] = parent;
      parent.index = i;
      i = parentIndex;
    }
    heap[i] = item;
    item.index = i;
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    const n = heap.length;
    const item = heap[index] as Waiter;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      let childItem = heap[left] as Waiter;
      if (right < n) {
        const rightItem = heap[right] as Waiter;
        if (before(rightItem, childItem)) {
          child = right;
          childItem = rightItem;
        }
      }
      if (!before(childItem, item)) break;
      heap[i] = childItem;
      childItem.index = i;
      i = child;
    }
    heap[i] = item;
    item.index = i;
  }
}
