/**
 * TensorLease: a device copy handed to a caller for one device operation (or a chain of them).
 *
 * Protocol:
 * 1. `manager.acquire(tensor, access)` makes the copy on the manager's device up to date (for 'read'
 *    and 'readwrite') and returns the lease: `buffer` (or `ref`) to bind, and `wait`, the fence the
 *    caller's operation must wait on. For reads `wait` is the fence that makes the bytes ready; for
 *    writes it also covers every earlier reader of the buffer (no write-after-read hazard).
 * 2. The caller enqueues its operation(s) waiting on `wait` and signalling a fence of its own.
 * 3. `lease.release(after)` hands back the fence after which the caller no longer uses the buffer. A
 *    write lease also declares that the buffer holds the new contents once `after` is reached: every
 *    other copy (host included) becomes stale, and readers of this copy will wait on `after`.
 *
 * While a lease is open its copy is never evicted; eviction and `Tensor.release` free the buffer only
 * once every released `after` fence is reached (queue-ordered), so memory is never freed while in use.
 * `after` must belong to work already enqueued (or signalled by the host without waiting on later
 * acquires), else eviction could wait on work that waits on it, and must be reached only once that
 * work is done: a timeline shared by operations no fence orders is reached by whichever finishes
 * first (a device leaves a passed value alone), and a write-back waiting on it would read too early.
 * A lease is released exactly once (FAILED_PRECONDITION the second time), or cancelled with `cancel()`
 * when nothing was enqueued with it; a lease never released pins its copy (and blocks `dispose`).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { Buffer, DirectBufferRef } from '@keel/hal';
import type { DType } from './dtype';
import type { Tensor } from './tensor';

/** What an operation does with a tensor: 'write' skips the upload (every byte will be overwritten). */
export type Access = 'read' | 'write' | 'readwrite';

/** True for a valid Access. */
export function isAccess(value: unknown): value is Access {
  return value === 'read' || value === 'write' || value === 'readwrite';
}

export class TensorLease<D extends DType = DType> {
  readonly #end: (after: Fence | undefined) => void;
  #released = false;

  /** The copy's buffer, bound as `{ buffer }` or through `ref`. */
  readonly buffer: Buffer;
  /** `{ buffer, offset: 0, length: tensor.byteLength }`: exactly the tensor's bytes. */
  readonly ref: DirectBufferRef;

  /** @internal built by ResidencyManager.acquire */
  constructor(
    readonly tensor: Tensor<D>,
    readonly access: Access,
    buffer: Buffer,
    /** The fence the caller's operation waits on before touching `buffer`. */
    readonly wait: Fence,
    end: (after: Fence | undefined) => void,
  ) {
    this.buffer = buffer;
    this.ref = Object.freeze({ buffer, offset: 0, length: tensor.byteLength });
    this.#end = end;
  }

  /** True once `release` or `cancel` was called. */
  get released(): boolean {
    return this.#released;
  }

  /**
   * Ends the lease: the caller's use of `buffer` is over once `after` is reached (Fence.empty: over
   * now). INVALID_ARGUMENT unless `after` is a Fence; FAILED_PRECONDITION when already released.
   */
  release(after: Fence): void {
    if (!(after instanceof Fence)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `TensorLease.release: ${this.tensor.toString()}: 'after' must be a Fence`,
      );
    }
    if (this.#released) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `TensorLease.release: the ${this.access} lease of ${this.tensor.toString()} was already released`,
      );
    }
    this.#released = true;
    this.#end(after);
  }

  /**
   * Ends the lease without having used the buffer (nothing was enqueued with it, e.g. enqueueing
   * failed): a write lease leaves the contents as they were. FAILED_PRECONDITION when already ended.
   */
  cancel(): void {
    if (this.#released) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `TensorLease.cancel: the ${this.access} lease of ${this.tensor.toString()} was already released`,
      );
    }
    this.#released = true;
    this.#end(undefined);
  }
}

/** Several leases acquired together (`acquireAll`): one joined wait fence, one release. */
export class TensorLeases {
  /** The join of every lease's `wait`. */
  readonly wait: Fence;

  constructor(readonly leases: readonly TensorLease[]) {
    this.wait = Fence.join(...leases.map((l) => l.wait));
  }

  /** The buffer of lease `index` (the order of the requests). */
  buffer(index: number): Buffer {
    const lease = this.leases[index];
    if (lease === undefined) {
      throw new KeelError(
        ErrorCode.OUT_OF_RANGE,
        `TensorLeases.buffer: no lease ${index} of ${this.leases.length}`,
      );
    }
    return lease.buffer;
  }

  /** Releases every lease still open with `after`. */
  release(after: Fence): void {
    for (const lease of this.leases) if (!lease.released) lease.release(after);
  }

  /** Cancels every lease still open (see TensorLease.cancel). */
  cancel(): void {
    for (const lease of this.leases) if (!lease.released) lease.cancel();
  }
}
