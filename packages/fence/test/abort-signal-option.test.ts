import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  Fence,
  KeelError,
  type Semaphore,
  SharedTimelineSemaphore,
  TimelineSemaphore,
  type WaitOptions,
  waitAll,
  waitAny,
} from '../src/index';

async function rejection(p: Promise<unknown>): Promise<KeelError> {
  try {
    await p;
  } catch (e) {
    expect(KeelError.is(e)).toBe(true);
    return e as KeelError;
  }
  throw new Error('did not reject');
}

// Every wait that takes WaitOptions, over a semaphore that will not reach 1 by itself.
const waits: [string, (s: Semaphore, o: WaitOptions) => Promise<unknown>][] = [
  ['TimelineSemaphore.wait', (s, o) => s.wait(1, o)],
  ['Fence.wait', (s, o) => Fence.of({ semaphore: s, value: 1 }).wait(o)],
  ['waitAll', (s, o) => waitAll([Fence.of({ semaphore: s, value: 1 })], o)],
  ['waitAny', (s, o) => waitAny([Fence.of({ semaphore: s, value: 1 })], o)],
];

describe.each(waits)('%s: abortSignal and its deprecated alias signal', (_name, wait) => {
  for (const make of [() => new TimelineSemaphore(0), () => new SharedTimelineSemaphore(0)]) {
    it(`abortSignal cancels a pending wait (${make().constructor.name})`, async () => {
      const s = make();
      const controller = new AbortController();
      const p = wait(s, { abortSignal: controller.signal });
      controller.abort('stop');
      const e = await rejection(p);
      expect(e.code).toBe(ErrorCode.CANCELLED);
      expect(e.cause).toBe('stop');
      expect(s.pendingWaitCount).toBe(0);
    });
  }

  it('an already-aborted abortSignal rejects at once', async () => {
    const e = await rejection(wait(new TimelineSemaphore(0), { abortSignal: AbortSignal.abort('early') }));
    expect(e.code).toBe(ErrorCode.CANCELLED);
    expect(e.cause).toBe('early');
  });

  it('the deprecated signal still cancels', async () => {
    const controller = new AbortController();
    const p = wait(new TimelineSemaphore(0), { signal: controller.signal });
    controller.abort('old name');
    const e = await rejection(p);
    expect(e.code).toBe(ErrorCode.CANCELLED);
    expect(e.cause).toBe('old name');
  });

  it('both names with the same AbortSignal are accepted', async () => {
    const controller = new AbortController();
    const s = new TimelineSemaphore(0);
    const p = wait(s, { abortSignal: controller.signal, signal: controller.signal });
    s.signal(1);
    await p;
  });

  it('both names with different AbortSignals are INVALID_ARGUMENT', async () => {
    const e = await rejection(
      wait(new TimelineSemaphore(0), {
        abortSignal: new AbortController().signal,
        signal: new AbortController().signal,
      }),
    );
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(e.message).toMatch(/abortSignal and its deprecated alias signal name different AbortSignals/);
  });

  it('an abortSignal that is not an AbortSignal is INVALID_ARGUMENT, named', async () => {
    const e = await rejection(wait(new TimelineSemaphore(0), { abortSignal: {} as AbortSignal }));
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(e.message).toMatch(/abortSignal must be an AbortSignal, got/);
  });
});
