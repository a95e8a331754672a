/**
 * WebGPU-specific behaviour of the device (the shared contract is covered by the conformance suite):
 * built-in kernels, constants, replay plans and their caches, indirect dispatch, GPU-ordered
 * submission, deferral, loss and teardown. Registered by device.test.ts (Dawn in Node) and
 * device.browser.test.ts (Chromium).
 */
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Executable, QueueAffinity, slotRef } from '@keel/hal';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import { wgslKernel } from './cts-kernels';
import { Chain, readAndWait, writeAndWait } from './queue-helpers';

const Q0 = QueueAffinity.of(0);
const TIMEOUT = { timeoutMs: 10_000 };

/** Registers the tests under `describe(title)`. */
export function defineDeviceTests(title: string): void {
  describe(title, () => {
    let device: WebGpuDevice;
    const gpuErrors: string[] = [];
    let negate: Executable;
    let scale: Executable;
    let ids: Executable;

    beforeAll(async () => {
      device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      negate = await device.createExecutable(
        wgslKernel('negateDouble', [
          { name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
          { name: 'double', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
        ]),
      );
      scale = await device.createExecutable(
        wgslKernel('scaleAndOffset', [
          { name: 'scale_and_offset', bindingCount: 1, constantCount: 3, workgroupSize: [64, 1, 1] },
        ]),
      );
      ids = await device.createExecutable(
        wgslKernel('workgroupIds', [
          { name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] },
        ]),
      );
    });

    afterAll(async () => {
      await device?.destroy();
      // Every command Keel encoded was valid WebGPU.
      expect(gpuErrors).toEqual([]);
    });

    function buffer(byteLength: number, usage: number = BufferUsage.DEFAULT): Buffer {
      return device.createBuffer({ byteLength, usage });
    }

    function write(target: Buffer, bytes: ArrayBufferView, offset = 0): Promise<void> {
      return writeAndWait(device, target, bytes, offset, TIMEOUT.timeoutMs);
    }

    function read(source: Buffer, offset = 0, length = source.byteLength - offset): Promise<Uint8Array> {
      return readAndWait(device, source, offset, length, TIMEOUT.timeoutMs);
    }

    function f32(value: number): number {
      return new Uint32Array(new Float32Array([value]).buffer)[0] as number;
    }

    describe('device creation', () => {
      it('reports the adapter and maps WebGPU limits', () => {
        expect(device.info.backend).toBe('webgpu');
        expect(device.info.name.length).toBeGreaterThan(0);
        expect(device.info.queueCount).toBe(2);
        const limits = device.info.limits;
        const gpu = device.gpuDevice.limits;
        expect(limits.maxBufferSize).toBe(gpu.maxBufferSize);
        expect(limits.maxWorkgroupCount).toEqual([
          gpu.maxComputeWorkgroupsPerDimension,
          gpu.maxComputeWorkgroupsPerDimension,
          gpu.maxComputeWorkgroupsPerDimension,
        ]);
        expect(limits.minStorageBufferOffsetAlignment).toBe(Math.max(4, gpu.minStorageBufferOffsetAlignment));
        expect(limits.maxConstants).toBe(64);
        expect(limits.maxUpdateSize).toBe(65536);
        expect(limits.maxBindings).toBeGreaterThanOrEqual(8);
      });

      it('rejects bad options and takes a GPUDevice it then does not destroy', async () => {
        await expect(createWebGpuDevice({ queueCount: 0 })).rejects.toMatchObject({
          code: ErrorCode.INVALID_ARGUMENT,
        });
        await expect(createWebGpuDevice({ queueCount: 33 })).rejects.toMatchObject({
          code: ErrorCode.INVALID_ARGUMENT,
        });
        const shared = await createWebGpuDevice({ device: device.gpuDevice, queueCount: 4 });
        expect(shared.info.queueCount).toBe(4);
        expect(shared.gpuDevice).toBe(device.gpuDevice);
        await shared.destroy();
        // The caller's GPUDevice still works.
        const b = buffer(16);
        await write(b, new Uint32Array([1, 2, 3, 4]));
        expect(Array.from(new Uint32Array((await read(b)).buffer))).toEqual([1, 2, 3, 4]);
      });
    });

    describe('built-in fill and copy kernels', () => {
      it('fills any range with 1-, 2- and 4-byte patterns (property)', async () => {
        const size = 64;
        const target = buffer(size);
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(1 as const, 2 as const, 4 as const),
            fc.nat({ max: 15 }),
            fc.nat({ max: 15 }),
            fc.nat({ max: 0xffffffff }),
            async (patternLength, offsetUnits, lengthUnits, raw) => {
              const offset = offsetUnits * patternLength;
              const length = Math.min(lengthUnits * patternLength, size - offset);
              const pattern = patternLength === 4 ? raw : raw % 2 ** (8 * patternLength);
              const before = new Uint8Array(size).map((_, i) => (i * 7 + 3) & 0xff);
              await write(target, before);
              const done = new Chain();
              device.queueFill(
                Q0,
                Fence.empty,
                done.next(),
                { buffer: target, offset, length },
                pattern,
                patternLength,
              );
              await done.now().wait(TIMEOUT);
              const expected = before.slice();
              for (let i = 0; i < length; i++)
                expected[offset + i] = (pattern >>> (8 * (i % patternLength))) & 0xff;
              expect(Array.from(await read(target))).toEqual(Array.from(expected));
            },
          ),
          { numRuns: 40 },
        );
      });

      it('copies unaligned ranges, also within one GPUBuffer (property)', async () => {
        const size = 96;
        const a = buffer(size);
        const b = buffer(size);
        await fc.assert(
          fc.asyncProperty(
            fc.boolean(),
            fc.nat({ max: 40 }),
            fc.nat({ max: 40 }),
            fc.nat({ max: 40 }),
            async (sameBuffer, sourceOffset, rawTarget, length) => {
              const target = sameBuffer ? a : b;
              let targetOffset = rawTarget;
              if (sameBuffer) {
                // Non-overlapping ranges of one buffer.
                targetOffset = sourceOffset + length + rawTarget;
                if (targetOffset + length > size) return;
              }
              const initialA = new Uint8Array(size).map((_, i) => (i * 13 + 1) & 0xff);
              const initialB = new Uint8Array(size).map((_, i) => (i * 5 + 200) & 0xff);
              await write(a, initialA);
              await write(b, initialB);
              const done = new Chain();
              device.queueCopy(
                Q0,
                Fence.empty,
                done.next(),
                { buffer: a, offset: sourceOffset, length },
                { buffer: target, offset: targetOffset, length },
              );
              await done.now().wait(TIMEOUT);
              const expected = (sameBuffer ? initialA : initialB).slice();
              expected.set(initialA.subarray(sourceOffset, sourceOffset + length), targetOffset);
              expect(Array.from(await read(target))).toEqual(Array.from(expected));
            },
          ),
          { numRuns: 40 },
        );
      });

      it('writes, updates and reads at unaligned offsets', async () => {
        const b = buffer(40);
        await write(b, new Uint8Array(40));
        await write(b, new Uint8Array([1, 2, 3, 4, 5]), 3);
        const done = new Chain();
        device.queueUpdate(Q0, Fence.empty, done.next(), new Uint8Array([9, 8, 7]), {
          buffer: b,
          offset: 13,
          length: 3,
        });
        await done.now().wait(TIMEOUT);
        const all = await read(b);
        expect(Array.from(all.subarray(0, 17))).toEqual([0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 9, 8, 7, 0]);
        expect(Array.from(await read(b, 5, 3))).toEqual([3, 4, 5]);
      });

      it('copies between queue-allocated buffers of one slab', async () => {
        const chain = new Chain();
        const x = device.queueAlloca(Q0, Fence.empty, chain.next(), { usage: BufferUsage.DEFAULT }, 100);
        const y = device.queueAlloca(Q0, chain.now(), chain.next(), { usage: BufferUsage.DEFAULT }, 100);
        const data = new Uint8Array(100).map((_, i) => i + 1);
        device.queueWrite(Q0, chain.now(), chain.next(), data, { buffer: x });
        device.queueCopy(
          Q0,
          chain.now(),
          chain.next(),
          { buffer: x, offset: 0, length: 100 },
          { buffer: y, offset: 0 },
        );
        const out = new Uint8Array(100);
        device.queueRead(Q0, chain.now(), chain.next(), { buffer: y }, out);
        await chain.now().wait(TIMEOUT);
        expect(Array.from(out)).toEqual(Array.from(data));
        const wx = x as unknown as { memory: { id: number } };
        const wy = y as unknown as { memory: { id: number } };
        expect(wx.memory.id).toBe(wy.memory.id);
        device.queueDealloca(Q0, chain.now(), chain.next(), x);
        device.queueDealloca(Q0, chain.now(), chain.next(), y);
        await chain.now().wait(TIMEOUT);
      });
    });

    describe('replay plans', () => {
      it('keeps staged updates in command order', async () => {
        const input = buffer(16);
        const out1 = buffer(16);
        const out2 = buffer(16);
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 0 });
        cb.begin();
        cb.update(new Int32Array([1, 2, 3, 4]), { buffer: input });
        cb.dispatch(negate, 'negate', {
          workgroupCount: [1, 1, 1],
          constants: [4],
          bindings: [{ buffer: input }, { buffer: out1 }],
        });
        cb.update(new Int32Array([5, 6, 7, 8]), { buffer: input });
        cb.dispatch(negate, 'negate', {
          workgroupCount: [1, 1, 1],
          constants: [4],
          bindings: [{ buffer: input }, { buffer: out2 }],
        });
        cb.end();
        const done = new Chain();
        device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
        await done.now().wait(TIMEOUT);
        expect(Array.from(new Int32Array((await read(out1)).buffer))).toEqual([-1, -2, -3, -4]);
        expect(Array.from(new Int32Array((await read(out2)).buffer))).toEqual([-5, -6, -7, -8]);
      });

      it('passes distinct constants per dispatch through the uniform ring', async () => {
        const data = buffer(4 * 64);
        await write(data, new Float32Array(64).fill(1));
        const cb = device.createCommandBuffer({ mode: 'one-shot' });
        cb.begin();
        for (let i = 0; i < 10; i++) {
          // x ← x·2 + i, over the first 64 - i elements (n differs per dispatch too)
          cb.dispatch(scale, 0, {
            workgroupCount: [1, 1, 1],
            constants: [f32(2), f32(i), 64 - i],
            bindings: [{ buffer: data }],
          });
        }
        cb.end();
        const done = new Chain();
        device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
        await done.now().wait(TIMEOUT);
        const result = new Float32Array((await read(data)).buffer);
        let expected0 = 1;
        for (let i = 0; i < 10; i++) expected0 = expected0 * 2 + i;
        expect(result[0]).toBe(expected0);
        // Element 60 is touched only by dispatches with n > 60: i = 0..3.
        let expected60 = 1;
        for (let i = 0; i < 4; i++) expected60 = expected60 * 2 + i;
        expect(result[60]).toBe(expected60);
      });

      it('caches bind groups per binding table and reuses them for equal memory', async () => {
        const n = 256;
        const a = buffer(4 * n);
        const b = buffer(4 * n);
        const c = buffer(4 * n);
        await write(
          a,
          new Int32Array(n).map((_, i) => i),
        );
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
        cb.begin();
        cb.dispatch(negate, 'negate', { workload: [n], constants: [n], bindings: [slotRef(0), slotRef(1)] });
        cb.dispatch(negate, 'negate', {
          workload: [64],
          constants: [64],
          bindings: [slotRef(0, 0, 256), slotRef(1, 256, 256)],
        });
        cb.end();
        const before = device.stats.bindGroups.misses;
        const chain = new Chain();
        // Fresh table objects over the same memory: bind groups are made once, then found.
        for (let k = 0; k < 3; k++) {
          device.queueExecute(Q0, chain.now(), chain.next(), [cb], [[{ buffer: a }, { buffer: b }]]);
        }
        device.queueExecute(Q0, chain.now(), chain.next(), [cb], [[{ buffer: a }, { buffer: c }]]);
        await chain.now().wait(TIMEOUT);
        // Two sets per table, two tables.
        expect(device.stats.bindGroups.misses - before).toBe(4);
        const rc = new Int32Array((await read(c)).buffer);
        expect(rc[3]).toBe(-3);
        expect(rc[100]).toBe(-36); // elements 64..127 were overwritten by the second dispatch
        expect(rc[200]).toBe(-200);
      });

      it('resolves slots 2^30 and 2^31 - 2 of a sparse table, also behind a host semaphore, in time of the slots used', async () => {
        // A table for slot 2^30 is a sparse array of length 2^30 + 1: a deferred execute keeps the
        // entries its plan uses, never a copy of the whole length (35 s or out of memory before).
        const started = performance.now();
        const high = 2 ** 30;
        const top = 2 ** 31 - 2;
        const input = buffer(16);
        const out = buffer(16);
        const other = buffer(16);
        await write(input, new Int32Array([1, 2, 3, 4]));
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 ** 31 - 1 });
        cb.begin();
        cb.dispatch(negate, 'negate', {
          workgroupCount: [1, 1, 1],
          constants: [4],
          bindings: [slotRef(high), slotRef(top)],
        });
        cb.end();
        const table: ({ buffer: Buffer } | undefined)[] = [];
        table[high] = { buffer: input };
        table[top] = { buffer: out };
        const gate = new TimelineSemaphore();
        const chain = new Chain();
        device.queueExecute(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), [cb], [table]);
        table[top] = { buffer: other }; // after the call: must not matter
        gate.signal(1);
        await chain.now().wait(TIMEOUT);
        expect(Array.from(new Int32Array((await read(out)).buffer))).toEqual([-1, -2, -3, -4]);
        device.queueExecute(Q0, chain.now(), chain.next(), [cb], [table]);
        await chain.now().wait(TIMEOUT);
        expect(Array.from(new Int32Array((await read(other)).buffer))).toEqual([-1, -2, -3, -4]);
        expect(performance.now() - started).toBeLessThan(5000);
      }, 5000);

      it('fails the signal when two writable bindings overlap (WebGPU forbids the aliasing)', async () => {
        const x = buffer(256);
        const cb = device.createCommandBuffer();
        cb.begin();
        cb.dispatch(negate, 'negate', {
          workgroupCount: [1, 1, 1],
          constants: [4],
          bindings: [{ buffer: x }, { buffer: x }],
        });
        cb.end();
        const done = new Chain();
        device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
        await expect(done.now().wait(TIMEOUT)).rejects.toThrow();
        const failure = done.semaphore.failure;
        expect(failure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
        expect(failure?.message).toMatch(/overlap/);
      });

      it('dispatches indirectly, also from parameters in a buffer the dispatch binds', async () => {
        const out = buffer(4 * 4 * 24);
        const params = buffer(64, BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS);
        const shared = buffer(1024, BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS);
        await write(params, new Uint32Array([0, 0, 0, 0, 2, 3, 4]));
        await write(shared, new Uint32Array([3, 2, 1]), 768);
        const cb = device.createCommandBuffer();
        cb.begin();
        cb.dispatch(ids, 0, { indirect: { buffer: params, offset: 16 }, bindings: [{ buffer: out }] });
        cb.dispatch(ids, 0, {
          indirect: { buffer: shared, offset: 768 },
          bindings: [{ buffer: shared, offset: 0, length: 768 }],
        });
        cb.end();
        const done = new Chain();
        device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
        await done.now().wait(TIMEOUT);
        const words = new Uint32Array((await read(out)).buffer);
        // 2 × 3 × 4 workgroups; record of workgroup (1, 2, 3) at l = 1 + 2·(2 + 3·3).
        const l = 1 + 2 * (2 + 3 * 3);
        expect(Array.from(words.subarray(4 * l, 4 * l + 4))).toEqual([1, 2, 3, 0xc0ffee]);
        const s = new Uint32Array((await read(shared, 0, 4 * 4 * 6)).buffer);
        const l2 = 2 + 3 * (1 + 2 * 0);
        expect(Array.from(s.subarray(4 * l2, 4 * l2 + 4))).toEqual([2, 1, 0, 0xc0ffee]);
      });

      it('reads indirect parameters written earlier in the same command buffer', async () => {
        const out = buffer(4 * 4 * 8);
        const params = buffer(16, BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS);
        const cb = device.createCommandBuffer();
        cb.begin();
        cb.update(new Uint32Array([2, 2, 2]), { buffer: params, offset: 0 });
        cb.dispatch(ids, 0, { indirect: { buffer: params }, bindings: [{ buffer: out }] });
        cb.end();
        const done = new Chain();
        device.queueExecute(Q0, Fence.empty, done.next(), [cb]);
        await done.now().wait(TIMEOUT);
        const words = new Uint32Array((await read(out)).buffer);
        expect(Array.from(words.subarray(28, 32))).toEqual([1, 1, 1, 0xc0ffee]);
      });
    });

    describe('submission and completion', () => {
      it('submits chains of GPU work without waiting for completion in between', async () => {
        const b = buffer(64);
        const chain = new Chain();
        const deferredBefore = device.stats.deferred;
        for (let i = 0; i < 50; i++) {
          device.queueFill(Q0, chain.now(), chain.next(), { buffer: b, offset: 0, length: 64 }, i, 1);
        }
        const out = new Uint8Array(64);
        device.queueRead(Q0, chain.now(), chain.next(), { buffer: b }, out);
        // A host call waits for the read to be signalled (reads signal only when done).
        let seen = -1;
        device.queueHostCall(Q0, chain.now(), chain.next(), () => {
          seen = out[0] as number;
        });
        await chain.now().wait(TIMEOUT);
        expect(device.stats.deferred - deferredBefore).toBe(1); // only the host call waited
        expect(seen).toBe(49);
      });

      it('signals a read only after the work it waited on is signalled', async () => {
        const b = buffer(16);
        const chain = new Chain();
        device.queueWrite(Q0, Fence.empty, chain.next(), new Uint8Array(16).fill(5), { buffer: b });
        device.queueFill(Q0, chain.now(), chain.next(), { buffer: b, offset: 4, length: 4 }, 7, 1);
        const out = new Uint8Array(16);
        device.queueRead(Q0, chain.now(), chain.next(), { buffer: b }, out);
        await chain.now().wait(TIMEOUT);
        expect(Array.from(out)).toEqual([5, 5, 5, 5, 7, 7, 7, 7, 5, 5, 5, 5, 5, 5, 5, 5]);
      });

      it('defers work behind a host semaphore without blocking, and copies update bytes at the call', async () => {
        const b = buffer(16);
        const gate = new TimelineSemaphore();
        const chain = new Chain();
        const bytes = new Uint8Array(16).fill(1);
        device.queueUpdate(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), bytes, { buffer: b });
        bytes.fill(2); // after the call: must not matter
        const out = new Uint8Array(16);
        device.queueRead(Q0, chain.now(), chain.next(), { buffer: b }, out);
        await new Promise((r) => setTimeout(r, 20));
        expect(chain.semaphore.value).toBe(0);
        gate.signal(1);
        await chain.now().wait(TIMEOUT);
        expect(Array.from(out)).toEqual(new Array(16).fill(1));
      });

      it('runs nothing behind a failed host semaphore and propagates ABORTED with the cause', async () => {
        const b = buffer(16);
        await write(b, new Uint8Array(16).fill(3));
        const gate = new TimelineSemaphore();
        const chain = new Chain();
        device.queueFill(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), { buffer: b }, 9, 1);
        const cause = new KeelError(ErrorCode.DATA_LOSS, 'upstream failed');
        gate.fail(cause);
        await expect(chain.now().wait(TIMEOUT)).rejects.toThrow();
        const failure = chain.semaphore.failure;
        expect(failure?.code).toBe(ErrorCode.ABORTED);
        expect(failure?.cause).toBe(cause);
        expect(Array.from(await read(b))).toEqual(new Array(16).fill(3));
      });

      it('submits work waiting on a barrier of GPU-ordered waits at once', async () => {
        const b = buffer(16);
        const chain = new Chain();
        const deferredBefore = device.stats.deferred;
        device.queueFill(Q0, Fence.empty, chain.next(), { buffer: b }, 1, 1);
        device.queueBarrier(Q0, chain.now(), chain.next());
        device.queueFill(Q0, chain.now(), chain.next(), { buffer: b, offset: 0, length: 4 }, 2, 1);
        await chain.now().wait(TIMEOUT);
        expect(device.stats.deferred - deferredBefore).toBe(1); // the barrier itself
        expect(Array.from(await read(b, 0, 8))).toEqual([2, 2, 2, 2, 1, 1, 1, 1]);
      });
    });

    describe('queue-ordered allocation', () => {
      it('binds transient buffers and reuses their memory on the same queue without waiting', async () => {
        const n = 64;
        const steps = 6;
        const input = buffer(4 * n);
        const output = buffer(4 * n * steps);
        await write(
          input,
          new Int32Array(n).map((_, i) => i + 1),
        );
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
        cb.begin();
        cb.dispatch(negate, 'negate', { workload: [n], constants: [n], bindings: [slotRef(0), slotRef(1)] });
        cb.end();
        const chain = new Chain();
        const bases: number[] = [];
        const deferredBefore = device.stats.deferred;
        const reusedBefore = device.allocatorStats().get('tlsf')?.reuseDominated ?? 0;
        for (let step = 0; step < steps; step++) {
          const t = device.queueAlloca(Q0, chain.now(), chain.next(), { usage: BufferUsage.DEFAULT }, 4 * n);
          device.queueExecute(Q0, chain.now(), chain.next(), [cb], [[{ buffer: input }, { buffer: t }]]);
          device.queueCopy(
            Q0,
            chain.now(),
            chain.next(),
            { buffer: t },
            { buffer: output, offset: 4 * n * step },
          );
          bases.push((t as unknown as { base: number }).base);
          device.queueDealloca(Q0, chain.now(), chain.next(), t);
          expect(t.state).toBe('deallocated');
        }
        await chain.now().wait(TIMEOUT);
        expect(device.stats.deferred - deferredBefore).toBe(0);
        const out = new Int32Array((await read(output)).buffer);
        for (let step = 0; step < steps; step++) expect(out[step * n + n - 1]).toBe(-n);
        const align = device.info.limits.minStorageBufferOffsetAlignment;
        for (const base of bases) expect(base % align).toBe(0);
        // Rule b of the allocator: each alloca's wait dominates the last dealloca's frontier.
        expect(new Set(bases).size).toBe(1);
        expect((device.allocatorStats().get('tlsf')?.reuseDominated ?? 0) - reusedBefore).toBe(steps - 1);
      });
    });

    describe('executables', () => {
      it('reports WGSL errors, missing entry points and foreign formats', async () => {
        const compileError = await device
          .createExecutable({
            format: 'wgsl',
            code: 'fn broken( {',
            exports: [{ name: 'main', bindingCount: 0, constantCount: 0 }],
          })
          .catch((e: unknown) => e);
        expect(KeelError.is(compileError, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect((compileError as Error).message).toMatch(/WGSL does not compile: 1:/);
        const missing = await device
          .createExecutable({
            format: 'wgsl',
            code: '@compute @workgroup_size(1) fn main() {}',
            exports: [{ name: 'other', bindingCount: 0, constantCount: 0 }],
          })
          .catch((e: unknown) => e);
        expect(KeelError.is(missing, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect((missing as Error).message).toMatch(/export 'other'/);
        const foreign = await device
          .createExecutable({
            format: 'js-module',
            url: 'file:///x.js',
            exports: [{ name: 'x', bindingCount: 0, constantCount: 0 }],
          })
          .catch((e: unknown) => e);
        expect(KeelError.is(foreign, ErrorCode.UNIMPLEMENTED)).toBe(true);
        const tooMany = await device
          .createExecutable({
            format: 'wgsl',
            code: '@compute @workgroup_size(1) fn main() {}',
            exports: [{ name: 'main', bindingCount: 0, constantCount: 65 }],
          })
          .catch((e: unknown) => e);
        expect(KeelError.is(tooMany, ErrorCode.INVALID_ARGUMENT)).toBe(true);
      });

      it("refuses an export whose workgroupSize differs from its entry point's @workgroup_size (literals, const and override names)", async () => {
        const exports = (name: string, workgroupSize: [number, number, number]) => [
          { name, bindingCount: 0, constantCount: 0, workgroupSize },
        ];
        // Attributes in either order, hex and suffixed literals, const and override names, comments ignored.
        const code = [
          '/* @workgroup_size(7) fn main */ @workgroup_size(0x40, 2u) @compute fn main() {}',
          'override WG: u32 = 32u;',
          'const CW = 16;',
          '@compute @workgroup_size(WG) fn byOverride() {}',
          '@compute @workgroup_size(CW, 2) fn byConst() {}',
          '@compute @workgroup_size(WG / 2u) fn byExpression() {}',
        ].join('\n');
        const refused = async (name: string, size: [number, number, number], shader: string) => {
          const error = await device
            .createExecutable({ format: 'wgsl', code, exports: exports(name, size), label: 'sizes' })
            .catch((e: unknown) => e);
          expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
          expect((error as Error).message).toContain(`executable 'sizes' export '${name}'`);
          expect((error as Error).message).toContain(`[${size.join(', ')}]`);
          expect((error as Error).message).toContain(`@workgroup_size(${shader})`);
        };
        await refused('main', [64, 1, 1], '64, 2, 1');
        await refused('byOverride', [64, 1, 1], '32, 1, 1');
        await refused('byConst', [16, 1, 1], '16, 2, 1');
        for (const [name, size] of [
          ['main', [64, 2, 1]],
          ['byOverride', [32, 1, 1]],
          ['byConst', [16, 2, 1]],
          // An expression is not evaluated, so not checked.
          ['byExpression', [3, 1, 1]],
        ] as const) {
          await expect(
            device.createExecutable({ format: 'wgsl', code, exports: exports(name, [...size]) }),
          ).resolves.toBeDefined();
        }
      });
    });

    describe('binding ranges', () => {
      const STAMP = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(4)
fn stamp(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&y)) { y[g.x] = 0xdeadbeefu; } }`;

      async function stampThrough(binding: { buffer: Buffer; offset?: number; length?: number }) {
        const exe = await device.createExecutable({
          format: 'wgsl',
          code: STAMP,
          exports: [{ name: 'stamp', bindingCount: 1, constantCount: 0, workgroupSize: [4, 1, 1] }],
        });
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
        cb.begin();
        cb.dispatch(exe, 'stamp', { workgroupCount: [4, 1, 1], bindings: [slotRef(0)] });
        cb.end();
        const s = new TimelineSemaphore();
        device.queueExecute(Q0, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb], [[binding]]);
        await s.wait(1, TIMEOUT).catch(() => {});
        return s.failure;
      }

      it("never reach past the caller's range: a 6-byte binding covers one word, a neighbouring allocation is untouched", async () => {
        // Binding offsets are multiples of the adapter's storage alignment (16 on lavapipe, 256 in Chromium).
        const align = device.info.limits.minStorageBufferOffsetAlignment;
        const x = buffer(4 * align);
        await write(x, new Uint8Array(4 * align).fill(0x11));
        expect(await stampThrough({ buffer: x, offset: align, length: 6 })).toBeUndefined();
        const bytes = await read(x);
        expect([...bytes.subarray(align, align + 4)]).toEqual([0xef, 0xbe, 0xad, 0xde]);
        expect(bytes.subarray(align + 4).every((b) => b === 0x11)).toBe(true);
        expect(bytes.subarray(0, align).every((b) => b === 0x11)).toBe(true);
        // Two queue-allocated buffers of one slab; an empty binding at the end of the first.
        const chain = new Chain();
        const a = device.queueAlloca(Q0, chain.now(), chain.next(), { usage: BufferUsage.DEFAULT }, align);
        const b = device.queueAlloca(Q0, chain.now(), chain.next(), { usage: BufferUsage.DEFAULT }, align);
        device.queueFill(Q0, chain.now(), chain.next(), { buffer: b }, 0x11, 1);
        await chain.now().wait(TIMEOUT);
        const failure = await stampThrough({ buffer: a, offset: align });
        expect(failure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
        expect(failure?.message).toMatch(/binding 0 covers 0 bytes/);
        expect((await read(b)).every((v) => v === 0x11)).toBe(true);
        expect((await stampThrough({ buffer: x, offset: 2 * align, length: 3 }))?.code).toBe(
          ErrorCode.INVALID_ARGUMENT,
        );
        device.queueDealloca(Q0, chain.now(), chain.next(), a);
        device.queueDealloca(Q0, chain.now(), chain.next(), b);
        await chain.now().wait(TIMEOUT);
      });
    });

    describe('loss and teardown', () => {
      it('fails pending signals with UNAVAILABLE when the GPUDevice is lost', async () => {
        const lossy = await createWebGpuDevice();
        const b = lossy.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
        const gate = new TimelineSemaphore();
        const chain = new Chain();
        lossy.queueFill(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), { buffer: b }, 1, 1);
        const writes = new Chain();
        lossy.queueWrite(Q0, Fence.of({ semaphore: gate, value: 1 }), writes.next(), new Uint8Array(16), {
          buffer: b,
        });
        lossy.gpuDevice.destroy();
        const reason = await lossy.lost;
        expect(reason.code).toBe(ErrorCode.UNAVAILABLE);
        await expect(chain.now().wait(TIMEOUT)).rejects.toThrow();
        expect(chain.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
        await expect(writes.now().wait(TIMEOUT)).rejects.toThrow();
        expect(writes.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
        expect(() => lossy.createBuffer({ byteLength: 4, usage: BufferUsage.DEFAULT })).toThrow(
          expect.objectContaining({ code: ErrorCode.UNAVAILABLE }),
        );
        await lossy.destroy();
      });

      it('destroy fails pending work, releases everything and is idempotent', async () => {
        const doomed = await createWebGpuDevice();
        const b = doomed.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
        const gate = new TimelineSemaphore();
        const chain = new Chain();
        doomed.queueFill(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), { buffer: b }, 1, 1);
        const alloc = new Chain();
        doomed.queueAlloca(
          Q0,
          Fence.of({ semaphore: gate, value: 1 }),
          alloc.next(),
          { usage: BufferUsage.DEFAULT },
          64,
        );
        await Promise.all([doomed.destroy(), doomed.destroy()]);
        await expect(chain.now().wait(TIMEOUT)).rejects.toThrow();
        expect(chain.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
        expect(alloc.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
        expect(b.state).toBe('destroyed');
        expect((await doomed.lost).code).toBe(ErrorCode.UNAVAILABLE);
        expect(() => doomed.queueBarrier(Q0, Fence.empty, Fence.empty)).toThrow(
          expect.objectContaining({ code: ErrorCode.FAILED_PRECONDITION }),
        );
      });
    });
  });
}
