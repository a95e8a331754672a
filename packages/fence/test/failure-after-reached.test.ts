/**
 * A fence (several timepoints) whose semaphore fails after its own timepoint was reached, while another
 * timepoint is still pending: once failed, a timeline answers every wait with its failure, so
 * `fence.wait`, `waitAll`, `waitAny` and `fence.onReached` complete with that failure (ABORTED for the
 * waits) — and never resolve later while `fence.query()` throws. Both semaphore kinds.
 */
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, Fence, KeelError, waitAll, waitAny } from '../src/index';
import { flush, kinds, track } from './helpers';

describe.each(kinds)('a failure after a timepoint was reached ($name)', (kind) => {
  function setup() {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const fence = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const failure = new KeelError(ErrorCode.DATA_LOSS, 'a broke');
    return { a, b, fence, failure, count: () => a.pendingWaitCount + b.pendingWaitCount };
  }

  it('fence.wait rejects ABORTED when a semaphore reached before the wait fails', async () => {
    const { a, b, fence, failure, count } = setup();
    a.signal(1);
    const w = track(fence.wait({ timeoutMs: 5000 }));
    a.fail(failure);
    await flush();
    expect(w.state).toBe('rejected');
    expect(KeelError.is(w.error, ErrorCode.ABORTED)).toBe(true);
    expect((w.error as KeelError).cause).toBe(failure);
    expect((w.error as KeelError).message).toContain("'a'");
    expect(count()).toBe(0);
    b.signal(1);
    await flush();
    expect(w.state).toBe('rejected');
    expect(() => fence.query()).toThrow(failure);
  });

  it('fence.wait rejects ABORTED when a semaphore reached during the wait fails', async () => {
    const { a, b, fence, failure, count } = setup();
    const w = track(fence.wait({ timeoutMs: 5000 }));
    a.signal(1);
    a.fail(failure);
    await flush();
    expect(w.state).toBe('rejected');
    expect((w.error as KeelError).cause).toBe(failure);
    expect(count()).toBe(0);
    b.signal(1);
    await flush();
    expect(w.state).toBe('rejected');
  });

  it('waitAll rejects ABORTED when a reached semaphore fails', async () => {
    const { a, b, failure, count } = setup();
    a.signal(1);
    const w = track(waitAll([Fence.of({ semaphore: a, value: 1 }), Fence.of({ semaphore: b, value: 1 })]));
    a.fail(failure);
    await flush();
    expect(w.state).toBe('rejected');
    expect(KeelError.is(w.error, ErrorCode.ABORTED)).toBe(true);
    expect((w.error as KeelError).cause).toBe(failure);
    expect(count()).toBe(0);
  });

  it('waitAny rejects ABORTED when an awaited, reached semaphore fails before any fence is reached', async () => {
    const { a, b, fence, failure, count } = setup();
    const c = kind.create(0, 'c');
    a.signal(1);
    const w = track(waitAny([fence, Fence.of({ semaphore: c, value: 1 })]));
    a.fail(failure);
    await flush();
    expect(w.state).toBe('rejected');
    expect(KeelError.is(w.error, ErrorCode.ABORTED)).toBe(true);
    expect((w.error as KeelError).cause).toBe(failure);
    c.signal(1);
    b.signal(1);
    await flush();
    expect(w.state).toBe('rejected');
    expect(count() + c.pendingWaitCount).toBe(0);
  });

  it('waitAny still resolves with a fence reached before the failure', async () => {
    const { a, b, fence, failure, count } = setup();
    a.signal(1);
    const w = waitAny([fence, Fence.of({ semaphore: a, value: 5 })]);
    b.signal(1);
    a.fail(failure);
    await expect(w).resolves.toBe(0);
    expect(count()).toBe(0);
  });

  it('fence.onReached is called with the failure, at once, and not again', () => {
    const { a, b, fence, failure, count } = setup();
    a.signal(1);
    const cb = vi.fn();
    fence.onReached(cb);
    a.fail(failure);
    expect(cb).toHaveBeenCalledOnce();
    expect(cb).toHaveBeenCalledWith(failure);
    expect(count()).toBe(0);
    b.signal(1);
    expect(cb).toHaveBeenCalledOnce();
  });

  it('fence.onReached of a fence reached at registration leaves nothing queued', () => {
    const { a, b, fence, count } = setup();
    a.signal(1);
    b.signal(1);
    const cb = vi.fn();
    fence.onReached(cb);
    expect(cb).toHaveBeenCalledWith();
    expect(count()).toBe(0);
  });

  it('a pending fence registration watches its reached semaphores, and drops the watch when it completes', () => {
    const { a, b, fence, count } = setup();
    const cb = vi.fn();
    const registration = fence.onReached(cb);
    a.signal(1);
    expect(count()).toBe(2); // b's timepoint, a's failure watch
    b.signal(1);
    expect(cb).toHaveBeenCalledWith();
    expect(count()).toBe(0);
    const again = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 2 }).onReached(cb);
    expect(count()).toBe(2);
    again.cancel();
    registration.cancel();
    expect(count()).toBe(0);
  });

  it('a semaphore at the largest payload that fails later still fails the fence', () => {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const fence = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    a.signal(Number.MAX_SAFE_INTEGER);
    const cb = vi.fn();
    fence.onReached(cb);
    const failure = new KeelError(ErrorCode.DATA_LOSS, 'a broke');
    a.fail(failure);
    b.signal(1);
    expect(cb).toHaveBeenCalledOnce();
    expect(cb).toHaveBeenCalledWith(failure);
  });
});
