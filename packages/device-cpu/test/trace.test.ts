/**
 * CPU traces beyond the conformance suite's `trace.*` cases: an execute already running on the workers
 * when its trace stops and the next trace starts keeps its dispatch and worker events in its own trace
 * (the profile ring's reader goes on across traces), and the next trace gets none of them. Imports the
 * built Node build (dist/node) so that task mode finds dist/node/worker.js.
 */
import { chromeTraceProblems, traceEventsOf } from '@keel/cts';
import { Fence } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';

const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

/** Reads word 0 of `buffer` on queue 1 (transfers run on the main thread, beside queue 0's workers). */
async function word0(device: CpuDevice, buffer: import('@keel/hal').Buffer): Promise<number> {
  const out = new Int32Array(1);
  const s = device.createSemaphore(0);
  device.queueRead(
    QueueAffinity.of(1),
    Fence.empty,
    Fence.of({ semaphore: s, value: 1 }),
    { buffer, length: 4 },
    out,
  );
  await s.wait(1, { timeoutMs: 5000 });
  return out[0]!;
}

describe('device-cpu traces', () => {
  it('keeps the dispatches of an execute running when its trace stops and the next one starts (task)', async () => {
    const device = createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1 });
    devices.push(device);
    const exe = await device.createExecutable({
      format: 'js-module',
      url: KERNELS,
      exports: [{ name: 'gate', bindingCount: 1, constantCount: 1 }],
      label: 'gate',
    });
    const words = device.createBuffer({ byteLength: 8, usage: BufferUsage.DEFAULT });
    const cb = device.createCommandBuffer({ mode: 'one-shot' });
    cb.begin();
    cb.dispatch(exe, 'gate', { workgroupCount: [2, 1, 1], constants: [5000], bindings: [{ buffer: words }] });
    cb.end();
    const done = device.createSemaphore(0);
    const a = device.startTrace();
    device.queueExecute(QueueAffinity.of(0), Fence.empty, Fence.of({ semaphore: done, value: 1 }), [cb]);
    // The execute is running on queue 0's worker (it has written its first profile entry).
    const deadline = Date.now() + 5000;
    while ((await word0(device, words)) !== 1) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    a.stop();
    const b = device.startTrace();
    const open = device.createSemaphore(0);
    device.queueWrite(
      QueueAffinity.of(1),
      Fence.empty,
      Fence.of({ semaphore: open, value: 1 }),
      new Int32Array([1]),
      { buffer: words, offset: 4, length: 4 },
    );
    await done.wait(1, { timeoutMs: 10_000 });
    b.stop();
    const aJson = JSON.parse(JSON.stringify(await a.toChromeTrace())) as unknown;
    const bJson = JSON.parse(JSON.stringify(await b.toChromeTrace())) as unknown;
    expect(chromeTraceProblems(aJson)).toEqual([]);
    expect(chromeTraceProblems(bJson)).toEqual([]);
    expect(traceEventsOf(aJson, 'queue').filter((e) => e.name === 'queueExecute')).toHaveLength(1);
    const dispatches = traceEventsOf(aJson, 'dispatch');
    expect(dispatches.map((d) => d.name)).toEqual(['gate']);
    expect(dispatches[0]!.args?.workgroups).toBe(2);
    expect(traceEventsOf(aJson, 'worker').map((w) => w.args?.worker)).toEqual([0]);
    expect(traceEventsOf(bJson, 'dispatch')).toEqual([]);
    expect(traceEventsOf(bJson, 'worker')).toEqual([]);
  });
});
