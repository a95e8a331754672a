/**
 * Issue 15 (slow leak of task-mode create/destroy cycles): after `destroy()` a task-mode device leaves
 * nothing behind — its worker threads exited, and nothing keeps its queues' completion timelines (and
 * their SharedArrayBuffers) reachable: no `Atomics.waitAsync` stays armed on them, no keep-alive is
 * held. Checked deterministically with a FinalizationRegistry after forced garbage collections.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Fence } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCpuDevice } from '../dist/node/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);

/** Runs one create → use → destroy cycle; registers what must be collected afterwards. */
async function cycle(registry: FinalizationRegistry<string>): Promise<{ liveWorkers: number }> {
  const device = createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1 });
  const exe = await device.createExecutable({
    format: 'js-module',
    url: KERNELS,
    exports: [{ name: 'throws', bindingCount: 1, constantCount: 1 }],
  });
  const out = device.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
  const s = device.createSemaphore(0);
  for (let q = 0; q < 2; q++) {
    const cb = device.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'throws', { workgroupCount: [4, 1, 1], constants: [99], bindings: [{ buffer: out }] });
    cb.end();
    device.queueExecute(
      1 << q,
      Fence.of({ semaphore: s, value: q }),
      Fence.of({ semaphore: s, value: q + 1 }),
      [cb],
    );
  }
  await s.wait(2, { timeoutMs: 5000 });
  // Internal objects that must not outlive the device: each queue's completion timeline.
  const queues = (device as unknown as { tasks: { timeline: object }[] }).tasks;
  queues.forEach((queue, i) => {
    registry.register(queue.timeline, `timeline ${i}`);
  });
  registry.register(device, 'device');
  await device.destroy();
  return { liveWorkers: device.liveWorkers };
}

describe('device-cpu task: destroy releases everything', () => {
  it('threads exit and the queues’ timelines are collectable', async () => {
    const collected = new Set<string>();
    const registry = new FinalizationRegistry<string>((name) => collected.add(name));
    const { liveWorkers } = await cycle(registry);
    expect(liveWorkers).toBe(0);
    for (let i = 0; i < 20 && collected.size < 3; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect([...collected].sort()).toEqual(['device', 'timeline 0', 'timeline 1']);
  });
});
