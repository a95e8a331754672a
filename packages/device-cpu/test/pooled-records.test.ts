/**
 * Lifetimes of the CPU device's pooled operation records (cpu-run-loop.ts, hal/driver RecordPool): a
 * record goes back to the pool when its operation completes and may be taken again while code further
 * up the stack still has it in hand; what a caller may change after a queue call returns is kept by the
 * operations that have not run yet, and only by those.
 */
import { Fence } from '@keel/fence';
import { type Buffer, BufferUsage } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode): CpuDevice {
  const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
  devices.push(d);
  return d;
}

async function read(d: CpuDevice, buffer: Buffer): Promise<Uint8Array> {
  const out = new Uint8Array(buffer.byteLength);
  const s = d.createSemaphore(0);
  d.queueRead(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, out);
  await s.wait(1, { timeoutMs: 5000 });
  return out;
}

describe.each(['sync', 'task'] as const)('device-cpu %s: pooled operation records', (mode) => {
  it('a record reused while the call that submitted it is still on the stack keeps its new registration', async () => {
    const d = device(mode);
    const buffer = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const s = d.createSemaphore(0);
    const t = d.createSemaphore(0);
    // The fill below runs and completes inside its own call and gives its record back; its signal
    // queues a host call, which runs next (still inside the fill's call) and submits a fill that
    // waits on `t` with that same record.
    s.onReached(1, () => {
      d.queueHostCall(1, Fence.empty, Fence.empty, () => {
        d.queueFill(1, Fence.of({ semaphore: t, value: 1 }), Fence.empty, { buffer }, 0x77, 1);
      });
    });
    d.queueFill(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, 0x11, 1);
    expect(s.value).toBe(1);
    expect(t.pendingWaitCount).toBe(1);
    // The waiting fill is failed by the destruction, and its registration on `t` is cancelled.
    await d.destroy();
    expect(t.pendingWaitCount).toBe(0);
  });

  it('keeps update bytes and binding tables only for operations that did not run inside the call', async () => {
    const d = device(mode);
    const target = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const other = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const cb = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    cb.fill({ slot: 0 }, 0x5a, 1);
    cb.end();
    const done = d.createSemaphore(0);
    const bytes = new Uint8Array(16).fill(0x21);
    // Submitted from a host call: they wait in the run list until the host call returned, after the
    // caller changed what it passed.
    d.queueHostCall(1, Fence.empty, Fence.empty, () => {
      d.queueUpdate(1, Fence.empty, Fence.empty, bytes, { buffer: target });
      bytes.fill(0x99);
      const entry = { buffer: target, offset: 8, length: 8 };
      const table = [entry];
      d.queueExecute(1, Fence.empty, Fence.of({ semaphore: done, value: 1 }), [cb], [table]);
      entry.buffer = other;
      entry.offset = 0;
    });
    await done.wait(1, { timeoutMs: 5000 });
    const expected = new Uint8Array(16).fill(0x21);
    expected.fill(0x5a, 8, 16);
    expect(await read(d, target)).toEqual(expected);
    expect(await read(d, other)).toEqual(new Uint8Array(16));
    // Run inside the call: the bytes are written at once.
    d.queueUpdate(1, Fence.empty, Fence.empty, bytes, { buffer: other });
    bytes.fill(0);
    expect(await read(d, other)).toEqual(new Uint8Array(16).fill(0x99));
  });

  it('a reused record carries nothing of its previous operation', async () => {
    const d = device(mode);
    const a = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const b = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const two = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
    two.begin();
    two.fill({ slot: 0 }, 0x01, 1);
    two.fill({ slot: 1 }, 0x02, 1);
    two.end();
    const one = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
    one.begin();
    one.fill({ slot: 0 }, 0x03, 1);
    one.end();
    const s = d.createSemaphore(0);
    // Records of each operation are reused by the next (one at a time on one queue).
    for (let v = 1; v <= 20; v++) {
      const signal = Fence.of({ semaphore: s, value: v });
      if (v % 2)
        d.queueExecute(1, Fence.empty, signal, [two, one], [[{ buffer: a }, { buffer: b }], [{ buffer: b }]]);
      else d.queueExecute(1, Fence.empty, signal, [one], [[{ buffer: a }]]);
      await s.wait(v, { timeoutMs: 5000 });
    }
    expect(await read(d, a)).toEqual(new Uint8Array(16).fill(0x03));
    expect(await read(d, b)).toEqual(new Uint8Array(16).fill(0x03));
    // A destroyed buffer's memory is released once the last operation using it completed: no record
    // retains it.
    const c = d.createBuffer({ byteLength: 4096, usage: BufferUsage.DEFAULT });
    d.queueFill(1, Fence.empty, Fence.of({ semaphore: s, value: 21 }), { buffer: c }, 1, 1);
    await s.wait(21, { timeoutMs: 5000 });
    const pool = (d as unknown as { tlsf: { stats: { liveBytes: number } } }).tlsf;
    const before = pool.stats.liveBytes;
    c.destroy();
    expect(before - pool.stats.liveBytes).toBe(4096);
  });
});
