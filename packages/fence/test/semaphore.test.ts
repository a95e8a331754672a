/**
 * The semaphore conformance tests (after IREE's semaphore CTS), run against both implementations in
 * one thread. Cross-thread behaviour is in shared-timeline-semaphore.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, isSemaphore, KeelError } from '../src/index';
import { flush, kinds, rejection, track } from './helpers';

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(kinds)('$name', (kind) => {
  describe('payload', () => {
    it('starts at 0 by default, or at the initial value', () => {
      expect(kind.create().value).toBe(0);
      const s = kind.create(5);
      expect(s.value).toBe(5);
      expect(s.query()).toBe(5);
      expect(s.failure).toBeUndefined();
      expect(isSemaphore(s)).toBe(true);
      expect(kind.create(Number.MAX_SAFE_INTEGER).value).toBe(Number.MAX_SAFE_INTEGER);
    });

    it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '3', 3n])(
      'rejects the initial value %s with INVALID_ARGUMENT',
      (initial) => {
        let caught: unknown;
        try {
          kind.create(initial as number);
        } catch (error) {
          caught = error;
        }
        expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect((caught as KeelError).message).toMatch(/initial value/);
      },
    );

    it('signals 2 → 3 → 40', () => {
      const s = kind.create(0);
      s.signal(2);
      expect(s.value).toBe(2);
      s.signal(3);
      expect(s.query()).toBe(3);
      s.signal(40);
      expect(s.value).toBe(40);
      expect(s.query()).toBe(40);
    });

    it('signals up to 2^53 − 1', () => {
      const s = kind.create(Number.MAX_SAFE_INTEGER - 1);
      s.signal(Number.MAX_SAFE_INTEGER);
      expect(s.value).toBe(Number.MAX_SAFE_INTEGER);
    });

    it.each([
      [40, 'equal'],
      [39, 'lower'],
      [0, 'zero'],
    ])('rejects a signal to %i (%s) with INVALID_ARGUMENT naming the semaphore and both values', (v) => {
      const s = kind.create(40, 'queue-7');
      let caught: unknown;
      try {
        s.signal(v);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
      const message = (caught as KeelError).message;
      expect(message).toContain("'queue-7'");
      expect(message).toContain(`signal(${v})`);
      expect(message).toContain('40');
      expect(s.value).toBe(40);
    });

    it.each([-1, 1.5, Number.NaN, 2 ** 53, Number.POSITIVE_INFINITY, '41', undefined])(
      'rejects the signal value %s with INVALID_ARGUMENT',
      (v) => {
        const s = kind.create(1, 'x');
        expect(() => s.signal(v as number)).toThrow(/'x': signal/);
        try {
          s.signal(v as number);
        } catch (error) {
          expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        }
        expect(s.value).toBe(1);
      },
    );
  });

  describe('wait', () => {
    it('resolves at once for a reached value (also with timeoutMs: 0)', async () => {
      const s = kind.create(5);
      await expect(s.wait(5)).resolves.toBeUndefined();
      await expect(s.wait(3, { timeoutMs: 0 })).resolves.toBeUndefined();
      await expect(s.wait(0)).resolves.toBeUndefined();
      expect(s.pendingWaitCount).toBe(0);
    });

    it('may wait before any signal; the signal wakes it', async () => {
      const s = kind.create();
      const w = track(s.wait(1));
      await flush();
      expect(w.state).toBe('pending');
      expect(s.pendingWaitCount).toBe(1);
      s.signal(1);
      await flush();
      expect(w.state).toBe('resolved');
      expect(s.pendingWaitCount).toBe(0);
    });

    it('wakes on a signal beyond the awaited value', async () => {
      const s = kind.create();
      const w = track(s.wait(10));
      s.signal(100);
      await flush();
      expect(w.state).toBe('resolved');
    });

    it('does not wake on a smaller signal', async () => {
      const s = kind.create();
      const w = track(s.wait(10));
      s.signal(9);
      await flush();
      expect(w.state).toBe('pending');
      expect(s.pendingWaitCount).toBe(1);
      s.signal(10);
      await flush();
      expect(w.state).toBe('resolved');
    });

    it('wakes 1 000 waiters of one value, in arrival order', async () => {
      const s = kind.create();
      const order: number[] = [];
      const waits = Array.from({ length: 1000 }, (_, i) => s.wait(7).then(() => order.push(i)));
      expect(s.pendingWaitCount).toBe(1000);
      s.signal(7);
      await Promise.all(waits);
      expect(order).toEqual(Array.from({ length: 1000 }, (_, i) => i));
      expect(s.pendingWaitCount).toBe(0);
    });

    it('resolves waiters in value order', async () => {
      const s = kind.create();
      const values = [9, 3, 7, 1, 8, 3, 2, 10, 5, 4, 6, 1];
      const order: string[] = [];
      const waits = values.map((v, i) => s.wait(v).then(() => order.push(`${v}#${i}`)));
      s.signal(6);
      await flush();
      expect(order).toEqual(['1#3', '1#11', '2#6', '3#1', '3#5', '4#9', '5#8', '6#10']);
      expect(s.pendingWaitCount).toBe(4);
      s.signal(10);
      await Promise.all(waits);
      expect(order.slice(8)).toEqual(['7#2', '8#4', '9#0', '10#7']);
    });

    it.each([
      [-1, undefined, /wait/],
      [1.5, undefined, /wait/],
      [1, { timeoutMs: -1 }, /timeoutMs/],
      [1, { timeoutMs: Number.NaN }, /timeoutMs/],
      [1, { timeoutMs: '5' }, /timeoutMs/],
      [1, { signal: {} }, /AbortSignal/],
      [1, null, /options/],
    ])('rejects wait(%s, %o) with INVALID_ARGUMENT', async (value, options, pattern) => {
      const s = kind.create();
      const error = await rejection(s.wait(value, options as never));
      expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
      expect(error.message).toMatch(pattern);
      expect(s.pendingWaitCount).toBe(0);
    });
  });

  describe('failure', () => {
    it('query throws the failure, value keeps the last payload, waiters reject ABORTED with it as cause', async () => {
      const s = kind.create(3, 'gpu');
      const early = s.wait(5);
      const reached = s.wait(2);
      const failure = new KeelError(ErrorCode.UNAVAILABLE, 'device lost');
      s.fail(failure);
      expect(s.failure).toBe(failure);
      expect(() => s.query()).toThrow(failure);
      expect(s.value).toBe(3);
      await expect(reached).resolves.toBeUndefined(); // it was reached before the failure
      const error = await rejection(early);
      expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
      expect(error.cause).toBe(failure);
      expect(error.message).toContain("'gpu'");
      expect(error.message).toContain('device lost');
      expect(s.pendingWaitCount).toBe(0);
    });

    it('rejects waits that start after the failure, even for a reached value', async () => {
      const s = kind.create(10);
      const failure = new KeelError(ErrorCode.INTERNAL, 'kernel crashed');
      s.fail(failure);
      for (const v of [1, 10, 11]) {
        const error = await rejection(s.wait(v));
        expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
        expect(error.cause).toBe(failure);
      }
    });

    it('keeps the first failure; later fails and signals are ignored', () => {
      const s = kind.create(1);
      const first = new KeelError(ErrorCode.DATA_LOSS, 'first');
      s.fail(first);
      s.fail(new KeelError(ErrorCode.INTERNAL, 'second'));
      expect(s.failure).toBe(first);
      expect(() => s.signal(5)).not.toThrow();
      expect(() => s.signal(0)).not.toThrow(); // even a lower one: a silent no-op once failed
      expect(s.value).toBe(1);
      expect(() => s.query()).toThrow('first');
    });

    it('wraps a non-KeelError failure as INTERNAL with the value as cause', () => {
      const s = kind.create(0, 'w');
      const cause = new RangeError('bad');
      s.fail(cause);
      expect(KeelError.is(s.failure, ErrorCode.INTERNAL)).toBe(true);
      expect(s.failure?.cause).toBe(cause);
      expect(s.failure?.message).toContain('RangeError: bad');
      expect(s.failure?.message).toContain("'w'");
    });
  });

  describe('onReached', () => {
    it('runs synchronously inside the signal that reaches it, in value order', () => {
      const s = kind.create();
      const calls: string[] = [];
      s.onReached(3, (e) => calls.push(`3:${e}`));
      s.onReached(1, (e) => calls.push(`1:${e}`));
      s.onReached(5, (e) => calls.push(`5:${e}`));
      s.signal(2);
      expect(calls).toEqual(['1:undefined']);
      s.signal(4);
      expect(calls).toEqual(['1:undefined', '3:undefined']);
      expect(s.pendingWaitCount).toBe(1);
    });

    it('runs before returning when already reached or failed', () => {
      const s = kind.create(4);
      const calls: unknown[] = [];
      const r = s.onReached(4, (e) => calls.push(e ?? 'ok'));
      expect(calls).toEqual(['ok']);
      r.cancel(); // a no-op
      const failure = new KeelError(ErrorCode.ABORTED, 'f');
      s.fail(failure);
      s.onReached(1, (e) => calls.push(e));
      expect(calls).toEqual(['ok', failure]);
    });

    it('passes the failure itself to pending callbacks', () => {
      const s = kind.create();
      const seen: unknown[] = [];
      s.onReached(1, (e) => seen.push(e));
      s.onReached(2, (e) => seen.push(e));
      const failure = new KeelError(ErrorCode.CANCELLED, 'stop');
      s.fail(failure);
      expect(seen).toEqual([failure, failure]);
      expect(s.pendingWaitCount).toBe(0);
    });

    it('cancel removes the registration', () => {
      const s = kind.create();
      const cb = vi.fn();
      const r = s.onReached(2, cb);
      expect(s.pendingWaitCount).toBe(1);
      r.cancel();
      r.cancel();
      expect(s.pendingWaitCount).toBe(0);
      s.signal(5);
      expect(cb).not.toHaveBeenCalled();
    });

    it('is re-entrant: callbacks may signal and register; new reached registrations run in value order', () => {
      const s = kind.create();
      const calls: number[] = [];
      s.onReached(1, () => {
        calls.push(1);
        s.onReached(2, () => calls.push(2)); // reached already (payload 3), queued behind... value 2
        s.signal(10); // re-entrant signal while dispatching
      });
      s.onReached(3, () => calls.push(3));
      s.onReached(8, () => calls.push(8));
      s.onReached(11, () => calls.push(11));
      s.signal(3);
      expect(calls).toEqual([1, 2, 3, 8]);
      expect(s.value).toBe(10);
      expect(s.pendingWaitCount).toBe(1);
    });

    it('reports an exception of a callback without disturbing the other waiters', () => {
      const reported: (() => void)[] = [];
      vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) => {
        reported.push(fn);
      });
      const s = kind.create();
      const after = vi.fn();
      s.onReached(1, () => {
        throw new Error('callback bug');
      });
      s.onReached(2, after);
      expect(() => s.signal(2)).not.toThrow();
      expect(after).toHaveBeenCalledOnce();
      expect(reported).toHaveLength(1);
      expect(() => reported[0]?.()).toThrow('callback bug');
    });

    it('validates its arguments', () => {
      const s = kind.create();
      expect(() => s.onReached(-1, () => {})).toThrow(KeelError);
      expect(() => s.onReached(1, 'nope' as never)).toThrow(/callback must be a function/);
    });
  });
});
