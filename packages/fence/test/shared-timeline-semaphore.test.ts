/**
 * SharedTimelineSemaphore across threads. The worker fixtures import the built package
 * (../../dist/index.js): build before running these tests.
 */
import { getEventListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ErrorCode,
  Fence,
  KeelError,
  SHARED_MESSAGE_CAPACITY,
  SHARED_SEMAPHORE_BYTES,
  SharedTimelineSemaphore,
  waitAny,
} from '../src/index';
import { keepAliveHolders } from '../src/keep-alive';
import { flush, type RunningWorker, rejection, startWorker, track } from './helpers';

const running: RunningWorker[] = [];
function spawn(fixture: string, workerData: unknown): RunningWorker {
  const w = startWorker(fixture, workerData);
  running.push(w);
  return w;
}

beforeAll(() => {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`pnpm --filter @keel/fence build\` first`);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(running.splice(0).map((w) => w.worker.terminate()));
});

describe('SharedTimelineSemaphore in one thread', () => {
  it('exposes a structured-cloneable handle; fromHandle attaches to the same state', async () => {
    const s = new SharedTimelineSemaphore(3, { label: 'shared-a' });
    expect(s.handle.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(s.handle.buffer.byteLength).toBe(SHARED_SEMAPHORE_BYTES);
    const cloned = structuredClone(s.handle);
    const t = SharedTimelineSemaphore.fromHandle(cloned);
    expect(t.label).toBe('shared-a');
    expect(t.value).toBe(3);
    // A waiter on the other object is woken through Atomics (not synchronously).
    const w = track(t.wait(5, { timeoutMs: 5000 }));
    s.signal(5);
    expect(t.value).toBe(5);
    await vi.waitFor(() => expect(w.state).toBe('resolved'), { timeout: 5000 });
    expect(t.pendingWaitCount).toBe(0);
    expect(keepAliveHolders()).toBe(0);
  });

  it('fromHandle rejects what is not a handle with INVALID_ARGUMENT', () => {
    const bad = [
      undefined,
      {},
      { buffer: new ArrayBuffer(SHARED_SEMAPHORE_BYTES), label: 'x' },
      { buffer: new SharedArrayBuffer(16), label: 'x' },
      { buffer: new SharedArrayBuffer(SHARED_SEMAPHORE_BYTES), label: 'x' }, // no magic
      { buffer: new SharedTimelineSemaphore().handle.buffer, label: 5 },
    ];
    for (const handle of bad) {
      let caught: unknown;
      try {
        SharedTimelineSemaphore.fromHandle(handle as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    }
  });

  it('waitSync returns for a reached value, times out with DEADLINE_EXCEEDED, throws ABORTED once failed', () => {
    const s = new SharedTimelineSemaphore(2, { label: 'sync' });
    expect(() => s.waitSync(2)).not.toThrow();
    expect(() => s.waitSync(1, { timeoutMs: 0 })).not.toThrow();
    const started = performance.now();
    let caught: unknown;
    try {
      s.waitSync(3, { timeoutMs: 30 });
    } catch (error) {
      caught = error;
    }
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(KeelError.is(caught, ErrorCode.DEADLINE_EXCEEDED)).toBe(true);
    expect((caught as KeelError).message).toContain("'sync'");
    expect(() => s.waitSync(3, { timeoutMs: 0 })).toThrow(/timed out/);
    const failure = new KeelError(ErrorCode.INTERNAL, 'bad');
    s.fail(failure);
    try {
      s.waitSync(1);
    } catch (error) {
      caught = error;
    }
    expect(KeelError.is(caught, ErrorCode.ABORTED)).toBe(true);
    expect((caught as KeelError).cause).toBe(failure);
  });

  it('waitSync spins for spinMicros before blocking, and still honours timeouts and failures', () => {
    const s = new SharedTimelineSemaphore(0, { label: 'spin' });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      let caught: unknown;
      try {
        s.waitSync(1, { spinMicros: bad, timeoutMs: 0 });
      } catch (error) {
        caught = error;
      }
      expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT), String(bad)).toBe(true);
      expect((caught as KeelError).message).toMatch(/spinMicros must be a finite number ≥ 0/);
    }
    // A spin longer than the timeout ends at the deadline: DEADLINE_EXCEEDED, not a longer busy wait.
    const started = performance.now();
    expect(() => s.waitSync(1, { spinMicros: 1_000_000, timeoutMs: 20 })).toThrow(/timed out/);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(15);
    expect(elapsed).toBeLessThan(900);
    // A reached value returns at once, spinning or not.
    s.signal(1);
    expect(() => s.waitSync(1, { spinMicros: 500 })).not.toThrow();
    // A failure ends the spin with ABORTED.
    s.fail(new KeelError(ErrorCode.INTERNAL, 'gone'));
    let caught: unknown;
    try {
      s.waitSync(2, { spinMicros: 500 });
    } catch (error) {
      caught = error;
    }
    expect(KeelError.is(caught, ErrorCode.ABORTED)).toBe(true);
  });

  it('waitSync throws FAILED_PRECONDITION where Atomics.wait is not allowed', () => {
    vi.spyOn(Atomics, 'wait').mockImplementation(() => {
      throw new TypeError('Atomics.wait cannot be called in this context');
    });
    const s = new SharedTimelineSemaphore(5);
    let caught: unknown;
    try {
      s.waitSync(1); // even for a reached value: the thread is the problem, not the value
    } catch (error) {
      caught = error;
    }
    expect(KeelError.is(caught, ErrorCode.FAILED_PRECONDITION)).toBe(true);
    expect((caught as KeelError).message).toMatch(/may block.*use wait\(\)/);
  });

  it('stores the failure code and message in shared memory, cut at a character boundary', () => {
    const s = new SharedTimelineSemaphore(0, { label: 'f' });
    const long = `${'x'.repeat(SHARED_MESSAGE_CAPACITY - 1)}é and more`; // 'é' straddles the limit
    s.fail(new KeelError(ErrorCode.OUT_OF_RANGE, long));
    const other = SharedTimelineSemaphore.fromHandle(s.handle);
    const seen = other.failure;
    expect(seen).not.toBe(s.failure);
    expect(KeelError.is(seen, ErrorCode.OUT_OF_RANGE)).toBe(true);
    expect(seen?.message).toBe(`${'x'.repeat(SHARED_MESSAGE_CAPACITY - 1)}…`);
    const short = new SharedTimelineSemaphore();
    short.fail(new KeelError(ErrorCode.NOT_FOUND, 'ünïcödé ✓'));
    expect(SharedTimelineSemaphore.fromHandle(short.handle).failure?.message).toBe('ünïcödé ✓');
    expect(() => other.query()).toThrow(/x…$/);
  });

  it('a fail on one object is seen, and kept first, by another object of the same buffer', async () => {
    const s = new SharedTimelineSemaphore(0, { label: 'one' });
    const t = SharedTimelineSemaphore.fromHandle(s.handle);
    const w = track(t.wait(1, { timeoutMs: 5000 }));
    s.fail(new KeelError(ErrorCode.UNAVAILABLE, 'first'));
    t.fail(new KeelError(ErrorCode.INTERNAL, 'second'));
    expect(t.failure?.message).toBe('first');
    await vi.waitFor(() => expect(w.state).toBe('rejected'), { timeout: 5000 });
    expect(KeelError.is(w.error, ErrorCode.ABORTED)).toBe(true);
    expect((w.error as KeelError).cause).toMatchObject({ code: 'UNAVAILABLE', message: 'first' });
  });
  it('falls back to polling the epoch where Atomics.waitAsync is missing', async () => {
    const original = Atomics.waitAsync;
    let fresh: typeof import('../src/shared-timeline-semaphore');
    try {
      (Atomics as { waitAsync?: unknown }).waitAsync = undefined;
      vi.resetModules();
      fresh = await import('../src/shared-timeline-semaphore');
    } finally {
      Atomics.waitAsync = original;
    }
    const waitAsync = vi.spyOn(Atomics, 'waitAsync');
    const s = new fresh.SharedTimelineSemaphore(0, { label: 'poll' });
    const t = fresh.SharedTimelineSemaphore.fromHandle(s.handle);
    const w = track(t.wait(2, { timeoutMs: 5000 }));
    s.signal(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(w.state).toBe('pending');
    s.signal(2);
    await vi.waitFor(() => expect(w.state).toBe('resolved'), { timeout: 5000 });
    expect(t.pendingWaitCount).toBe(0);
    expect(waitAsync).not.toHaveBeenCalled();
  });
});

describe('SharedTimelineSemaphore across threads', () => {
  it('a worker signals and the main thread wakes', async () => {
    const s = new SharedTimelineSemaphore(0, { label: 'x' });
    const w = spawn('signal.mjs', { handle: s.handle, value: 7, delayMs: 20 });
    const order: number[] = [];
    const waits = [7, 3, 5].map((v) => s.wait(v, { timeoutMs: 10_000 }).then(() => order.push(v)));
    await w.guard(Promise.all(waits));
    expect(order).toEqual([3, 5, 7]);
    expect(s.value).toBe(7);
    expect(s.pendingWaitCount).toBe(0);
    expect(keepAliveHolders()).toBe(0);
  });

  it('the main thread signals and a worker blocked in waitSync wakes', async () => {
    const ping = new SharedTimelineSemaphore(0, { label: 'ping' });
    const pong = new SharedTimelineSemaphore(0, { label: 'pong' });
    const w = spawn('wait-sync.mjs', { ping: ping.handle, pong: pong.handle, value: 4 });
    await w.next((m) => (m as { blocking?: boolean }).blocking === true);
    const answered = track(pong.wait(4, { timeoutMs: 10_000 }));
    await new Promise((r) => setTimeout(r, 20));
    expect(answered.state).toBe('pending');
    ping.signal(4);
    expect(await w.next((m) => 'woke' in (m as object))).toEqual({ woke: 4 });
    await w.guard(pong.wait(4, { timeoutMs: 10_000 }));
    expect(pong.value).toBe(4);
  });

  it('a worker spinning in waitSync (spinMicros) sees a signal from the main thread', async () => {
    const ping = new SharedTimelineSemaphore(0, { label: 'ping' });
    const pong = new SharedTimelineSemaphore(0, { label: 'pong' });
    const w = spawn('wait-sync.mjs', { ping: ping.handle, pong: pong.handle, value: 2, spinMicros: 50_000 });
    await w.next((m) => (m as { blocking?: boolean }).blocking === true);
    ping.signal(2);
    expect(await w.next((m) => 'woke' in (m as object))).toEqual({ woke: 2 });
    await w.guard(pong.wait(2, { timeoutMs: 10_000 }));
    expect(pong.value).toBe(2);
  });

  it('a worker failing a shared semaphore wakes the main thread with the failure (code and message)', async () => {
    const s = new SharedTimelineSemaphore(0, { label: 'gpu-queue' });
    const message = 'device lost: VK_ERROR_DEVICE_LOST (ünïcode ✓)';
    spawn('fail.mjs', { handle: s.handle, code: ErrorCode.UNAVAILABLE, message, delayMs: 20 });
    const viaCallback = new Promise<KeelError | undefined>((resolve) => s.onReached(1, resolve));
    const error = await rejection(s.wait(1, { timeoutMs: 10_000 }));
    expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
    expect(error.message).toContain("'gpu-queue'");
    const cause = error.cause as KeelError;
    expect(KeelError.is(cause, ErrorCode.UNAVAILABLE)).toBe(true);
    expect(cause.message).toBe(message);
    expect(s.failure).toBe(cause);
    expect(() => s.query()).toThrow(message);
    expect(await viaCallback).toBe(cause);
    expect(keepAliveHolders()).toBe(0);
  });

  it('a worker failing wakes a main thread waiting on a fence and in waitAny', async () => {
    const a = new SharedTimelineSemaphore(0, { label: 'a' });
    const b = new SharedTimelineSemaphore(0, { label: 'b' });
    spawn('fail.mjs', { handle: b.handle, code: ErrorCode.DATA_LOSS, message: 'torn write', delayMs: 20 });
    const fence = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
    const [e1, e2] = await Promise.all([
      rejection(fence.wait({ timeoutMs: 10_000 })),
      rejection(waitAny([Fence.of({ semaphore: a, value: 1 }), fence], { timeoutMs: 10_000 })),
    ]);
    for (const e of [e1, e2]) {
      expect(KeelError.is(e, ErrorCode.ABORTED)).toBe(true);
      expect(e.cause).toMatchObject({ code: 'DATA_LOSS', message: 'torn write' });
    }
    expect(a.pendingWaitCount + b.pendingWaitCount).toBe(0);
  });

  it.each(['sync', 'async'])(
    '10 000 ping-pong rounds with a worker (worker side %s)',
    { timeout: 60_000 },
    async (mode) => {
      const rounds = 10_000;
      const ping = new SharedTimelineSemaphore(0, { label: 'ping' });
      const pong = new SharedTimelineSemaphore(0, { label: 'pong' });
      const w = spawn('ping-pong.mjs', { ping: ping.handle, pong: pong.handle, rounds, mode });
      for (let i = 1; i <= rounds; i++) {
        ping.signal(i);
        await w.guard(pong.wait(i, { timeoutMs: 10_000 }));
      }
      expect(pong.value).toBe(rounds);
      expect(await w.exited).toBe(0);
      expect(keepAliveHolders()).toBe(0);
    },
  );

  it('concurrent signals from two threads never lower the payload', { timeout: 30_000 }, async () => {
    // Both workers signal just above the current payload as fast as they can; with a non-atomic
    // read-compare-write signal the payload drops now and then (seen by them and by this thread).
    const s = new SharedTimelineSemaphore(0, { label: 'race' });
    const go = new SharedArrayBuffer(4);
    const end = 300_000;
    const a = spawn('concurrent-signal.mjs', { handle: s.handle, end, go, bump: 1 });
    const b = spawn('concurrent-signal.mjs', { handle: s.handle, end, go, bump: 2 });
    await new Promise((r) => setTimeout(r, 50));
    const gate = new Int32Array(go);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    // Meanwhile this thread watches the payload: it must never decrease.
    let decreases = 0;
    let last = 0;
    const deadline = performance.now() + 10_000;
    while (last < end && performance.now() < deadline) {
      const v = s.value;
      if (v < last) decreases++;
      last = Math.max(last, v);
    }
    expect(decreases).toBe(0);
    const results = (await Promise.all([a.next(), b.next()])) as {
      ok: number;
      lost: number;
      lowered: number;
    }[];
    for (const r of results) expect(r.lowered).toBe(0);
    expect(s.value).toBe(end);
  });

  it('waits settled by a worker signalling in a loop leave no abort listener behind', {
    timeout: 10_000,
  }, async () => {
    // A signal from the worker can land inside wait(), after its reached check: the waiter is then
    // settled as it is queued, and must not subscribe to the AbortSignal afterwards.
    const s = new SharedTimelineSemaphore(0, { label: 'loop' });
    const stop = new SharedArrayBuffer(4);
    const w = spawn('signal-loop.mjs', { handle: s.handle, stop });
    await new Promise((resolve) => w.worker.once('online', resolve));
    const controller = new AbortController();
    let leakedAfter = -1;
    const until = performance.now() + 1500;
    for (let n = 1; performance.now() < until; n++) {
      await w.guard(s.wait(s.value + 1, { abortSignal: controller.signal, timeoutMs: 5000 }));
      if (getEventListeners(controller.signal, 'abort').length > 0) {
        leakedAfter = n;
        break;
      }
    }
    Atomics.store(new Int32Array(stop), 0, 1);
    expect(leakedAfter).toBe(-1);
    expect(s.pendingWaitCount).toBe(0);
  });

  it('a pending shared wait keeps a worker alive until another thread signals it (200 ms later)', async () => {
    const s = new SharedTimelineSemaphore(0, { label: 'alive' });
    const w = spawn('keep-alive.mjs', { handle: s.handle, mode: 'keel' });
    await w.next((m) => (m as { waiting?: boolean }).waiting === true);
    let exitedEarly = false;
    void w.exited.then(() => {
      exitedEarly = s.value === 0;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(exitedEarly).toBe(false);
    s.signal(1);
    expect(await w.next((m) => 'done' in (m as object))).toEqual({ done: 1 });
    // The keep-alive goes with the wait: the worker now exits on its own.
    expect(await w.exited).toBe(0);
  });

  it('control: a bare Atomics.waitAsync does not keep a worker alive (why the keep-alive exists)', async () => {
    const s = new SharedTimelineSemaphore(0);
    const w = spawn('keep-alive.mjs', { handle: s.handle, mode: 'raw' });
    const code = await Promise.race([
      w.exited,
      new Promise((r) => setTimeout(() => r('still running'), 2000)),
    ]);
    expect(code).toBe(0);
    s.signal(1);
    await flush();
    expect(w.messages.some((m) => 'done' in (m as object))).toBe(false);
  });
});
