/**
 * High binding slots on the CPU device (both modes): a slot is legal up to the command buffer's
 * bindingCapacity (< 2^31), so a table for slot 2^30 is a sparse array of length 2^30 + 1. Submitting
 * it must cost what the slots used cost (snapshot, plan, resolved table), never time or memory in the
 * highest slot number (it took about 35 s, or ran out of memory, before).
 */
import { Fence, KeelError } from '@keel/fence';
import { type Binding, type Buffer, BufferUsage, type CommandBuffer } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const KERNELS = new URL('./fixtures/cts-kernels.js', import.meta.url);
const STORAGE = BufferUsage.DEFAULT;
const HIGH = 2 ** 30;
/** The highest slot the largest capacity (2^31 - 1) allows. */
const TOP = 2 ** 31 - 2;
const N = 8;
/** Far below what a slot-indexed array for slot 2^30 takes (35 s, gigabytes). */
const BOUND_MS = 4000;

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode): CpuDevice {
  const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 2 });
  devices.push(d);
  return d;
}

/** A sparse table: entry `slot` for each [slot, buffer]. */
function sparse(entries: readonly [number, Buffer][]): (Binding | undefined)[] {
  const table: (Binding | undefined)[] = [];
  for (const [slot, buffer] of entries) table[slot] = { buffer };
  return table;
}

async function execute(d: CpuDevice, cb: CommandBuffer, table: (Binding | undefined)[]): Promise<void> {
  const s = d.createSemaphore(0);
  d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb], [table]);
  await s.wait(1, { timeoutMs: BOUND_MS });
}

async function readF32(d: CpuDevice, buffer: Buffer): Promise<number[]> {
  const out = new Float32Array(buffer.byteLength / 4);
  const s = d.createSemaphore(0);
  d.queueRead(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, out);
  await s.wait(1, { timeoutMs: BOUND_MS });
  return Array.from(out);
}

async function filled(d: CpuDevice, values: readonly number[]): Promise<Buffer> {
  const buffer = d.createBuffer({ byteLength: N * 4, usage: STORAGE });
  const s = d.createSemaphore(0);
  d.queueWrite(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), Float32Array.from(values), { buffer });
  await s.wait(1, { timeoutMs: BOUND_MS });
  return buffer;
}

describe.each(['sync', 'task'] as const)('device-cpu %s: high binding slots', (mode) => {
  it(
    'a dispatch and a copy through slots 2^30 and 2^31 - 2 run in time of the slots used, resubmitted',
    async () => {
      const started = performance.now();
      const d = device(mode);
      const exe = await d.createExecutable({
        format: 'js-module',
        url: KERNELS,
        exports: [{ name: 'add', bindingCount: 3, constantCount: 1, workgroupSize: [64, 1, 1] }],
      });
      const cb = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 ** 31 - 1 });
      cb.begin();
      // out(TOP) = a(HIGH) + b(3); then a copy of out's first half into a(HIGH)'s second half.
      cb.dispatch(exe, 'add', {
        workload: [N],
        constants: [N],
        bindings: [{ slot: HIGH }, { slot: 3 }, { slot: TOP }],
      });
      cb.barrier();
      cb.copy({ slot: TOP, offset: 0, length: 16 }, { slot: HIGH, offset: 16, length: 16 });
      cb.end();

      const a = await filled(d, [1, 2, 3, 4, 5, 6, 7, 8]);
      const b = await filled(d, [10, 20, 30, 40, 50, 60, 70, 80]);
      const out = d.createBuffer({ byteLength: N * 4, usage: STORAGE });
      const table = sparse([
        [3, b],
        [HIGH, a],
        [TOP, out],
      ]);
      expect(table.length).toBe(TOP + 1);
      await execute(d, cb, table);
      expect(await readF32(d, out)).toEqual([11, 22, 33, 44, 55, 66, 77, 88]);
      expect(await readF32(d, a)).toEqual([1, 2, 3, 4, 11, 22, 33, 44]);

      // Resubmitted with the slots bound to other buffers (the plan maps each used slot once).
      const a2 = await filled(d, [0, 0, 0, 0, 0, 0, 0, 0]);
      const out2 = d.createBuffer({ byteLength: N * 4, usage: STORAGE });
      await execute(
        d,
        cb,
        sparse([
          [3, a],
          [HIGH, a2],
          [TOP, out2],
        ]),
      );
      expect(await readF32(d, out2)).toEqual([1, 2, 3, 4, 11, 22, 33, 44]);
      expect(await readF32(d, a2)).toEqual([0, 0, 0, 0, 1, 2, 3, 4]);
      expect(performance.now() - started).toBeLessThan(BOUND_MS);
    },
    BOUND_MS,
  );

  it(
    'with validation off, a missing entry of a high slot fails the execution with INVALID_ARGUMENT naming it',
    async () => {
      const started = performance.now();
      const d = device(mode);
      const cb = d.createCommandBuffer({ bindingCapacity: 2 ** 31 - 1, validation: false });
      cb.begin();
      cb.fill({ slot: HIGH, offset: 0, length: 16 }, 7, 1);
      cb.fill({ slot: TOP, offset: 0, length: 16 }, 7, 1);
      cb.end();
      // Long enough (validation off checks only the length), but slot 2^30 has no entry.
      const table = sparse([[TOP, d.createBuffer({ byteLength: 16, usage: STORAGE })]]);
      const s = d.createSemaphore(0);
      d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb], [table]);
      await expect(s.wait(1, { timeoutMs: BOUND_MS })).rejects.toThrow();
      expect(KeelError.is(s.failure, 'INVALID_ARGUMENT')).toBe(true);
      expect(s.failure?.message).toContain(
        `binding slot ${HIGH} is used by the command buffer but the binding table has no entry for it`,
      );
      expect(performance.now() - started).toBeLessThan(BOUND_MS);
    },
    BOUND_MS,
  );
});
