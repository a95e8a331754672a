/**
 * Keeps this thread's event loop alive while shared-memory waits are pending (internal).
 *
 * A pending `Atomics.waitAsync` is not a handle of Node's event loop: a worker whose only pending work
 * is such a wait exits in the middle of it. So while at least one shared wait or registration is
 * pending in this thread, one long interval timer (a ref'd handle, firing a no-op every ~24.8 days) is
 * held; it is cleared as soon as none is pending. In browsers, where nothing exits early, it costs one
 * idle timer while waits are pending. Module state is per thread (each worker has its own).
 */

// A const enum: the build writes the value in place (a top-level const stays a variable).
enum Limit {
  LONG_INTERVAL_MS = 0x7fffffff,
}

let holders = 0;
let handle: ReturnType<typeof setInterval> | undefined;

function noop(): void {}

/** One more pending wait in this thread. */
export function retainKeepAlive(): void {
  if (holders++ === 0) handle = setInterval(noop, Limit.LONG_INTERVAL_MS);
}

/** One pending wait fewer; the timer goes with the last one. */
export function releaseKeepAlive(): void {
  if (holders === 0) return;
  if (--holders === 0 && handle !== undefined) {
    clearInterval(handle);
    handle = undefined;
  }
}

/** For tests and diagnostics: semaphores of this thread that hold the keep-alive timer. */
export function keepAliveHolders(): number {
  return holders;
}
