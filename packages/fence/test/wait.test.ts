import { describe, expect, it } from 'vitest';
import { ErrorCode, Fence, KeelError, TimelineSemaphore, waitAll, waitAny } from '../src/index';
import { flush, kinds, rejection, track } from './helpers';

describe.each(kinds)('waitAll / waitAny over $name', (kind) => {
  function setup() {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const c = kind.create(0, 'c');
    const fences = [
      Fence.of({ semaphore: a, value: 1 }),
      Fence.of({ semaphore: b, value: 2 }, { semaphore: c, value: 1 }),
      Fence.of({ semaphore: c, value: 3 }),
    ];
    return { a, b, c, fences, count: () => a.pendingWaitCount + b.pendingWaitCount + c.pendingWaitCount };
  }

  it('waitAll resolves only when all fences are signalled', async () => {
    const { a, b, c, fences, count } = setup();
    const w = track(waitAll(fences, { timeoutMs: 5000 }));
    a.signal(1);
    b.signal(2);
    c.signal(1);
    await flush();
    expect(w.state).toBe('pending'); // c must reach 3
    c.signal(3);
    await flush();
    expect(w.state).toBe('resolved');
    expect(count()).toBe(0);
  });

  it('waitAll resolves at once when all are already signalled, and for an empty list', async () => {
    const { a, b, c, fences } = setup();
    a.signal(1);
    b.signal(2);
    c.signal(3);
    await expect(waitAll(fences, { timeoutMs: 0 })).resolves.toBeUndefined();
    await expect(waitAll([])).resolves.toBeUndefined();
  });

  it('waitAny resolves with the index of the first fence signalled', async () => {
    const { b, c, fences, count } = setup();
    const w = track(waitAny(fences, { timeoutMs: 5000 }));
    b.signal(2);
    await flush();
    expect(w.state).toBe('pending'); // fence 1 also needs c ≥ 1
    c.signal(3); // completes fences 1 and 2 at once; fence 1's last timepoint (c@1) is reached first
    await flush();
    expect(w.state).toBe('resolved');
    expect(w.value).toBe(1);
    expect(count()).toBe(0);
  });

  it('waitAny resolves with the lowest index when several are signalled already', async () => {
    const { a, c, fences } = setup();
    c.signal(3);
    a.signal(1);
    await expect(waitAny(fences)).resolves.toBe(0);
    await expect(waitAny([fences[1] as Fence, Fence.empty])).resolves.toBe(1);
  });

  it('waitAny with all signalled and with some signalled', async () => {
    const { a, b, c, fences, count } = setup();
    const some = track(waitAny([fences[0] as Fence, fences[2] as Fence], { timeoutMs: 5000 }));
    c.signal(3);
    await flush();
    expect(some.value).toBe(1);
    a.signal(1);
    b.signal(2);
    await expect(waitAny(fences)).resolves.toBe(0);
    expect(count()).toBe(0);
  });

  it('a failure of any awaited semaphore rejects both with ABORTED (cause = the failure)', async () => {
    const { b, fences, count } = setup();
    const all = waitAll(fences);
    const any = waitAny(fences);
    const failure = new KeelError(ErrorCode.DATA_LOSS, 'checksum mismatch');
    b.fail(failure);
    for (const p of [all, any]) {
      const error = await rejection(p);
      expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
      expect(error.cause).toBe(failure);
      expect(error.message).toContain("'b'");
    }
    expect(count()).toBe(0);
    // Failed before the call: rejected at once, even if another fence is reached.
    const { a } = setup();
    a.signal(1);
    const late = await rejection(waitAny([Fence.of({ semaphore: a, value: 1 }), fences[1] as Fence]));
    expect(late.cause).toBe(failure);
  });

  it('waitAny resolves if a fence completes before another fails', async () => {
    const { a, b, fences } = setup();
    const any = track(waitAny(fences));
    a.signal(1);
    b.fail(new KeelError(ErrorCode.INTERNAL, 'later'));
    await flush();
    expect(any.state).toBe('resolved');
    expect(any.value).toBe(0);
  });

  it('validates its arguments', async () => {
    const e1 = await rejection(waitAny([]));
    expect(KeelError.is(e1, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    const e2 = await rejection(waitAll([Fence.empty, 'x' as never]));
    expect(e2.message).toMatch(/fences\[1\]/);
    const e3 = await rejection(waitAll('x' as never));
    expect(KeelError.is(e3, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    const e4 = await rejection(waitAny([Fence.empty], { timeoutMs: -5 }));
    expect(e4.message).toMatch(/timeoutMs/);
  });
});

describe('waitAll over a very long list', () => {
  const a = new TimelineSemaphore(0, { label: 'a' });
  const b = new TimelineSemaphore(0, { label: 'b' });

  it('returns a promise (no synchronous RangeError) and times out with DEADLINE_EXCEEDED', async () => {
    const fences = new Array<Fence>(300_000).fill(Fence.of({ semaphore: a, value: 1 }));
    let promise: Promise<void> | undefined;
    expect(() => {
      promise = waitAll(fences, { timeoutMs: 20 });
    }).not.toThrow();
    const error = await rejection(promise as Promise<void>);
    expect(KeelError.is(error, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    expect(error.message).toContain("'a' 0/1");
    expect(a.pendingWaitCount).toBe(0);
  });

  it('resolves once every fence of the list is reached', async () => {
    const fences = new Array<Fence>(300_000).fill(Fence.of({ semaphore: a, value: 2 }));
    fences[200_000] = Fence.of({ semaphore: b, value: 1 });
    const w = track(waitAll(fences, { timeoutMs: 5000 }));
    a.signal(2);
    await flush();
    expect(w.state).toBe('pending');
    b.signal(1);
    await flush();
    expect(w.state).toBe('resolved');
  });

  it('rejects INVALID_ARGUMENT naming the first entry that is not a fence', async () => {
    const fences = new Array<unknown>(300_000).fill(Fence.empty);
    fences[299_999] = 7;
    const error = await rejection(waitAll(fences as Fence[]));
    expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    expect(error.message).toContain('fences[299999]');
  });
});
