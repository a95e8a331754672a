/**
 * A count of asynchronous GPU work the device started off its hot path (pipeline compilations, error
 * scope pops of resource creation), so that `destroy()` can wait for all of it to settle before it
 * destroys the GPUDevice. `track` never changes the tracked promise's outcome. `IdleLatch` does the
 * same for work counted elsewhere (the scheduler's maps and completion requests), without a promise
 * per piece of work.
 */
/** Counts a promise as pending work until it settles and returns it (`PendingWork.track`). */
export type TrackWork = <T>(promise: Promise<T>) => Promise<T>;

export class PendingWork {
  #count = 0;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  /** Counts `promise` until it settles; returns it. */
  track<T>(promise: Promise<T>): Promise<T> {
    this.#count++;
    const done = (): void => {
      this.#count--;
      if (this.#count === 0 && this.#waiters.length > 0) {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const resolve of waiters) resolve();
      }
    };
    promise.then(done, done);
    return promise;
  }

  /** Resolves once nothing tracked is pending. */
  settled(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#waiters.push(resolve);
    });
  }
}

/**
 * Resolves `whenIdle()` once `pending()` reads 0, as seen by `check()` (called whenever something it
 * counts settles). One promise at a time; a check allocates nothing.
 */
export class IdleLatch {
  readonly #pending: () => number;
  #resolve: (() => void) | undefined;
  #promise: Promise<void> | undefined;

  constructor(pending: () => number) {
    this.#pending = pending;
  }

  whenIdle(): Promise<void> {
    if (this.#pending() === 0) return Promise.resolve();
    this.#promise ??= new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
    return this.#promise;
  }

  check(): void {
    const resolve = this.#resolve;
    if (resolve === undefined || this.#pending() !== 0) return;
    this.#resolve = undefined;
    this.#promise = undefined;
    resolve();
  }
}
