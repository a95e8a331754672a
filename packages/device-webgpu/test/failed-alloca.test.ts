/**
 * A queueAlloca whose wait fails (the allocation fails ABORTED, the buffer is never backed) leaves
 * nothing behind in the device: once the caller drops the buffer it is garbage-collected, with or
 * without a queueDealloca, and a later queueDealloca of a failed buffer is still accepted (frees
 * nothing, signals after its wait). The CPU device had this leak (its test: device-cpu
 * failed-alloca.test.ts); this guards the WebGPU device, on Dawn in Node (skipped without an adapter).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createWebGpuDevice } from '../src/index';
import { probeWebGpu } from './webgpu-probe';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const probe = await probeWebGpu();
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

describe.skipIf(!probe.available)(
  `device-webgpu: a failed queueAlloca is not retained${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it('a failed buffer the caller drops is collected, with or without a dealloca', async () => {
      const device = await createWebGpuDevice();
      try {
        const collected = new Set<string>();
        const registry = new FinalizationRegistry<string>((name) => collected.add(name));
        registry.register(await failedAlloca(device, 'dropped'), 'dropped');
        await (async () => {
          const buffer = await failedAlloca(device, 'deallocated');
          const done = device.createSemaphore(0);
          device.queueDealloca(1, Fence.empty, at(done, 1), buffer);
          await done.wait(1, { timeoutMs: 5000 });
          registry.register(buffer, 'deallocated');
        })();
        for (let i = 0; i < 20 && collected.size < 2; i++) {
          gc();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect([...collected].sort()).toEqual(['deallocated', 'dropped']);
        const stats = device.allocatorStats().get('tlsf');
        expect(stats?.liveBytes).toBe(0);
        expect(stats?.failures).toBe(2);
      } finally {
        await device.destroy();
      }
    });
  },
);
