/**
 * Failure behaviour of task mode on Web Workers (cross-origin isolated page, vitest.browser.config.ts),
 * as device-cpu.test.ts checks it on worker_threads: a kernel module that cannot be imported is
 * INVALID_ARGUMENT and the device carries on; an uncaught exception in a worker (outside a kernel
 * call) loses the device with UNAVAILABLE, fails pending work and ends every worker.
 */
import { Fence, KeelError } from '@keel/fence';
import { QueueAffinity } from '@keel/hal';
import { expect, it } from 'vitest';
import { createCpuDevice } from '../dist/index.js';

const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);

it('a kernel module that cannot be imported is INVALID_ARGUMENT, and the device carries on', async () => {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 2 });
  try {
    const missing = new URL('./fixtures/no-such-kernels.js', import.meta.url);
    const error = await device
      .createExecutable({
        format: 'js-module',
        url: missing,
        exports: [{ name: 'k', bindingCount: 0, constantCount: 0 }],
      })
      .catch((e: unknown) => e);
    expect(KeelError.is(error)).toBe(true);
    expect((error as KeelError).code).toBe('INVALID_ARGUMENT');
    expect((error as KeelError).message).toContain('no-such-kernels.js');
    const exe = await device.createExecutable({
      format: 'js-module',
      url: KERNELS,
      exports: [{ name: 'worker_index', bindingCount: 1, constantCount: 0 }],
    });
    expect(exe.device).toBe(device);
  } finally {
    await device.destroy();
  }
});

it('an uncaught exception in a Web Worker loses the device with UNAVAILABLE', async () => {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 2 });
  const exe = await device.createExecutable({
    format: 'js-module',
    url: KERNELS,
    exports: [{ name: 'crash', bindingCount: 0, constantCount: 0 }],
  });
  const gate = device.createSemaphore(0);
  const pending = device.createSemaphore(0);
  device.queueBarrier(
    QueueAffinity.ANY,
    Fence.of({ semaphore: gate, value: 1 }),
    Fence.of({ semaphore: pending, value: 1 }),
  );
  const cb = device.createCommandBuffer();
  cb.begin();
  cb.dispatch(exe, 'crash', { workgroupCount: [1, 1, 1], bindings: [] });
  cb.end();
  device.queueExecute(QueueAffinity.ANY, Fence.empty, Fence.empty, [cb]);
  const reason = await device.lost;
  expect(reason.code).toBe('UNAVAILABLE');
  expect(reason.message).toMatch(/worker \d of queue 0 crashed: .*uncaught in a worker/);
  expect(pending.failure?.code).toBe('UNAVAILABLE');
  expect(device.liveWorkers).toBe(0);
  await device.destroy();
});
