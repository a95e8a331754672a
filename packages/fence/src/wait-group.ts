/**
 * The machinery behind `Fence.wait` (of several timepoints), `waitAll` and `waitAny` (internal): one
 * promise, one `onReached` registration per fence, at most one timer and one abort listener; all of it
 * is released when the wait settles, times out or is aborted.
 */
import { type AbortSubscriber, subscribeAbort, unsubscribeAbort } from './abort-hub';
import type { Fence, Timepoint } from './fence';
import { ErrorCode, KeelError } from './keel-error';
import type { Registration } from './semaphore';
import { abortSignalOf, checkWaitOptions, type WaitOptions } from './validate';

const MAX_TIMER_MS = 0x7fffffff;

/** 'all': resolves when every fence is reached (with 0). 'any': with the index of the first one. */
export type WaitMode = 'all' | 'any';

function failedLabel(fences: readonly Fence[], failure: KeelError): string {
  for (const fence of fences) {
    for (const tp of fence.timepoints)
      if (tp.semaphore.failure === failure) return `semaphore '${tp.semaphore.label}'`;
  }
  return 'a semaphore';
}

function abortedError(what: string, fences: readonly Fence[], failure: KeelError): KeelError {
  return new KeelError(
    ErrorCode.ABORTED,
    `${what}: aborted because ${failedLabel(fences, failure)} failed (${failure.code}: ${failure.message})`,
    { cause: failure },
  );
}

function pendingSummary(fences: readonly Fence[]): string {
  const pending: string[] = [];
  let more = 0;
  for (const fence of fences) {
    for (const tp of fence.timepoints as readonly Timepoint[]) {
      if (tp.semaphore.value >= tp.value) continue;
      if (pending.length < 4) pending.push(`'${tp.semaphore.label}' ${tp.semaphore.value}/${tp.value}`);
      else more++;
    }
  }
  return `${pending.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

function deadlineError(what: string, fences: readonly Fence[], timeoutMs: number): KeelError {
  return new KeelError(
    ErrorCode.DEADLINE_EXCEEDED,
    `${what}: timed out after ${timeoutMs} ms (pending, payload/awaited: ${pendingSummary(fences)})`,
  );
}

function cancelledError(what: string, signal: AbortSignal): KeelError {
  return new KeelError(ErrorCode.CANCELLED, `${what}: cancelled by its abort signal`, {
    cause: signal.reason,
  });
}

class GroupWait implements AbortSubscriber {
  readonly #what: string;
  readonly #fences: readonly Fence[];
  readonly #resolve: (index: number) => void;
  readonly #reject: (reason: unknown) => void;
  readonly #registrations: Registration[] = [];
  #done = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timeoutMs = 0;
  #remainingMs = 0;
  #signal: AbortSignal | undefined;

  constructor(
    what: string,
    fences: readonly Fence[],
    resolve: (index: number) => void,
    reject: (reason: unknown) => void,
  ) {
    this.#what = what;
    this.#fences = fences;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  start(timeoutMs: number | undefined, signal: AbortSignal | undefined): void {
    if (timeoutMs !== undefined && timeoutMs !== Number.POSITIVE_INFINITY) {
      const first = Math.min(timeoutMs, MAX_TIMER_MS);
      this.#timeoutMs = timeoutMs;
      this.#remainingMs = timeoutMs - first;
      this.#timer = setTimeout(() => this.#onTimer(), first);
    }
    if (signal !== undefined) {
      this.#signal = signal;
      subscribeAbort(signal, this);
    }
    const fences = this.#fences;
    for (let i = 0; i < fences.length && !this.#done; i++) {
      const registration = (fences[i] as Fence).onReached((error) => this.#onFence(i, error));
      if (this.#done) registration.cancel();
      else this.#registrations.push(registration);
    }
  }

  /** AbortSubscriber: the wait's AbortSignal aborted. */
  onAbort(): void {
    const signal = this.#signal;
    if (this.#done || signal === undefined) return;
    this.#finish();
    this.#reject(cancelledError(this.#what, signal));
  }

  #onTimer(): void {
    if (this.#done) return;
    if (this.#remainingMs > 0) {
      const next = Math.min(this.#remainingMs, MAX_TIMER_MS);
      this.#remainingMs -= next;
      this.#timer = setTimeout(() => this.#onTimer(), next);
      return;
    }
    this.#timer = undefined;
    this.#finish();
    this.#reject(deadlineError(this.#what, this.#fences, this.#timeoutMs));
  }

  #onFence(index: number, error: KeelError | undefined): void {
    if (this.#done) return;
    this.#finish();
    if (error === undefined) this.#resolve(index);
    else this.#reject(abortedError(this.#what, this.#fences, error));
  }

  #finish(): void {
    this.#done = true;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#signal !== undefined) {
      unsubscribeAbort(this.#signal, this);
      this.#signal = undefined;
    }
    const registrations = this.#registrations;
    for (const registration of registrations) registration.cancel();
    registrations.length = 0;
  }
}

/**
 * Waits for fences. Mode 'all' expects one (joined) fence and resolves with 0; mode 'any' resolves with
 * the index of the first fence reached. Checks, in order: options (INVALID_ARGUMENT), abort signal
 * (CANCELLED), any failure among all timepoints (ABORTED), completion, `timeoutMs: 0`
 * (DEADLINE_EXCEEDED). Afterwards the first event wins: a fence reached, a failure (ABORTED), the
 * deadline, or the abort.
 */
export function waitForFences(
  mode: WaitMode,
  what: string,
  fences: readonly Fence[],
  options: WaitOptions | undefined,
): Promise<number> {
  let timeoutMs: number | undefined;
  let signal: AbortSignal | undefined;
  if (options !== undefined) {
    const invalid = checkWaitOptions(what, options);
    if (invalid !== undefined) return Promise.reject(invalid);
    timeoutMs = options.timeoutMs;
    signal = abortSignalOf(options);
    if (signal?.aborted) return Promise.reject(cancelledError(what, signal));
  }
  let firstReached = -1;
  let allReached = true;
  for (let i = 0; i < fences.length; i++) {
    for (const tp of (fences[i] as Fence).timepoints) {
      const failure = tp.semaphore.failure;
      if (failure !== undefined) return Promise.reject(abortedError(what, fences, failure));
    }
  }
  for (let i = 0; i < fences.length; i++) {
    let reached = true;
    for (const tp of (fences[i] as Fence).timepoints) {
      if (tp.semaphore.value < tp.value) {
        reached = false;
        break;
      }
    }
    if (reached && firstReached < 0) firstReached = i;
    if (!reached) allReached = false;
  }
  if (mode === 'all' ? allReached : firstReached >= 0)
    return Promise.resolve(mode === 'all' ? 0 : firstReached);
  if (timeoutMs === 0) return Promise.reject(deadlineError(what, fences, 0));
  return new Promise<number>((resolve, reject) => {
    new GroupWait(what, fences, resolve, reject).start(timeoutMs, signal);
  });
}
