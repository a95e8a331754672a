/**
 * One execute that names the same reusable command buffer twice, each time with its own binding table:
 * every run of the command buffer binds its own table (the executor must not keep the first run's
 * dispatch setup for the second). Imports the built Node build (dist/node) so that task mode finds
 * dist/node/worker.js.
 */
import { Fence } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';

const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

describe.each(['sync', 'task'] as const)('device-cpu %s', (mode) => {
  it('runs a command buffer named twice in one execute with each of its binding tables', async () => {
    const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
    devices.push(d);
    const exe = await d.createExecutable({
      format: 'js-module',
      url: KERNELS,
      exports: [{ name: 'throws', bindingCount: 1, constantCount: 1 }],
    });
    const first = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const second = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const cb = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    // 'throws' writes 1 to out[x] (constants[0] = 99: no workgroup throws).
    cb.dispatch(exe, 'throws', { workgroupCount: [2, 1, 1], constants: [99], bindings: [{ slot: 0 }] });
    cb.end();
    const s = d.createSemaphore(0);
    d.queueExecute(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 1 }),
      [cb, cb],
      [[{ buffer: first }], [{ buffer: second }]],
    );
    await s.wait(1, { timeoutMs: 5000 });
    for (const buffer of [first, second]) {
      const out = new Uint32Array(4);
      const r = d.createSemaphore(0);
      d.queueRead(1, Fence.empty, Fence.of({ semaphore: r, value: 1 }), { buffer }, out);
      await r.wait(1, { timeoutMs: 5000 });
      expect(Array.from(out)).toEqual([1, 1, 0, 0]);
    }
  });
});
