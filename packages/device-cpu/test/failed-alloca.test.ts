/**
 * A queueAlloca whose wait fails (the allocation fails ABORTED and the buffer is never backed) leaves
 * nothing behind in the device: once the caller drops the buffer it is garbage-collected, with or
 * without a queueDealloca (the device holds a queue-allocated buffer only while an operation that names
 * it is in flight). A later queueDealloca of a failed buffer is still accepted (frees nothing, signals
 * after its wait), the allocator's statistics count nothing live, and destroy() still marks a failed
 * buffer the caller kept `destroyed`. Retention is checked with a FinalizationRegistry after forced
 * garbage collections, in both modes.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const at = (semaphore: Semaphore, value: number): Fence => Fence.of({ semaphore, value });

/** Issues an alloca whose wait fails, and waits until its signal has failed. */
async function failedAlloca(device: Device, label: string): Promise<Buffer> {
  const upstream = new TimelineSemaphore(0);
  const signal = device.createSemaphore(0);
  const buffer = device.queueAlloca(
    1,
    at(upstream, 1),
    at(signal, 1),
    { usage: BufferUsage.DEFAULT, label },
    512,
  );
  upstream.fail(new KeelError(ErrorCode.DATA_LOSS, `upstream of ${label} failed`));
  const error = await signal.wait(1, { timeoutMs: 5000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect((error as KeelError | undefined)?.code).toBe(ErrorCode.ABORTED);
  return buffer;
}

/** Forces collections until `names` were all finalized (or gives up), and returns what was collected. */
async function collect(collected: Set<string>, names: readonly string[]): Promise<string[]> {
  for (let i = 0; i < 20 && !names.every((name) => collected.has(name)); i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [...collected].sort();
}

describe.each(['sync', 'task'] as const)('device-cpu %s: a failed queueAlloca is not retained', (mode) => {
  it('a failed buffer the caller drops is collected, with or without a dealloca', async () => {
    const device: CpuDevice = createCpuDevice({ mode, queues: 2, workersPerQueue: 1 });
    try {
      const collected = new Set<string>();
      const registry = new FinalizationRegistry<string>((name) => collected.add(name));
      // Dropped without a dealloca.
      registry.register(await failedAlloca(device, 'dropped'), 'dropped');
      // Deallocated after the failure: accepted, frees nothing, signals after its wait.
      await (async () => {
        const buffer = await failedAlloca(device, 'deallocated');
        const done = device.createSemaphore(0);
        device.queueDealloca(1, Fence.empty, at(done, 1), buffer);
        await done.wait(1, { timeoutMs: 5000 });
        expect(buffer.state).toBe('deallocated');
        registry.register(buffer, 'deallocated');
      })();
      expect(await collect(collected, ['dropped', 'deallocated'])).toEqual(['deallocated', 'dropped']);
      const stats = device.allocatorStats().get('tlsf');
      expect(stats?.liveBytes).toBe(0);
      expect(stats?.failures).toBe(2);
      expect(device.heldQueueBytes()).toBe(0);
    } finally {
      await device.destroy();
    }
  });

  it('a failed buffer kept by the caller: dealloca still accepted later, destroy() marks it destroyed', async () => {
    const device = createCpuDevice({ mode, queues: 2, workersPerQueue: 1 });
    const kept = await failedAlloca(device, 'kept');
    const dropped = await failedAlloca(device, 'kept too');
    expect(kept.state).toBe('live');
    // Collections in between do not make a later dealloca fail.
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const done = device.createSemaphore(0);
    device.queueDealloca(1, Fence.empty, at(done, 1), kept);
    await done.wait(1, { timeoutMs: 5000 });
    expect(() => device.queueDealloca(1, Fence.empty, Fence.empty, kept)).toThrow(
      expect.objectContaining({ code: ErrorCode.FAILED_PRECONDITION }),
    );
    // A live queue allocation, never deallocated, and a device buffer: both destroyed with the device.
    const s = device.createSemaphore(0);
    const live = device.queueAlloca(1, Fence.empty, at(s, 1), { usage: BufferUsage.DEFAULT }, 64);
    await s.wait(1, { timeoutMs: 5000 });
    const own = device.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
    expect(device.allocatorStats().get('tlsf')?.liveBytes).toBe(64);
    await device.destroy();
    expect(dropped.state).toBe('destroyed');
    expect(live.state).toBe('destroyed');
    expect(own.state).toBe('destroyed');
    expect(kept.state).toBe('deallocated');
    expect(() => device.queueDealloca(1, Fence.empty, Fence.empty, dropped)).toThrow(
      expect.objectContaining({ code: ErrorCode.FAILED_PRECONDITION }),
    );
  });
});
