/**
 * A short soak per backend: 10 000 replays of one reusable command buffer (results exact, heap flat),
 * and 200 create/use/destroy cycles of a device asserting that heap, RSS, active handles
 * (`process.getActiveResourcesInfo()`) and threads come back: growth over the second 100 cycles is
 * bounded (a per-cycle leak of a few hundred KiB would exceed it; warm-up growth that levels off does
 * not), and handles and threads return to the baseline. Memory is read after `global.gc()` (the
 * project runs with --expose-gc). Nothing here measures time.
 */
import { readdirSync } from 'node:fs';
import { Fence } from '@keel/fence';
import { QueueAffinity } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { type Backend, backends, title } from './backends';
import { bounded, failOnUncapturedGpuErrors, outcome, readBytes, STORAGE, writeBytes } from './helpers';

const all = await backends();
failOnUncapturedGpuErrors();
const MiB = 1 << 20;

/** Collects garbage (several passes, with turns of the event loop for finalizers in between). */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

interface Sample {
  readonly heap: number;
  readonly rss: number;
  readonly handles: Map<string, number>;
  readonly threads: number;
}

/** Threads of this process (Linux), or 0 where /proc is not there. */
function threadCount(): number {
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return 0;
  }
}

async function sample(): Promise<Sample> {
  await collect();
  const handles = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) handles.set(type, (handles.get(type) ?? 0) + 1);
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss, handles, threads: threadCount() };
}

function describeHandles(handles: Map<string, number>): string {
  return [...handles].map(([type, count]) => `${type}×${count}`).join(', ');
}

/** One cycle: a device is created, writes, dispatches, reads back, and is destroyed. */
async function cycle(backend: Backend, i: number): Promise<void> {
  const device = await bounded(backend.create(), `create (cycle ${i})`);
  try {
    const exe = await bounded(backend.addConst(device), `createExecutable (cycle ${i})`);
    const buffer = device.createBuffer({ byteLength: 256, usage: STORAGE });
    await writeBytes(device, buffer, new Uint8Array(256));
    const cb = device.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'add_const', { workload: [64], constants: [i, 64], bindings: [{ buffer }] });
    cb.end();
    const s = device.createSemaphore(0);
    device.queueExecute(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb]);
    expect(await outcome(s, 1, `dispatch (cycle ${i})`)).toBe('ok');
    const out = new Uint32Array((await readBytes(device, buffer)).buffer);
    expect(out[63]).toBe(i);
  } finally {
    await bounded(device.destroy(), `destroy (cycle ${i})`);
  }
  const live = (device as { liveWorkers?: number }).liveWorkers;
  if (live !== undefined) expect(live, `live workers after destroy (cycle ${i})`).toBe(0);
}

describe.each(all)('soak on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    it('10 000 replays of one reusable command buffer: exact results, bounded heap', async () => {
      const device = await backend.create();
      try {
        const exe = await backend.addConst(device);
        const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
        await writeBytes(device, data, new Uint8Array(256));
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
        cb.begin();
        cb.dispatch(exe, 'add_const', { workload: [64], constants: [1, 64], bindings: [{ slot: 0 }] });
        cb.end();
        const t = device.createSemaphore(0);
        const table = [[{ buffer: data }]];
        let value = 0;
        const batch = async (count: number): Promise<void> => {
          for (let i = 0; i < count; i++) {
            const wait = value === 0 ? Fence.empty : Fence.of({ semaphore: t, value });
            value++;
            device.queueExecute(QueueAffinity.ANY, wait, Fence.of({ semaphore: t, value }), [cb], table);
          }
          expect(await outcome(t, value, `replay ${value}`)).toBe('ok');
        };
        for (let i = 0; i < 2; i++) await batch(500);
        const warm = await sample();
        for (let i = 0; i < 18; i++) await batch(500);
        const end = await sample();
        expect(value).toBe(10_000);
        const out = new Uint32Array((await readBytes(device, data)).buffer);
        expect(Array.from(new Set(out))).toEqual([10_000]);
        const growth = end.heap - warm.heap;
        expect(growth, `heap growth over 9 000 warm replays: ${(growth / MiB).toFixed(2)} MiB`).toBeLessThan(
          8 * MiB,
        );
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    }, 120_000);

    it('200 create/destroy cycles: heap, RSS, handles and threads stay bounded', async () => {
      expect(
        typeof (globalThis as { gc?: unknown }).gc,
        'global.gc (the project runs with --expose-gc)',
      ).toBe('function');
      const baseline = await sample();
      for (let i = 0; i < 10; i++) await cycle(backend, i);
      const warm = await sample();
      for (let i = 10; i < 100; i++) await cycle(backend, i);
      const mid = await sample();
      for (let i = 100; i < 200; i++) await cycle(backend, i);
      const end = await sample();
      const report =
        `heap ${(warm.heap / MiB).toFixed(1)} → ${(mid.heap / MiB).toFixed(1)} → ${(end.heap / MiB).toFixed(1)} MiB, ` +
        `rss ${(warm.rss / MiB).toFixed(1)} → ${(mid.rss / MiB).toFixed(1)} → ${(end.rss / MiB).toFixed(1)} MiB, ` +
        `threads ${baseline.threads} → ${end.threads}`;
      console.info(`soak ${backend.name}: ${report}`);
      // Second 100 cycles: a leak of ≥ 80 KiB of heap or ≥ 320 KiB of RSS per cycle fails.
      expect(end.heap - mid.heap, `heap growth over cycles 100–200 (${report})`).toBeLessThan(8 * MiB);
      expect(end.rss - mid.rss, `RSS growth over cycles 100–200 (${report})`).toBeLessThan(32 * MiB);
      for (const [type, count] of end.handles) {
        expect(
          count,
          `active ${type} handles after 200 cycles (baseline: ${describeHandles(baseline.handles)}; now: ${describeHandles(end.handles)})`,
        ).toBeLessThanOrEqual(baseline.handles.get(type) ?? 0);
      }
      if (baseline.threads > 0) {
        // Dawn and V8 may keep a few pool threads once started; workers must all be gone.
        expect(end.threads, `threads after 200 cycles (${report})`).toBeLessThanOrEqual(
          Math.max(baseline.threads, warm.threads) + 2,
        );
        expect(
          end.threads - mid.threads,
          `threads gained over cycles 100–200 (${report})`,
        ).toBeLessThanOrEqual(2);
      }
    }, 240_000);
  });
});
