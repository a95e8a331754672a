/** Test helpers: the two semaphore kinds under one factory, microtask flushing, workers. */
import { Worker } from 'node:worker_threads';
import { type KeelError, SharedTimelineSemaphore, TimelineSemaphore } from '../src/index';

export interface Kind {
  readonly name: string;
  create(initial?: number, label?: string): TimelineSemaphore | SharedTimelineSemaphore;
}

/** Every semaphore contract test runs against both implementations. */
export const kinds: readonly Kind[] = [
  { name: 'TimelineSemaphore', create: (initial = 0, label) => new TimelineSemaphore(initial, { label }) },
  {
    name: 'SharedTimelineSemaphore',
    create: (initial = 0, label) => new SharedTimelineSemaphore(initial, { label }),
  },
];

/** Lets pending promise reactions run (several microtask turns; no timers, so fake timers are fine). */
export async function flush(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

export type Settled = 'pending' | 'resolved' | 'rejected';

/** Tracks a promise's state without leaving it unhandled. */
export function track<T>(promise: Promise<T>): {
  readonly state: Settled;
  readonly error: unknown;
  readonly value: T | undefined;
} {
  const tracked = {
    state: 'pending' as Settled,
    error: undefined as unknown,
    value: undefined as T | undefined,
  };
  promise.then(
    (value) => {
      tracked.state = 'resolved';
      tracked.value = value;
    },
    (error: unknown) => {
      tracked.state = 'rejected';
      tracked.error = error;
    },
  );
  return tracked;
}

/** Awaits a promise expected to reject and returns its reason (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (error) {
    return error as KeelError;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

const DEATH_GRACE_MS = 500;

export interface RunningWorker {
  readonly worker: Worker;
  readonly messages: unknown[];
  /** Resolves with the exit code. */
  readonly exited: Promise<number>;
  /** Resolves with the next message satisfying `match` (or rejects if the worker errors or exits first). */
  next(match?: (message: unknown) => boolean, timeoutMs?: number): Promise<unknown>;
  /** Races `promise` against the worker dying (error or exit), so a broken worker fails fast. */
  guard<T>(promise: Promise<T>): Promise<T>;
}

/** Starts a fixture of test/fixtures (they import the built package: run the build first). */
export function startWorker(fixture: string, workerData: unknown): RunningWorker {
  const worker = new Worker(new URL(`./fixtures/${fixture}`, import.meta.url), { workerData });
  const messages: unknown[] = [];
  const listeners = new Set<(message: unknown) => void>();
  let failure: Error | undefined;
  const deathListeners = new Set<(error: Error) => void>();
  const die = (error: Error) => {
    failure ??= error;
    for (const l of deathListeners) l(error);
  };
  worker.on('message', (message: unknown) => {
    messages.push(message);
    for (const l of listeners) l(message);
  });
  worker.on('error', (error) => die(error));
  const exited = new Promise<number>((resolve) => {
    worker.on('exit', (code) => {
      die(new Error(`worker ${fixture} exited with code ${code}`));
      resolve(code);
    });
  });
  const guard = <T>(promise: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      // A worker may legitimately exit right after its last signal, and the exit event can overtake the
      // wake-up of this thread's wait: give the promise a grace period before blaming the exit.
      let grace: ReturnType<typeof setTimeout> | undefined;
      const onDeath = (error: Error) => {
        grace = setTimeout(() => reject(error), DEATH_GRACE_MS);
      };
      const settle = () => {
        deathListeners.delete(onDeath);
        if (grace !== undefined) clearTimeout(grace);
      };
      if (failure !== undefined) onDeath(failure);
      else deathListeners.add(onDeath);
      promise.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  const next = (match: (message: unknown) => boolean = () => true, timeoutMs = 10_000): Promise<unknown> => {
    const seen = messages.find(match);
    if (seen !== undefined) {
      messages.splice(messages.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise<unknown>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
        deathListeners.delete(onDeath);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching message from ${fixture} within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (message: unknown) => {
        if (!match(message)) return;
        done();
        messages.splice(messages.indexOf(message), 1);
        resolve(message);
      };
      const onDeath = (error: Error) => {
        done();
        reject(error);
      };
      listeners.add(listener);
      deathListeners.add(onDeath);
    });
  };
  return { worker, messages, exited, next, guard };
}
