/**
 * Async kernels on the CPU device (both modes): a kernel may return a promise; the dispatch completes
 * when every workgroup's promise settled (a write after an await is seen by the next command and the
 * next operation); a rejection fails the signal with INTERNAL (cause = the kernel's error), nothing goes
 * unhandled and the device stays usable.
 */
import { Fence, KeelError } from '@keel/fence';
import { type Buffer, BufferUsage, type Executable } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const KERNELS = new URL('./fixtures/async-kernels.js', import.meta.url);
const STORAGE = BufferUsage.DEFAULT;

const devices: CpuDevice[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode): CpuDevice {
  const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 2 });
  devices.push(d);
  return d;
}

function kernels(d: CpuDevice): Promise<Executable> {
  return d.createExecutable({
    format: 'js-module',
    url: KERNELS,
    label: 'async-kernels',
    exports: [
      { name: 'async_write', bindingCount: 1, constantCount: 1 },
      { name: 'async_reject', bindingCount: 1, constantCount: 1 },
      { name: 'returns_rejected', bindingCount: 0, constantCount: 0 },
      { name: 'count_runs', bindingCount: 0, constantCount: 0 },
    ],
  });
}

async function read(d: CpuDevice, buffer: Buffer): Promise<number[]> {
  const out = new Uint32Array(buffer.byteLength / 4);
  const s = d.createSemaphore(0);
  d.queueRead(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, out);
  await s.wait(1, { timeoutMs: 5000 });
  return [...out];
}

describe.each(['sync', 'task'] as const)('device-cpu %s: async kernels', (mode) => {
  it('completes a dispatch only when every workgroup promise settled', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 32, usage: STORAGE });
    const copy = d.createBuffer({ byteLength: 32, usage: STORAGE });
    const cb = d.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'async_write', {
      workgroupCount: [8, 1, 1],
      constants: [10],
      bindings: [{ buffer: out }],
    });
    cb.barrier();
    cb.copy({ buffer: out }, { buffer: copy });
    cb.end();
    const s = d.createSemaphore(0);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb]);
    await s.wait(1, { timeoutMs: 5000 });
    const expected = [11, 12, 13, 14, 15, 16, 17, 18];
    expect(await read(d, out)).toEqual(expected);
    expect(await read(d, copy)).toEqual(expected);
  });

  it('orders a later operation after the async kernel of an earlier one', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 16, usage: STORAGE });
    const s = d.createSemaphore(0);
    for (let i = 0; i < 3; i++) {
      const cb = d.createCommandBuffer();
      cb.begin();
      cb.dispatch(exe, 'async_write', {
        workgroupCount: [4, 1, 1],
        constants: [i * 100],
        bindings: [{ buffer: out }],
      });
      cb.end();
      d.queueExecute(1, Fence.of({ semaphore: s, value: i }), Fence.of({ semaphore: s, value: i + 1 }), [cb]);
    }
    // Queued without a wait: must still see the last dispatch's writes, done after awaits.
    const values = new Uint32Array(4);
    d.queueRead(
      1,
      Fence.of({ semaphore: s, value: 3 }),
      Fence.of({ semaphore: s, value: 4 }),
      { buffer: out },
      values,
    );
    await s.wait(4, { timeoutMs: 5000 });
    expect([...values]).toEqual([201, 202, 203, 204]);
  });

  it('fails the signal with INTERNAL (cause = the rejection) and stays usable', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 32, usage: STORAGE });
    const bad = d.createSemaphore(0);
    const cb = d.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'async_reject', {
      workgroupCount: [8, 1, 1],
      constants: [3],
      bindings: [{ buffer: out }],
    });
    cb.end();
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: bad, value: 1 }), [cb]);
    await expect(bad.wait(1, { timeoutMs: 5000 })).rejects.toSatisfy((e) => KeelError.is(e, 'ABORTED'));
    const failure = bad.failure;
    expect(KeelError.is(failure, 'INTERNAL')).toBe(true);
    expect(failure?.message).toContain("kernel 'async_reject'");
    expect(failure?.message).toContain('async kernel rejected at workgroup 3');
    // The kernel's own error is the cause, with its stack, in both modes (issue 17: also across threads).
    const cause = failure?.cause as Error | undefined;
    expect(cause).toBeInstanceOf(Error);
    expect(cause?.name).toBe('Error');
    expect(cause?.message).toBe('async kernel rejected at workgroup 3');
    expect(cause?.stack).toContain('async-kernels.js');

    const plain = d.createCommandBuffer();
    plain.begin();
    plain.dispatch(exe, 'returns_rejected', { workgroupCount: [2, 1, 1] });
    plain.end();
    const bad2 = d.createSemaphore(0);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: bad2, value: 1 }), [plain]);
    await expect(bad2.wait(1, { timeoutMs: 5000 })).rejects.toBeDefined();
    expect(KeelError.is(bad2.failure, 'INTERNAL')).toBe(true);
    expect(bad2.failure?.message).toContain('RangeError: rejected by workgroup');
    expect((bad2.failure?.cause as Error | undefined)?.name).toBe('RangeError');
    expect((bad2.failure?.cause as Error | undefined)?.stack).toContain('returns_rejected');

    // The device still works.
    const good = d.createCommandBuffer();
    good.begin();
    good.dispatch(exe, 'async_write', {
      workgroupCount: [8, 1, 1],
      constants: [0],
      bindings: [{ buffer: out }],
    });
    good.end();
    const ok = d.createSemaphore(0);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: ok, value: 1 }), [good]);
    await ok.wait(1, { timeoutMs: 5000 });
    expect(await read(d, out)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    expect(d.liveWorkers).toBe(mode === 'task' ? 2 : 0);
  });
});

describe('async kernels, sync mode, destroy', () => {
  const runs = (): number => (globalThis as { __keelKernelRuns?: number }).__keelKernelRuns ?? 0;

  it('runs no kernel after destroy: neither the rest of a suspended execute nor an execute queued behind it', async () => {
    const d = device('sync');
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 16, usage: STORAGE });
    const before = runs();
    // Execute 1: an async dispatch (suspends the queue), then a counting dispatch.
    const first = d.createCommandBuffer();
    first.begin();
    first.dispatch(exe, 'async_write', {
      workgroupCount: [1, 1, 1],
      constants: [0],
      bindings: [{ buffer: out }],
    });
    first.barrier();
    first.dispatch(exe, 'count_runs', { workgroupCount: [1, 1, 1] });
    first.end();
    // Execute 2, queued behind the suspended one.
    const second = d.createCommandBuffer();
    second.begin();
    second.dispatch(exe, 'count_runs', { workgroupCount: [1, 1, 1] });
    second.end();
    const s = d.createSemaphore(0);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [first]);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 2 }), [second]);
    await d.destroy();
    expect(s.failure?.code).toBe('UNAVAILABLE');
    await new Promise((r) => setTimeout(r, 30)); // the async kernel's timer (2 ms) has fired
    expect(runs() - before).toBe(0);
  });
});
