/**
 * A page served without the cross-origin isolation headers (vitest.browser-plain.config.ts): there is
 * no SharedArrayBuffer, so task mode fails with UNAVAILABLE naming the COOP/COEP headers, the default
 * mode is sync, and sync mode runs kernels.
 */
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';
import { expect, it } from 'vitest';
import { createCpuDevice } from '../dist/index.js';
import { CTS_KERNELS_URL } from './cts-kernels';

it('is a page without cross-origin isolation', () => {
  expect(globalThis.crossOriginIsolated).toBe(false);
  expect(typeof SharedArrayBuffer).toBe('undefined');
});

it("refuses mode 'task' with UNAVAILABLE, naming the headers a page needs", () => {
  let thrown: unknown;
  try {
    createCpuDevice({ mode: 'task' });
  } catch (error) {
    thrown = error;
  }
  expect(KeelError.is(thrown)).toBe(true);
  const error = thrown as KeelError;
  expect(error.code).toBe('UNAVAILABLE');
  expect(error.message).toContain('createCpuDevice');
  expect(error.message).toContain('Cross-Origin-Opener-Policy: same-origin');
  expect(error.message).toContain('Cross-Origin-Embedder-Policy: require-corp');
});

it('defaults to sync mode, which runs kernels', async () => {
  const device = createCpuDevice();
  try {
    expect(device.mode).toBe('sync');
    expect(device.liveWorkers).toBe(0);
    const exe = await device.createExecutable({
      format: 'js-module',
      url: CTS_KERNELS_URL,
      exports: [{ name: 'abs', bindingCount: 2, constantCount: 1 }],
    });
    const n = 100;
    const input = device.createBuffer({ byteLength: 4 * n, usage: BufferUsage.DEFAULT });
    const output = device.createBuffer({ byteLength: 4 * n, usage: BufferUsage.DEFAULT });
    const values = new Float32Array(n).map((_, i) => (i % 2 === 0 ? -i : i));
    const s = device.createSemaphore(0);
    device.queueWrite(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 1 }), values, {
      buffer: input,
    });
    const cb = device.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'abs', {
      workgroupCount: [Math.ceil(n / 64), 1, 1],
      constants: [n],
      bindings: [{ buffer: input }, { buffer: output }],
    });
    cb.end();
    device.queueExecute(
      QueueAffinity.ANY,
      Fence.of({ semaphore: s, value: 1 }),
      Fence.of({ semaphore: s, value: 2 }),
      [cb],
    );
    const result = new Float32Array(n);
    device.queueRead(
      QueueAffinity.ANY,
      Fence.of({ semaphore: s, value: 2 }),
      Fence.of({ semaphore: s, value: 3 }),
      { buffer: output },
      result,
    );
    await s.wait(3, { timeoutMs: 10_000 });
    expect(Array.from(result)).toEqual(Array.from(values, Math.abs));
  } finally {
    await device.destroy();
  }
});
