/**
 * A timeline semaphore in a SharedArrayBuffer: every thread holding its `handle` signals, fails and waits
 * on it directly, without a round trip through another thread's event loop (IREE's host semaphores
 * shared by the task system's workers).
 *
 * Shared-memory layout (1 056 bytes, little or big endian as the platform's typed arrays):
 *
 * | bytes     | type         | content                                                              |
 * | --------- | ------------ | -------------------------------------------------------------------- |
 * | 0 – 7     | BigInt64     | the word: payload in bits 0–52, FAILED in bit 62                     |
 * | 8 – 11    | Int32        | epoch: +1 after every signal and fail, the address waits sleep on    |
 * | 12 – 15   | Int32        | failure claim: 0, then 1 once a thread has started to fail it        |
 * | 16 – 19   | Int32        | failure code, as 1 + its index in ERROR_CODES (0: none)            |
 * | 20 – 23   | Int32        | failure message length in bytes                                      |
 * | 24 – 27   | Int32        | flags: bit 0 = the message was truncated                             |
 * | 28 – 31   | Int32        | magic 0x4B4C5331 ('KLS1'): layout version, checked by `fromHandle`    |
 * | 32 – 1055 | Uint8[1024]  | failure message, UTF-8, cut at a character boundary                  |
 *
 * Payload and failure live in one 64-bit word so that signal and fail are one compare-exchange each:
 * a signal can neither lower the payload (two threads racing) nor land after the failure. A failing
 * thread first claims the failure, writes code and message, and only then sets FAILED; a thread that
 * sees FAILED therefore sees the complete message.
 */
import { ERROR_CODES, ErrorCode, KeelError } from './keel-error';
import { releaseKeepAlive, retainKeepAlive } from './keep-alive';
import { type ReachedCallback, type Registration, SEMAPHORE_BRAND, type Semaphore } from './semaphore';
import {
  type SemaphoreOptions,
  semaphoreLabel,
  semaphoreString,
  signalTooLow,
  toFailure,
} from './semaphore-support';
import {
  checkWaitOptions,
  describeValue,
  invalidArgument,
  invalidPayload,
  isPayload,
  type WaitOptions,
  type WaitSyncOptions,
} from './validate';
import { abortedError, deadlineError, WaiterQueue } from './waiter-queue';

/** The structured-cloneable identity of a shared semaphore: post it to a worker, then `fromHandle`. */
export interface SharedSemaphoreHandle {
  readonly buffer: SharedArrayBuffer;
  readonly label: string;
}

/** Bytes of the failure message region; longer messages are cut (at a UTF-8 character boundary). */
export const SHARED_MESSAGE_CAPACITY = 1024;
/** Bytes of a shared semaphore's SharedArrayBuffer: a 32-byte header, then the message region. */
export const SHARED_SEMAPHORE_BYTES = 1056;

// Module-level values are literals or marked pure, so that a bundle which does not use this class
// (e.g. one that only needs TimelineSemaphore) drops the whole module.
const PAYLOAD_MASK = 0x1f_ffff_ffff_ffffn; // (1n << 53n) - 1n
const FAILED_BIT = 0x4000_0000_0000_0000n; // 1n << 62n

/** The layout's numbers (a const enum: the compiler writes the values in place). */
enum L {
  // Int32 indices.
  EPOCH = 2,
  CLAIM = 3,
  CODE = 4,
  LENGTH = 5,
  FLAGS = 6,
  MAGIC = 7,
  MESSAGE_OFFSET = 32,
  MAGIC_VALUE = 0x4b4c5331,
  FLAG_TRUNCATED = 1,
}

const HAS_WAIT_ASYNC = /* @__PURE__ */ (() => typeof Atomics.waitAsync === 'function')();

let textEncoder: TextEncoder | undefined;
let textDecoder: TextDecoder | undefined;

// fromHandle passes the handle to the constructor through this slot (the constructor stays public
// with the same signature as TimelineSemaphore's).
let attaching: SharedSemaphoreHandle | undefined;

/**
 * A timeline semaphore whose state is in shared memory (see the layout above). Same contract as
 * TimelineSemaphore; in addition:
 *
 * - Waits and `onReached` registrations are per object and per thread: a signal from this object
 *   settles this object's waiters synchronously; waiters elsewhere (other threads, or other objects
 *   attached to the same buffer) are woken through `Atomics.notify` and settle in their own thread's
 *   event loop, in value order.
 * - While this object has a pending wait or registration, it keeps the thread's event loop alive (a
 *   pending `Atomics.waitAsync` alone does not).
 * - A failure crosses threads as its code and UTF-8 message (at most SHARED_MESSAGE_CAPACITY bytes,
 *   then cut and marked with '…'); the stack and cause stay in the failing thread. The object that
 *   failed it keeps its own error object; other objects see a KeelError with the same code and message.
 * - After the last pending wait of this object times out or is aborted, its `Atomics.waitAsync` may
 *   stay armed until the next signal or fail (no timer, no listener, does not keep the thread alive).
 */
export class SharedTimelineSemaphore implements Semaphore {
  // Set in the constructor: a computed class field is evaluated at class definition, which bundlers
  // count as a side effect that keeps the class in bundles that never use it. (`declare` fields are
  // only assigned in the constructor: the build then emits no field definition besides.)
  declare readonly [SEMAPHORE_BRAND]: true;
  declare readonly label: string;
  /** Post this to another thread and attach there with `SharedTimelineSemaphore.fromHandle`. */
  declare readonly handle: SharedSemaphoreHandle;
  readonly #word: BigInt64Array<SharedArrayBuffer>;
  readonly #i32: Int32Array<SharedArrayBuffer>;
  readonly #queue: WaiterQueue;
  #failure: KeelError | undefined = undefined;
  /** A wake-up (Atomics.waitAsync or, without it, a poll timer) is outstanding. */
  #armed = false;
  readonly #onWake = (): void => {
    this.#armed = false;
    this.#settle();
  };

  /**
   * Creates a semaphore in a new SharedArrayBuffer. FAILED_PRECONDITION where SharedArrayBuffer is
   * unavailable (a browser page without cross-origin isolation).
   */
  constructor(initialValue = 0, options?: SemaphoreOptions) {
    this[SEMAPHORE_BRAND] = true;
    const attach = attaching;
    attaching = undefined;
    let buffer: SharedArrayBuffer;
    if (attach) {
      buffer = attach.buffer;
      this.label = attach.label;
    } else {
      this.label = semaphoreLabel('shared', options);
      if (!isPayload(initialValue))
        throw invalidPayload(`semaphore '${this.label}': initial value`, initialValue);
      if (typeof SharedArrayBuffer !== 'function') {
        throw new KeelError(
          ErrorCode.FAILED_PRECONDITION,
          'SharedTimelineSemaphore: SharedArrayBuffer is unavailable (in browsers, serve the page cross-origin ' +
            'isolated: COOP "same-origin", COEP "require-corp")',
        );
      }
      buffer = new SharedArrayBuffer(SHARED_SEMAPHORE_BYTES);
    }
    this.#word = new BigInt64Array(buffer, 0, 1);
    this.#i32 = new Int32Array(buffer, 0, L.MESSAGE_OFFSET / 4);
    if (!attach) {
      this.#word[0] = BigInt(initialValue);
      Atomics.store(this.#i32, L.MAGIC, L.MAGIC_VALUE);
    }
    this.handle = Object.freeze({ buffer, label: this.label });
    this.#queue = new WaiterQueue(this, {
      pending: () => {
        retainKeepAlive();
        this.#settle();
      },
      idle: releaseKeepAlive,
    });
  }

  /**
   * Attaches to a semaphore created in another thread (or this one) from its `handle`. Each call
   * returns a new object over the same shared state. INVALID_ARGUMENT if `handle` is not a shared
   * semaphore handle of this layout version.
   */
  static fromHandle(handle: SharedSemaphoreHandle): SharedTimelineSemaphore {
    const h = handle as Partial<SharedSemaphoreHandle> | null | undefined;
    const buffer = h?.buffer;
    if (
      typeof SharedArrayBuffer !== 'function' ||
      !(buffer instanceof SharedArrayBuffer) ||
      buffer.byteLength !== SHARED_SEMAPHORE_BYTES ||
      typeof h?.label !== 'string' ||
      Atomics.load(new Int32Array(buffer, 0, L.MESSAGE_OFFSET / 4), L.MAGIC) !== L.MAGIC_VALUE
    ) {
      throw invalidArgument(
        `SharedTimelineSemaphore.fromHandle: ${describeValue(handle)} is not a shared semaphore handle of ` +
          `this @keel/fence version ({ buffer: SharedArrayBuffer of ${SHARED_SEMAPHORE_BYTES} bytes, label: string })`,
      );
    }
    attaching = { buffer, label: h.label };
    return new SharedTimelineSemaphore();
  }

  get value(): number {
    return Number(Atomics.load(this.#word, 0) & PAYLOAD_MASK);
  }

  get failure(): KeelError | undefined {
    if (this.#failure) return this.#failure;
    if ((Atomics.load(this.#word, 0) & FAILED_BIT) === 0n) return undefined;
    this.#failure = this.#readFailure();
    return this.#failure;
  }

  /**
   * Waits and `onReached` registrations still queued on this object in this thread (not counting other
   * threads or other objects attached to the same buffer, nor timed-out, aborted or cancelled ones).
   * When it drops to 0 the keep-alive timer is released. One `Atomics.waitAsync` may stay armed on the
   * epoch until the next signal or fail: it holds no timer, does not keep the thread alive, and is
   * reused by the next wait.
   */
  get pendingWaitCount(): number {
    return this.#queue.size;
  }

  query(): number {
    const failure = this.failure;
    if (failure) throw failure;
    return this.value;
  }

  /**
   * Atomically raises the payload to `value` (a compare-exchange loop, so concurrent signals from
   * several threads can never lower it), wakes every thread waiting on it, and settles this object's
   * own waiters synchronously. INVALID_ARGUMENT if `value` is not greater than the payload at that
   * moment; a silent no-op once failed.
   */
  signal(value: number): void {
    if (!isPayload(value)) throw invalidPayload(`semaphore '${this.label}': signal`, value);
    const word = this.#word;
    const target = BigInt(value);
    let current = Atomics.load(word, 0);
    for (;;) {
      if ((current & FAILED_BIT) !== 0n) return;
      if (target <= current) throw signalTooLow(this.label, value, Number(current));
      const seen = Atomics.compareExchange(word, 0, current, target);
      if (seen === current) break;
      current = seen;
    }
    this.#wakeAll();
    this.#settle();
  }

  /**
   * Fails the timeline for every thread: stores the code and message (see the layout), sets FAILED,
   * wakes every waiter. The first failure wins, across threads; later calls are ignored.
   */
  fail(error: unknown): void {
    if (this.failure) return;
    const failure = toFailure(this.label, error);
    const i32 = this.#i32;
    if (Atomics.compareExchange(i32, L.CLAIM, 0, 1) !== 0) return;
    this.#writeFailure(failure);
    const word = this.#word;
    let current = Atomics.load(word, 0);
    for (;;) {
      const seen = Atomics.compareExchange(word, 0, current, current | FAILED_BIT);
      if (seen === current) break;
      current = seen;
    }
    this.#failure = failure;
    this.#wakeAll();
    this.#settle();
  }

  wait(value: number, options?: WaitOptions): Promise<void> {
    return this.#queue.wait(value, options);
  }

  onReached(value: number, callback: ReachedCallback): Registration {
    return this.#queue.onReached(value, callback);
  }

  /**
   * Blocks this thread until payload ≥ `value` (with `Atomics.wait`; no event-loop turn is needed, so
   * it works in a worker busy with a loop). Throws like `wait` rejects: DEADLINE_EXCEEDED, ABORTED
   * (cause = the failure), INVALID_ARGUMENT; and FAILED_PRECONDITION on threads that may not block
   * (a browser's main thread), whether or not `value` is reached.
   */
  waitSync(value: number, options?: WaitSyncOptions): void {
    if (!isPayload(value)) throw invalidPayload(`semaphore '${this.label}': waitSync`, value);
    const invalid = options === undefined ? undefined : checkWaitOptions(this.#what(value), options);
    if (invalid) throw invalid;
    const timeoutMs = options?.timeoutMs;
    const spinMicros = options?.spinMicros;
    if (
      spinMicros !== undefined &&
      !(typeof spinMicros === 'number' && Number.isFinite(spinMicros) && spinMicros >= 0)
    ) {
      throw invalidArgument(
        `${this.#what(value)}: spinMicros must be a finite number ≥ 0, got ${describeValue(spinMicros)}`,
      );
    }
    const i32 = this.#i32;
    try {
      // MAGIC is never 0, so this returns 'not-equal' at once where blocking is allowed.
      Atomics.wait(i32, L.MAGIC, 0, 0);
    } catch (error) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `semaphore '${this.label}': waitSync needs a thread that may block (not a browser main thread); use wait() instead`,
        { cause: error },
      );
    }
    const start = performance.now();
    const deadline = timeoutMs === undefined ? Infinity : start + timeoutMs;
    if (spinMicros) {
      // Spin until the value or a failure lands, the spin budget or the deadline runs out.
      const spinUntil = Math.min(deadline, start + spinMicros / 1000);
      while (this.value < value && !this.failure && performance.now() < spinUntil) {
        // busy wait: no sleep, so no wake-up latency when the value arrives within the budget
      }
    }
    for (;;) {
      const epoch = Atomics.load(i32, L.EPOCH);
      const failure = this.failure;
      if (failure) throw abortedError(this.#what(value), 'the semaphore', failure);
      if (this.value >= value) return;
      const remaining = deadline - performance.now();
      if (remaining <= 0 || timeoutMs === 0)
        throw deadlineError(this.#what(value), timeoutMs, `payload ${this.value}`);
      Atomics.wait(i32, L.EPOCH, epoch, remaining);
    }
  }

  toString(): string {
    return semaphoreString('SharedTimelineSemaphore', this);
  }

  /** Names a waitSync in messages (built on error paths only). */
  #what(value: number): string {
    return `semaphore '${this.label}': waitSync for ${value}`;
  }

  #wakeAll(): void {
    Atomics.add(this.#i32, L.EPOCH, 1);
    Atomics.notify(this.#i32, L.EPOCH);
  }

  /**
   * Settles what this object's queue can settle now, then, if waiters remain, arms one wake-up on the
   * epoch. The epoch is read before re-checking payload and failure, so a signal landing in between
   * makes `Atomics.waitAsync` return 'not-equal' instead of sleeping through it.
   */
  #settle(): void {
    const queue = this.#queue;
    for (;;) {
      // Called from a callback of a running dispatch: that dispatch's caller arms afterwards.
      if (queue.dispatching) return;
      queue.dispatch();
      if (queue.size === 0 || this.#armed) return;
      const epoch = Atomics.load(this.#i32, L.EPOCH);
      if (queue.dispatchable()) continue;
      if (!HAS_WAIT_ASYNC) {
        this.#armed = true;
        setTimeout(this.#onWake, 1); // no Atomics.waitAsync (older Firefox): poll the epoch every 1 ms
        return;
      }
      const result = Atomics.waitAsync(this.#i32, L.EPOCH, epoch);
      if (!result.async) continue;
      this.#armed = true;
      result.value.then(this.#onWake);
      return;
    }
  }

  #writeFailure(failure: KeelError): void {
    textEncoder ??= new TextEncoder();
    const bytes = textEncoder.encode(failure.message);
    let length = bytes.length;
    let flags = 0;
    if (length > SHARED_MESSAGE_CAPACITY) {
      length = SHARED_MESSAGE_CAPACITY;
      // Back up over continuation bytes (10xxxxxx) to cut before a whole character.
      while (length > 0 && ((bytes[length] as number) & 0xc0) === 0x80) length--;
      flags |= L.FLAG_TRUNCATED;
    }
    const i32 = this.#i32;
    new Uint8Array(i32.buffer, L.MESSAGE_OFFSET, length).set(bytes.subarray(0, length));
    const index = ERROR_CODES.indexOf(failure.code);
    Atomics.store(i32, L.CODE, index + 1);
    Atomics.store(i32, L.LENGTH, length);
    Atomics.store(i32, L.FLAGS, flags);
  }

  #readFailure(): KeelError {
    const i32 = this.#i32;
    const code = ERROR_CODES[Atomics.load(i32, L.CODE) - 1] ?? ErrorCode.INTERNAL;
    const length = Math.min(Math.max(Atomics.load(i32, L.LENGTH), 0), SHARED_MESSAGE_CAPACITY);
    // Decode a private copy: TextDecoder rejects views of shared memory in some browsers.
    const bytes = new Uint8Array(i32.buffer, L.MESSAGE_OFFSET, length).slice();
    textDecoder ??= new TextDecoder();
    const truncated = (Atomics.load(i32, L.FLAGS) & L.FLAG_TRUNCATED) !== 0;
    return new KeelError(code, `${textDecoder.decode(bytes)}${truncated ? '…' : ''}`);
  }
}
