/**
 * Timeouts and aborts: the right error, and nothing left behind — no queued waiter
 * (pendingWaitCount), no abort listener (add/remove balanced on the very same listener), no timer
 * (vi.getTimerCount under fake timers), no keep-alive hold.
 */
import { setMaxListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import {
  ErrorCode,
  Fence,
  KeelError,
  type Semaphore,
  SharedTimelineSemaphore,
  TimelineSemaphore,
  waitAll,
  waitAny,
} from '../src/index';
import { keepAliveHolders } from '../src/keep-alive';
import { kinds, rejection, track } from './helpers';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
  vi.restoreAllMocks();
});

interface SpiedSignal {
  readonly controller: AbortController;
  readonly signal: AbortSignal;
  readonly add: MockInstance;
  readonly remove: MockInstance;
}

function spiedSignal(): SpiedSignal {
  const controller = new AbortController();
  const add = vi.spyOn(controller.signal, 'addEventListener');
  const remove = vi.spyOn(controller.signal, 'removeEventListener');
  return { controller, signal: controller.signal, add, remove };
}

/** Every listener added was removed again (the same object, for the same event). */
function expectListenersBalanced({ add, remove }: SpiedSignal): void {
  expect(add.mock.calls.length).toBeGreaterThan(0);
  expect(remove.mock.calls.length).toBe(add.mock.calls.length);
  for (const [i, call] of add.mock.calls.entries()) {
    expect(remove.mock.calls[i]?.[0]).toBe(call[0]);
    expect(remove.mock.calls[i]?.[1]).toBe(call[1]);
  }
}

function expectNothingLeft(...semaphores: Semaphore[]): void {
  for (const s of semaphores) expect(s.pendingWaitCount).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
  expect(keepAliveHolders()).toBe(0);
}

describe.each(kinds)('$name', (kind) => {
  it('times out with DEADLINE_EXCEEDED and leaves nothing behind', async () => {
    const s = kind.create(1, 'slow');
    const spied = spiedSignal();
    const w = track(s.wait(5, { timeoutMs: 100, signal: spied.signal }));
    expect(s.pendingWaitCount).toBe(1);
    expect(vi.getTimerCount()).toBeGreaterThanOrEqual(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(w.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(w.state).toBe('rejected');
    const error = w.error as KeelError;
    expect(KeelError.is(error, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    expect(error.message).toContain("'slow'");
    expect(error.message).toContain('100 ms');
    expectNothingLeft(s);
    expectListenersBalanced(spied);
    // The semaphore still works afterwards.
    const later = track(s.wait(2));
    s.signal(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(later.state).toBe('resolved');
  });

  it('timeoutMs: 0 polls: rejects at once when not reached, with no timer', async () => {
    const s = kind.create(1);
    const error = await rejection(s.wait(2, { timeoutMs: 0 }));
    expect(KeelError.is(error, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    expectNothingLeft(s);
  });

  it('aborts with CANCELLED (cause = the reason) and leaves nothing behind', async () => {
    const s = kind.create();
    const spied = spiedSignal();
    const w = track(s.wait(3, { signal: spied.signal, timeoutMs: 10_000 }));
    const reason = new Error('user pressed stop');
    spied.controller.abort(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(w.state).toBe('rejected');
    expect(KeelError.is(w.error, ErrorCode.CANCELLED)).toBe(true);
    expect((w.error as KeelError).cause).toBe(reason);
    expectNothingLeft(s);
    expectListenersBalanced(spied);
  });

  it('rejects CANCELLED at once for an already-aborted signal, adding no listener', async () => {
    const s = kind.create(5);
    const spied = spiedSignal();
    spied.controller.abort();
    const error = await rejection(s.wait(1, { signal: spied.signal }));
    expect(KeelError.is(error, ErrorCode.CANCELLED)).toBe(true);
    expect(spied.add).not.toHaveBeenCalled();
    expectNothingLeft(s);
  });

  it('removes listener and timer when the wait resolves or its semaphore fails', async () => {
    const s = kind.create();
    const a = spiedSignal();
    const b = spiedSignal();
    const resolved = track(s.wait(1, { signal: a.signal, timeoutMs: 5000 }));
    const failed = track(s.wait(9, { signal: b.signal, timeoutMs: 5000 }));
    s.signal(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(resolved.state).toBe('resolved');
    expectListenersBalanced(a);
    s.fail(new KeelError(ErrorCode.INTERNAL, 'x'));
    await vi.advanceTimersByTimeAsync(0);
    expect(KeelError.is(failed.error, ErrorCode.ABORTED)).toBe(true);
    expectListenersBalanced(b);
    expectNothingLeft(s);
  });

  it('removes a timed-out waiter from the middle of the queue without disturbing the others', async () => {
    const s = kind.create();
    const order: number[] = [];
    const waits = [3, 1, 2, 5, 4].map((v) => s.wait(v).then(() => order.push(v)));
    const timedOut = track(s.wait(2, { timeoutMs: 10 }));
    await vi.advanceTimersByTimeAsync(10);
    expect(timedOut.state).toBe('rejected');
    expect(s.pendingWaitCount).toBe(5);
    s.signal(5);
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expectNothingLeft(s);
  });

  it('many cancelled waits leave nothing behind', async () => {
    const s = kind.create();
    const controller = new AbortController();
    setMaxListeners(1000, controller.signal); // Node warns past 10 listeners on one signal
    const waits = Array.from({ length: 500 }, (_, i) =>
      track(s.wait(i + 1, { signal: controller.signal, timeoutMs: 1000 + i })),
    );
    expect(s.pendingWaitCount).toBe(500);
    controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(waits.every((w) => KeelError.is(w.error, ErrorCode.CANCELLED))).toBe(true);
    expectNothingLeft(s);
  });

  it('Fence.wait, waitAll and waitAny leave nothing behind on timeout and abort', async () => {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const fence = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const other = Fence.of({ semaphore: b, value: 2 });

    const spied = spiedSignal();
    const timedOut = [
      track(fence.wait({ timeoutMs: 50, signal: spied.signal })),
      track(waitAll([fence, other], { timeoutMs: 50, signal: spied.signal })),
      track(waitAny([fence, other], { timeoutMs: 50, signal: spied.signal })),
    ];
    expect(a.pendingWaitCount + b.pendingWaitCount).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(50);
    for (const w of timedOut) {
      expect(w.state).toBe('rejected');
      expect(KeelError.is(w.error, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    }
    expect((timedOut[1]?.error as KeelError | undefined)?.message).toMatch(
      /waitAll: timed out after 50 ms.*'a' 0\/1/,
    );
    expectNothingLeft(a, b);
    expectListenersBalanced(spied);

    const aborting = spiedSignal();
    const aborted = [
      track(fence.wait({ signal: aborting.signal })),
      track(waitAll([fence, other], { signal: aborting.signal })),
      track(waitAny([fence, other], { signal: aborting.signal, timeoutMs: 1000 })),
    ];
    aborting.controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    for (const w of aborted) expect(KeelError.is(w.error, ErrorCode.CANCELLED)).toBe(true);
    expectNothingLeft(a, b);
    expectListenersBalanced(aborting);
  });

  it('fence.onReached cancel and completion leave nothing behind', () => {
    const a = kind.create();
    const b = kind.create();
    const fence = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const cb = vi.fn();
    fence.onReached(cb).cancel();
    expectNothingLeft(a, b);
    fence.onReached(cb);
    a.signal(1);
    // b's timepoint, and the watch on a's failure (a is reached, the fence still pending).
    expect(a.pendingWaitCount + b.pendingWaitCount).toBe(2);
    b.fail(new KeelError(ErrorCode.INTERNAL, 'x'));
    expect(cb).toHaveBeenCalledOnce();
    expect(KeelError.is(cb.mock.calls[0]?.[0], ErrorCode.INTERNAL)).toBe(true);
    expectNothingLeft(a, b);
  });
});

describe('a wait settled before it is armed', () => {
  it('a signal from inside wait() (an options getter) leaves no abort listener and no timer', async () => {
    const s = new TimelineSemaphore(0, { label: 's' });
    const spied = spiedSignal();
    let reads = 0;
    const options = {
      get timeoutMs(): number {
        if (++reads === 3) s.signal(1); // the read in arm(), after the waiter is queued
        return 10_000;
      },
      abortSignal: spied.signal,
    };
    const w = track(s.wait(1, options));
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(3);
    expect(w.state).toBe('resolved');
    expect(spied.add).not.toHaveBeenCalled();
    expectNothingLeft(s);
  });

  it('a shared wait settled inside wait() by a signal through another object (another thread) subscribes to nothing', async () => {
    const s = new SharedTimelineSemaphore(0, { label: 'race' });
    const other = SharedTimelineSemaphore.fromHandle(s.handle); // what a worker holds
    const spied = spiedSignal();
    let reads = 0;
    const options = {
      get timeoutMs(): number {
        // After the reached check, before the waiter is queued: as a worker's signal landing there.
        if (++reads === 2) other.signal(1);
        return 10_000;
      },
      abortSignal: spied.signal,
    };
    const w = track(s.wait(1, options));
    await vi.advanceTimersByTimeAsync(0);
    expect(w.state).toBe('resolved');
    expect(spied.add).not.toHaveBeenCalled();
    expectNothingLeft(s, other);
  });
});

describe('long deadlines', () => {
  it('waits beyond setTimeout’s 2^31 − 1 ms limit by re-arming', async () => {
    const s = kind0();
    const w = track(s.wait(1, { timeoutMs: 2 ** 31 + 5000 }));
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    expect(w.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(5000);
    expect(w.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(w.state).toBe('rejected');
    expect(KeelError.is(w.error, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    expectNothingLeft(s);
  });
});

function kind0(): Semaphore {
  return (kinds[0] as (typeof kinds)[number]).create();
}
