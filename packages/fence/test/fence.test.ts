import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, Fence, KeelError, TimelineSemaphore, type Timepoint } from '../src/index';
import { flush, kinds, rejection, track } from './helpers';

function values(fence: Fence): [string, number][] {
  return fence.timepoints.map((tp) => [tp.semaphore.label, tp.value]);
}

describe('Fence construction', () => {
  const a = new TimelineSemaphore(0, { label: 'a' });
  const b = new TimelineSemaphore(0, { label: 'b' });
  const c = new TimelineSemaphore(0, { label: 'c' });

  it('of() keeps one timepoint per semaphore with the highest value, in first-appearance order', () => {
    const f = Fence.of(
      { semaphore: a, value: 1 },
      { semaphore: b, value: 5 },
      { semaphore: a, value: 3 },
      { semaphore: b, value: 2 },
    );
    expect(values(f)).toEqual([
      ['a', 3],
      ['b', 5],
    ]);
    expect(f.isEmpty).toBe(false);
    expect(Object.isFrozen(f.timepoints)).toBe(true);
    expect(Object.isFrozen(f.timepoints[0])).toBe(true);
  });

  it('join keeps the highest value per semaphore', () => {
    const f1 = Fence.of({ semaphore: a, value: 4 }, { semaphore: b, value: 1 });
    const f2 = Fence.of({ semaphore: b, value: 7 }, { semaphore: c, value: 2 }, { semaphore: a, value: 2 });
    expect(values(Fence.join(f1, f2))).toEqual([
      ['a', 4],
      ['b', 7],
      ['c', 2],
    ]);
    expect(values(Fence.join(f2, f1))).toEqual([
      ['b', 7],
      ['c', 2],
      ['a', 4],
    ]);
    // The inputs are unchanged.
    expect(values(f1)).toEqual([
      ['a', 4],
      ['b', 1],
    ]);
  });

  it('join of many fences uses the indexed path with the same result', () => {
    const sems = Array.from({ length: 40 }, (_, i) => new TimelineSemaphore(0, { label: `s${i}` }));
    const f1 = Fence.of(...sems.map((semaphore, i) => ({ semaphore, value: i })));
    const f2 = Fence.of(...sems.map((semaphore, i) => ({ semaphore, value: 40 - i })));
    const joined = Fence.join(f1, f2);
    expect(joined.timepoints).toHaveLength(40);
    expect(joined.timepoints.map((tp) => tp.value)).toEqual(sems.map((_, i) => Math.max(i, 40 - i)));
  });

  it('with() adds or raises one timepoint and returns a new fence', () => {
    const f = Fence.of({ semaphore: a, value: 1 });
    const g = f.with(b, 2).with(a, 5).with(a, 3);
    expect(values(g)).toEqual([
      ['a', 5],
      ['b', 2],
    ]);
    expect(values(f)).toEqual([['a', 1]]);
  });

  it('the empty fence', async () => {
    expect(Fence.empty.isEmpty).toBe(true);
    expect(Fence.empty.timepoints).toEqual([]);
    expect(Fence.of()).toBe(Fence.empty);
    expect(Fence.join()).toBe(Fence.empty);
    expect(Fence.join(Fence.empty, Fence.empty)).toBe(Fence.empty);
    expect(Fence.empty.query()).toBe('signaled');
    await expect(Fence.empty.wait()).resolves.toBeUndefined();
    await expect(Fence.empty.wait({ timeoutMs: 0 })).resolves.toBeUndefined();
    expect(() => Fence.empty.signal()).not.toThrow();
    expect(() => Fence.empty.fail(new Error('x'))).not.toThrow();
    const cb = vi.fn();
    Fence.empty.onReached(cb);
    expect(cb).toHaveBeenCalledWith();
    const f = Fence.of({ semaphore: a, value: 1 });
    expect(Fence.join(Fence.empty, f)).toBe(f);
    expect(values(Fence.empty.with(a, 2))).toEqual([['a', 2]]);
  });

  it.each([
    [{ semaphore: {}, value: 1 }, /not a Keel semaphore/],
    [{ semaphore: a, value: -1 }, /not a non-negative safe integer/],
    [{ semaphore: a, value: 0.5 }, /not a non-negative safe integer/],
    [{ semaphore: a, value: 2 ** 53 }, /not a non-negative safe integer/],
    [null, /not a timepoint/],
    [{ semaphore: a }, /value/],
  ])('of() rejects %o with INVALID_ARGUMENT', (tp, pattern) => {
    let caught: unknown;
    try {
      Fence.of({ semaphore: b, value: 1 }, tp as Timepoint);
    } catch (error) {
      caught = error;
    }
    expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    expect((caught as KeelError).message).toMatch(pattern);
    expect((caught as KeelError).message).toContain('timepoint 1');
  });

  it('with() and join() validate too', () => {
    expect(() => Fence.empty.with({} as never, 1)).toThrow(/not a Keel semaphore/);
    expect(() => Fence.empty.with(a, -3)).toThrow(/-3/);
    expect(() => Fence.join(Fence.empty, {} as never)).toThrow(/argument 1.*not a Fence/);
  });

  it('the constructor cannot be called directly (from JavaScript): INVALID_ARGUMENT naming Fence.of', () => {
    const Ctor = Fence as unknown as new (timepoints: unknown[]) => Fence;
    for (const timepoints of [
      [
        { semaphore: a, value: -3 },
        { semaphore: {}, value: 'x' },
      ],
      [],
      undefined,
    ]) {
      let caught: unknown;
      try {
        new Ctor(timepoints as unknown[]);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
      expect((caught as KeelError).message).toContain('Fence.of');
    }
  });

  it('Fence.empty cannot be replaced', () => {
    const empty = Fence.empty;
    expect(() => {
      (Fence as { empty: unknown }).empty = 5;
    }).toThrow(TypeError);
    expect(Fence.empty).toBe(empty);
    expect(Fence.empty.isEmpty).toBe(true);
  });

  it('joins a list too long to spread (what waitAll does) without overflowing the stack', () => {
    const f = Fence.of({ semaphore: a, value: 1 });
    const g = Fence.of({ semaphore: a, value: 2 }, { semaphore: b, value: 1 });
    const many = new Array<Fence>(300_000).fill(f);
    many[150_000] = g;
    // joinList is the body of Fence.join (internal: the variadic form spreads its list onto the stack).
    expect(values(Fence.joinList(many))).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(Fence.joinList(new Array<Fence>(300_000).fill(f))).toBe(f);
    expect(values(Fence.join(f, g, f))).toEqual(values(Fence.joinList([f, g, f])));
    expect(() => Fence.joinList([f, 5 as never])).toThrow(/Fence.join: argument 1/);
  });

  it('accepts a semaphore of a duplicated package copy through the global brand, and nothing unbranded', () => {
    const { label, value, failure, pendingWaitCount } = a;
    const lookalike = { label, value, failure, pendingWaitCount };
    expect(() => Fence.of({ semaphore: lookalike as never, value: 1 })).toThrow(/not a Keel semaphore/);
    const foreign = { ...lookalike, [Symbol.for('@keel/Semaphore')]: true };
    expect(Fence.of({ semaphore: foreign as never, value: 1 }).timepoints[0]?.semaphore).toBe(foreign);
  });
});

describe.each(kinds)('Fence over $name', (kind) => {
  it('signal() signals every timepoint; query() follows', () => {
    const a = kind.create(0, 'a');
    const b = kind.create(3, 'b');
    const f = Fence.of({ semaphore: a, value: 2 }, { semaphore: b, value: 4 });
    expect(f.query()).toBe('pending');
    f.signal();
    expect(a.value).toBe(2);
    expect(b.value).toBe(4);
    expect(f.query()).toBe('signaled');
  });

  it('signal() checks every timepoint before signalling any', () => {
    const a = kind.create(0, 'a');
    const b = kind.create(9, 'b');
    const f = Fence.of({ semaphore: a, value: 2 }, { semaphore: b, value: 4 });
    expect(() => f.signal()).toThrow(/'b': signal\(4\) must be greater than the current payload 9/);
    expect(a.value).toBe(0);
  });

  it('query() reports pending until every timepoint is reached', () => {
    const a = kind.create();
    const b = kind.create();
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    a.signal(1);
    expect(f.query()).toBe('pending');
    b.signal(5);
    expect(f.query()).toBe('signaled');
  });

  it('wait() resolves once all timepoints are reached', async () => {
    const a = kind.create();
    const b = kind.create();
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 2 });
    const w = track(f.wait({ timeoutMs: 5000 }));
    a.signal(1);
    await flush();
    expect(w.state).toBe('pending');
    b.signal(2);
    await flush();
    expect(w.state).toBe('resolved');
    expect(a.pendingWaitCount + b.pendingWaitCount).toBe(0);
  });

  it('fail() fails every semaphore; query throws; wait rejects ABORTED with the failure', async () => {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const pending = f.wait();
    const failure = new KeelError(ErrorCode.RESOURCE_EXHAUSTED, 'out of memory');
    f.fail(failure);
    expect(a.failure).toBe(failure);
    expect(b.failure).toBe(failure);
    expect(() => f.query()).toThrow(failure);
    const error = await rejection(pending);
    expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
    expect(error.cause).toBe(failure);
    expect(error.message).toContain("'a'");
    const again = await rejection(f.wait());
    expect(again.cause).toBe(failure);
  });

  it('wait() rejects ABORTED when one semaphore fails, even if others are reached', async () => {
    const a = kind.create(0, 'a');
    const b = kind.create(0, 'b');
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const pending = f.wait();
    a.signal(1);
    const failure = new KeelError(ErrorCode.UNAVAILABLE, 'lost');
    b.fail(failure);
    const error = await rejection(pending);
    expect(error.cause).toBe(failure);
    expect(error.message).toContain("'b'");
    expect(a.pendingWaitCount + b.pendingWaitCount).toBe(0);
  });

  it('onReached fires once, when the last timepoint is reached', () => {
    const a = kind.create();
    const b = kind.create();
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 2 });
    const cb = vi.fn();
    f.onReached(cb);
    b.signal(2);
    expect(cb).not.toHaveBeenCalled();
    a.signal(1);
    expect(cb).toHaveBeenCalledOnce();
    expect(cb).toHaveBeenCalledWith();
    a.signal(2);
    expect(cb).toHaveBeenCalledOnce();
    // Already reached: runs before returning.
    const now = vi.fn();
    f.onReached(now);
    expect(now).toHaveBeenCalledOnce();
  });
});
