/**
 * Bad input and crash regressions of issue 15 on the CPU device (both modes): nothing crashes the
 * process, bad arguments get a KeelError naming the rule, messages show values as they are.
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/index.js';

const STORAGE = BufferUsage.DEFAULT;
const devices: CpuDevice[] = [];
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => {
  uncaught.push(error);
};
beforeEach(() => {
  uncaught.length = 0;
  process.prependListener('uncaughtException', onUncaught);
});
afterEach(async () => {
  process.removeListener('uncaughtException', onUncaught);
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode, queues = 2): CpuDevice {
  const d = createCpuDevice({ mode, queues, workersPerQueue: 1 });
  devices.push(d);
  return d;
}

function thrown(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return error;
    throw new Error(`not a KeelError: ${String(error)}`);
  }
  throw new Error('did not throw');
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

describe.each(['sync', 'task'] as const)('device-cpu %s: bad input', (mode) => {
  it('queueAlloca/queueDealloca leave a signal timepoint already passed alone (no crash)', async () => {
    const d = device(mode);
    const s = new TimelineSemaphore(5);
    const buffer = d.queueAlloca(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 3 }),
      { usage: STORAGE },
      64,
    );
    const host = new TimelineSemaphore(0);
    const second = d.queueAlloca(
      1,
      Fence.of({ semaphore: host, value: 1 }),
      Fence.of({ semaphore: s, value: 4 }),
      { usage: STORAGE },
      64,
    );
    host.signal(1);
    const out = new Uint8Array(64);
    const done = d.createSemaphore(0);
    d.queueRead(1, Fence.empty, Fence.of({ semaphore: done, value: 1 }), { buffer }, out);
    await done.wait(1, { timeoutMs: 5000 });
    d.queueDealloca(1, Fence.empty, Fence.of({ semaphore: s, value: 2 }), buffer);
    d.queueDealloca(1, Fence.empty, Fence.empty, second);
    await tick();
    expect(uncaught).toEqual([]);
    expect(s.value).toBe(5);
    expect(s.failure).toBeUndefined();
  });
});
