/**
 * Devices and buffers keep working behind a Proxy (an application may wrap one, e.g. to hide a
 * capability): their methods run with the proxy as `this`, so the objects users hold keep their state
 * in ordinary (TypeScript-private) properties, not ES `#private` fields, which a proxy cannot reach.
 * Imports the built Node build (dist/node) so that task mode finds dist/node/worker.js.
 */
import { Fence } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

describe.each(['sync', 'task'] as const)('device-cpu %s', (mode) => {
  it('works behind a Proxy, and so do its buffers', async () => {
    const device = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
    devices.push(device);
    const d = new Proxy(device, {});
    const buffer = new Proxy(d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT }), {});
    expect(buffer.state).toBe('live');
    const s = d.createSemaphore(0);
    const alloca = d.queueAlloca(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 1 }),
      { usage: BufferUsage.DEFAULT },
      16,
    );
    d.queueFill(
      1,
      Fence.of({ semaphore: s, value: 1 }),
      Fence.of({ semaphore: s, value: 2 }),
      { buffer },
      7,
      1,
    );
    d.queueCopy(
      1,
      Fence.of({ semaphore: s, value: 2 }),
      Fence.of({ semaphore: s, value: 3 }),
      { buffer },
      { buffer: alloca },
    );
    const out = new Uint8Array(16);
    d.queueRead(
      1,
      Fence.of({ semaphore: s, value: 3 }),
      Fence.of({ semaphore: s, value: 4 }),
      { buffer: alloca },
      out,
    );
    d.queueDealloca(1, Fence.of({ semaphore: s, value: 4 }), Fence.of({ semaphore: s, value: 5 }), alloca);
    await s.wait(5, { timeoutMs: 5000 });
    expect(Array.from(out)).toEqual(new Array(16).fill(7));
    buffer.destroy();
    expect(buffer.state).toBe('destroyed');
    await d.destroy();
  });
});
