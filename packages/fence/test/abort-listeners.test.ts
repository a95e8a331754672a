/**
 * Issue 15: waits sharing one AbortSignal share one 'abort' listener (no MaxListenersExceededWarning),
 * and the listener is removed once the last wait on the signal settles, times out or is aborted.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, Fence, KeelError, waitAll, waitAny } from '../src/index';
import { kinds } from './helpers';

const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

describe.each(kinds)('$name: waits sharing one AbortSignal', (kind) => {
  it('10 000 waits add one listener and leave none once signalled', async () => {
    const s = kind.create();
    const controller = new AbortController();
    const { signal } = controller;
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 10_000; i++) waits.push(s.wait(1 + (i % 100), { signal }));
    expect(listeners(signal)).toBe(1);
    s.signal(100);
    await Promise.all(waits);
    expect(listeners(signal)).toBe(0);
    await tick();
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('on abort every wait rejects CANCELLED once and the listener is gone', async () => {
    const s = kind.create();
    const controller = new AbortController();
    const { signal } = controller;
    const results = Array.from({ length: 1000 }, (_, i) =>
      s.wait(i + 1, { signal }).then(
        () => 'resolved',
        (e: unknown) => (KeelError.is(e, ErrorCode.CANCELLED) ? 'cancelled' : 'other'),
      ),
    );
    const multi = Fence.of({ semaphore: s, value: 5000 }, { semaphore: kind.create(), value: 1 });
    const groups = [
      waitAll([multi], { signal }).catch((e: unknown) => KeelError.is(e, ErrorCode.CANCELLED)),
      waitAny([multi, multi], { signal }).catch((e: unknown) => KeelError.is(e, ErrorCode.CANCELLED)),
    ];
    expect(listeners(signal)).toBe(1);
    controller.abort();
    expect((await Promise.all(results)).every((r) => r === 'cancelled')).toBe(true);
    expect(await Promise.all(groups)).toEqual([true, true]);
    expect(listeners(signal)).toBe(0);
    expect(s.pendingWaitCount).toBe(0);
    await tick();
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('timeouts remove the shared listener with the last wait', async () => {
    const s = kind.create();
    const { signal } = new AbortController();
    const a = s
      .wait(1, { signal, timeoutMs: 1 })
      .catch((e: unknown) => KeelError.is(e, ErrorCode.DEADLINE_EXCEEDED));
    const b = s.wait(2, { signal });
    expect(listeners(signal)).toBe(1);
    expect(await a).toBe(true);
    expect(listeners(signal)).toBe(1);
    s.signal(2);
    await b;
    expect(listeners(signal)).toBe(0);
  });
});
