/**
 * The machinery behind `Fence.wait` (of several timepoints), `waitAll` and `waitAny` (internal): one
 * promise, one `onReached` registration per fence, and the deadline and abort handling of every wait
 * (`TimedWait`, waiter-queue.ts); all of it is released when the wait settles, times out or is aborted.
 */
import type { Fence } from './fence';
import type { KeelError } from './keel-error';
import type { Registration } from './semaphore';
import type { WaitOptions } from './validate';
import {
  abortedError,
  capture,
  capturedReject,
  capturedResolve,
  checkWait,
  deadlineError,
  TimedWait,
  takeCaptured,
} from './waiter-queue';

function failedLabel(fences: readonly Fence[], failure: KeelError): string {
  for (const fence of fences) {
    for (const tp of fence.timepoints)
      if (tp.semaphore.failure === failure) return `semaphore '${tp.semaphore.label}'`;
  }
  return 'a semaphore';
}

/** The pending timepoints as `'label' payload/awaited`, at most 4 of them. */
function pendingState(fences: readonly Fence[]): string {
  const pending: string[] = [];
  let more = 0;
  for (const fence of fences) {
    for (const tp of fence.timepoints) {
      if (tp.semaphore.value >= tp.value) continue;
      if (pending.length < 4) pending.push(`'${tp.semaphore.label}' ${tp.semaphore.value}/${tp.value}`);
      else more++;
    }
  }
  return `pending, payload/awaited: ${pending.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

class GroupWait extends TimedWait {
  readonly #what: string;
  readonly #fences: readonly Fence[];
  readonly #resolve = capturedResolve as (index: number) => void;
  readonly #reject = capturedReject as (reason: unknown) => void;
  readonly #registrations: Registration[] = [];
  #done = false;

  constructor(what: string, fences: readonly Fence[], options: WaitOptions | undefined) {
    super();
    takeCaptured();
    this.#what = what;
    this.#fences = fences;
    this.arm(options);
    for (let i = 0; i < fences.length && !this.#done; i++) {
      const registration = (fences[i] as Fence).onReached((error) => this.#onFence(i, error));
      if (this.#done) registration.cancel();
      else this.#registrations.push(registration);
    }
  }

  get live(): boolean {
    return !this.#done;
  }

  what(): string {
    return this.#what;
  }

  state(): string {
    return pendingState(this.#fences);
  }

  end(error: KeelError): void {
    this.#finish();
    this.#reject(error);
  }

  #onFence(index: number, error: KeelError | undefined): void {
    if (this.#done) return;
    this.#finish();
    if (!error) this.#resolve(index);
    else this.#reject(abortedError(this.#what, failedLabel(this.#fences, error), error));
  }

  #finish(): void {
    this.#done = true;
    this.release();
    const registrations = this.#registrations;
    for (const registration of registrations) registration.cancel();
    registrations.length = 0;
  }
}

/**
 * Waits for the first of `fences` to be reached and resolves with its index (with one fence: waits for
 * it, resolves with 0). Checks, in order: options (INVALID_ARGUMENT), abort signal (CANCELLED), any
 * failure among all timepoints (ABORTED), completion, `timeoutMs: 0` (DEADLINE_EXCEEDED). Afterwards the
 * first event wins: a fence reached, a failure (ABORTED), the deadline, or the abort.
 */
export function waitForFences(
  what: string,
  fences: readonly Fence[],
  options: WaitOptions | undefined,
): Promise<number> {
  const invalid = options === undefined ? undefined : checkWait(what, options);
  if (invalid) return Promise.reject(invalid);
  let first = -1;
  try {
    // query() throws the first failure of a fence; every fence is queried before any completes.
    for (let i = 0; i < fences.length; i++)
      if ((fences[i] as Fence).query() === 'signaled' && first < 0) first = i;
  } catch (error) {
    const failure = error as KeelError;
    return Promise.reject(abortedError(what, failedLabel(fences, failure), failure));
  }
  if (first >= 0) return Promise.resolve(first);
  if (options?.timeoutMs === 0) return Promise.reject(deadlineError(what, 0, pendingState(fences)));
  const promise = new Promise<number>(capture);
  new GroupWait(what, fences, options);
  return promise;
}
