/**
 * Uniform bindings (`var<uniform>` in group 0) next to writable storage bindings of the same GPUBuffer
 * in one dispatch: queue-allocated buffers are blocks of shared slabs, so two different buffers may
 * share a GPUBuffer, which WebGPU forbids binding as a uniform and as writable storage in one dispatch.
 * The device copies such a uniform binding's bytes into a buffer of its own right before the dispatch
 * (in command order) and binds that; only the same bytes bound both ways (the caller's aliasing) fail.
 * Real WebGPU (Dawn in Node; lavapipe here), skipped with the reason where there is no adapter.
 */
import { ErrorCode, Fence } from '@keel/fence';
import {
  type BindingTable,
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  type Executable,
  QueueAffinity,
  slotRef,
} from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import type { WebGpuBuffer } from '../src/webgpu-buffer';
import { Chain, readAndWait, writeAndWait } from './queue-helpers';
import { probeWebGpu } from './webgpu-probe';

const Q0 = QueueAffinity.of(0);
const TIMEOUT = { timeoutMs: 20_000 };

/** o[0] = p.a + p.b, o[1] = p.c * p.d: a uniform (binding 0) and a writable storage binding (binding 1). */
const SUM = /* wgsl */ `
struct P { a: u32, b: u32, c: u32, d: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1)
fn sum() { o[0] = p.a + p.b; o[1] = p.c * p.d; }
`;

/** w[0..3] = the constants: writes (as storage) the bytes a later dispatch binds as a uniform. */
const SET = /* wgsl */ `
struct C { a: u32, b: u32, c: u32, d: u32 }
@group(0) @binding(0) var<storage, read_write> w: array<u32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(1)
fn store() { w[0] = c.a; w[1] = c.b; w[2] = c.c; w[3] = c.d; }
`;

const probe = await probeWebGpu();

describe.skipIf(!probe.available)(
  `uniform and storage bindings of one GPUBuffer in one dispatch${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    let device: WebGpuDevice;
    const gpuErrors: string[] = [];
    let sum: Executable;
    let set: Executable;

    beforeAll(async () => {
      device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      sum = await device.createExecutable({
        format: 'wgsl',
        code: SUM,
        exports: [{ name: 'sum', bindingCount: 2, constantCount: 0, workgroupSize: [1, 1, 1] }],
      });
      set = await device.createExecutable({
        format: 'wgsl',
        code: SET,
        exports: [{ name: 'store', bindingCount: 1, constantCount: 4, workgroupSize: [1, 1, 1] }],
      });
    });

    afterAll(async () => {
      await device?.destroy();
      // Every command Keel encoded was valid WebGPU.
      expect(gpuErrors).toEqual([]);
    });

    async function readU32(source: Buffer, offset = 0, length = 8): Promise<number[]> {
      const bytes = await readAndWait(device, source, offset, length, TIMEOUT.timeoutMs);
      return [...new Uint32Array(bytes.buffer, bytes.byteOffset, length / 4)];
    }

    /** queueAlloca'd buffers, awaited; they share the first slab of the transient pool. */
    async function alloca(chain: Chain, sizes: number[], usage = BufferUsage.DEFAULT): Promise<Buffer[]> {
      const buffers = sizes.map((size) => device.queueAlloca(Q0, chain.now(), chain.next(), { usage }, size));
      await chain.now().wait(TIMEOUT);
      return buffers;
    }

    function dealloca(chain: Chain, buffers: Buffer[]): void {
      for (const b of buffers) device.queueDealloca(Q0, chain.now(), chain.next(), b);
    }

    /** A reusable command buffer of one `sum` dispatch over slots 0 (uniform) and 1 (storage). */
    function slottedSum(): CommandBuffer {
      const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
      cb.begin();
      cb.dispatch(sum, 'sum', { workgroupCount: [1, 1, 1], bindings: [slotRef(0), slotRef(1)] });
      cb.end();
      return cb;
    }

    /** Executes `cb` with one table next on `chain`, and waits for it. */
    async function executeAndWait(chain: Chain, cb: CommandBuffer, table: BindingTable): Promise<void> {
      device.queueExecute(Q0, chain.now(), chain.next(), [cb], [table]);
      await chain.now().wait(TIMEOUT);
    }

    function sameSlab(a: Buffer, b: Buffer): boolean {
      const ma = (a as WebGpuBuffer).memory;
      return ma !== undefined && ma === (b as WebGpuBuffer).memory;
    }

    it('runs the audit case: two queueAlloca buffers of one slab as a uniform and as storage', async () => {
      for (const usage of [BufferUsage.DEFAULT, BufferUsage.DISPATCH_UNIFORM | BufferUsage.TRANSFER_TARGET]) {
        const chain = new Chain();
        const [params] = await alloca(chain, [16], usage);
        const [out] = await alloca(chain, [16]);
        expect(sameSlab(params as Buffer, out as Buffer)).toBe(true);
        await writeAndWait(device, params as Buffer, new Uint32Array([3, 4, 5, 6]), 0, TIMEOUT.timeoutMs);
        await executeAndWait(chain, slottedSum(), [{ buffer: params as Buffer }, { buffer: out as Buffer }]);
        expect(await readU32(out as Buffer)).toEqual([7, 30]);
        dealloca(chain, [params as Buffer, out as Buffer]);
        await chain.now().wait(TIMEOUT);
      }
    });

    it('replays a reusable command buffer with different binding tables (bind groups cached)', async () => {
      const chain = new Chain();
      const buffers = await alloca(chain, [16, 16, 16, 16, 16, 16]);
      const tables = [0, 1, 2].map((k) => [
        { buffer: buffers[2 * k] as Buffer },
        { buffer: buffers[2 * k + 1] as Buffer },
      ]);
      for (let k = 0; k < 3; k++) {
        expect(sameSlab(buffers[2 * k] as Buffer, buffers[2 * k + 1] as Buffer)).toBe(true);
        const bytes = new Uint32Array([10 * k, 1, k, 7]);
        await writeAndWait(device, buffers[2 * k] as Buffer, bytes, 0, TIMEOUT.timeoutMs);
      }
      const cb = slottedSum();
      const round = async (): Promise<void> => {
        for (let k = 0; k < 3; k++) {
          // Fresh table objects over the same memory, as a training step makes them.
          const table = tables[k]?.map((b) => ({ ...b })) ?? [];
          device.queueExecute(Q0, chain.now(), chain.next(), [cb], [table]);
        }
        await chain.now().wait(TIMEOUT);
        for (let k = 0; k < 3; k++) {
          expect(await readU32(buffers[2 * k + 1] as Buffer)).toEqual([10 * k + 1, 7 * k]);
        }
      };
      await round();
      const misses = device.stats.bindGroups.misses;
      const gpuBuffers = device.stats.gpuBuffers;
      // Warm: every replay finds its bind groups; the detour makes no buffer per submission.
      for (let k = 0; k < 3; k++) {
        await writeAndWait(device, buffers[2 * k] as Buffer, new Uint32Array([5, k]), 0, TIMEOUT.timeoutMs);
        await writeAndWait(device, buffers[2 * k + 1] as Buffer, new Uint32Array(2), 0, TIMEOUT.timeoutMs);
      }
      for (let k = 0; k < 3; k++) {
        const table = tables[k]?.map((b) => ({ ...b })) ?? [];
        device.queueExecute(Q0, chain.now(), chain.next(), [cb], [table]);
      }
      await chain.now().wait(TIMEOUT);
      for (let k = 0; k < 3; k++) {
        expect(await readU32(buffers[2 * k + 1] as Buffer)).toEqual([5 + k, 7 * k]);
      }
      expect(device.stats.bindGroups.misses).toBe(misses);
      expect(device.stats.gpuBuffers).toBe(gpuBuffers);
      dealloca(chain, buffers);
      await chain.now().wait(TIMEOUT);
    });

    it('sees updates of the uniform bytes recorded earlier in the same command buffer', async () => {
      const chain = new Chain();
      const [params, out] = await alloca(chain, [16, 512]);
      expect(sameSlab(params as Buffer, out as Buffer)).toBe(true);
      const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
      cb.begin();
      cb.update(new Uint32Array([5, 6, 2, 3]), slotRef(0, 0, 16));
      cb.dispatch(sum, 'sum', { workgroupCount: [1, 1, 1], bindings: [slotRef(0), slotRef(1, 0, 256)] });
      cb.update(new Uint32Array([7, 8, 4, 5]), slotRef(0, 0, 16));
      cb.dispatch(sum, 'sum', { workgroupCount: [1, 1, 1], bindings: [slotRef(0), slotRef(1, 256, 256)] });
      cb.end();
      for (let i = 0; i < 2; i++) {
        device.queueExecute(
          Q0,
          chain.now(),
          chain.next(),
          [cb],
          [[{ buffer: params as Buffer }, { buffer: out as Buffer }]],
        );
        await chain.now().wait(TIMEOUT);
        expect(await readU32(out as Buffer, 0)).toEqual([11, 6]);
        expect(await readU32(out as Buffer, 256)).toEqual([15, 20]);
      }
      dealloca(chain, [params as Buffer, out as Buffer]);
      await chain.now().wait(TIMEOUT);
    });

    it('sees a dispatch that wrote the uniform bytes earlier in the same command buffer', async () => {
      const chain = new Chain();
      const [params, out] = await alloca(chain, [16, 16]);
      expect(sameSlab(params as Buffer, out as Buffer)).toBe(true);
      const cb = device.createCommandBuffer();
      cb.begin();
      cb.dispatch(set, 'store', {
        workgroupCount: [1, 1, 1],
        constants: [30, 12, 6, 7],
        bindings: [{ buffer: params as Buffer }],
      });
      cb.dispatch(sum, 'sum', {
        workgroupCount: [1, 1, 1],
        bindings: [{ buffer: params as Buffer }, { buffer: out as Buffer }],
      });
      cb.dispatch(set, 'store', {
        workgroupCount: [1, 1, 1],
        constants: [1, 2, 3, 4],
        bindings: [{ buffer: params as Buffer }],
      });
      cb.end();
      device.queueExecute(Q0, chain.now(), chain.next(), [cb]);
      await chain.now().wait(TIMEOUT);
      expect(await readU32(out as Buffer)).toEqual([42, 42]);
      dealloca(chain, [params as Buffer, out as Buffer]);
      await chain.now().wait(TIMEOUT);
    });

    it('runs an indirect dispatch whose uniform shares a slab with its storage binding', async () => {
      const chain = new Chain();
      const [params, out] = await alloca(chain, [16, 16]);
      expect(sameSlab(params as Buffer, out as Buffer)).toBe(true);
      const counts = device.createBuffer({
        byteLength: 16,
        usage: BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
      });
      await writeAndWait(device, counts, new Uint32Array([1, 1, 1]), 0, TIMEOUT.timeoutMs);
      await writeAndWait(device, params as Buffer, new Uint32Array([8, 9, 3, 3]), 0, TIMEOUT.timeoutMs);
      const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
      cb.begin();
      cb.dispatch(sum, 'sum', { indirect: { buffer: counts }, bindings: [slotRef(0), slotRef(1)] });
      cb.end();
      device.queueExecute(
        Q0,
        chain.now(),
        chain.next(),
        [cb],
        [[{ buffer: params as Buffer }, { buffer: out as Buffer }]],
      );
      await chain.now().wait(TIMEOUT);
      expect(await readU32(out as Buffer)).toEqual([17, 9]);
      dealloca(chain, [params as Buffer, out as Buffer]);
      await chain.now().wait(TIMEOUT);
      counts.destroy();
    });

    it('binds non-overlapping ranges of one createBuffer buffer as a uniform and as storage', async () => {
      const x = device.createBuffer({ byteLength: 512, usage: BufferUsage.DEFAULT });
      await writeAndWait(device, x, new Uint32Array([20, 22, 2, 9]), 0, TIMEOUT.timeoutMs);
      const cb = device.createCommandBuffer();
      cb.begin();
      cb.dispatch(sum, 'sum', {
        workgroupCount: [1, 1, 1],
        bindings: [
          { buffer: x, offset: 0, length: 16 },
          { buffer: x, offset: 256, length: 256 },
        ],
      });
      cb.end();
      const done = new Chain();
      device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
      await done.now().wait(TIMEOUT);
      expect(await readU32(x, 256)).toEqual([42, 18]);
      x.destroy();
    });

    it('fails the same bytes bound as a uniform and as writable storage (INVALID_ARGUMENT naming device, operation, export, bindings)', async () => {
      const chain = new Chain();
      const [x] = await alloca(chain, [256]);
      const cb = device.createCommandBuffer({ label: 'aliasing', mode: 'reusable', bindingCapacity: 1 });
      cb.begin();
      cb.dispatch(sum, 'sum', {
        workgroupCount: [1, 1, 1],
        bindings: [slotRef(0, 0, 16), slotRef(0)],
      });
      cb.end();
      const done = new Chain();
      device.queueExecute(Q0, chain.now(), done.next(), [cb], [[{ buffer: x as Buffer }]]);
      await expect(done.now().wait(TIMEOUT)).rejects.toThrow();
      const failure = done.semaphore.failure;
      expect(failure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
      const message = failure?.message ?? '';
      expect(message).toContain(`${device.name} queueExecute`);
      expect(message).toContain("command buffer 'aliasing'");
      expect(message).toContain("export 'sum'");
      expect(message).toMatch(/bindings 0 and 1/);
      expect(message).toMatch(/uniform/);
      expect(message).toMatch(/overlap/);
      // The device goes on: the same command buffer with two separate buffers runs.
      const [p, o] = await alloca(chain, [16, 16]);
      await writeAndWait(device, p as Buffer, new Uint32Array([1, 2, 3, 4]), 0, TIMEOUT.timeoutMs);
      await executeAndWait(chain, slottedSum(), [{ buffer: p as Buffer }, { buffer: o as Buffer }]);
      expect(await readU32(o as Buffer)).toEqual([3, 12]);
      dealloca(chain, [x as Buffer, p as Buffer, o as Buffer]);
      await chain.now().wait(TIMEOUT);
    });
  },
);
