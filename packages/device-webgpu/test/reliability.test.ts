/**
 * Reliability of the WebGPU device on Dawn (issue 15): options checked at creation, host memory
 * detached before a deferred transfer, sizes past the device limits, indirect counts past the limit,
 * GPU errors as KeelErrors on the operation's signal, device loss as UNAVAILABLE in pipeline creation,
 * and teardown that leaves nothing behind. Skipped with the reason where there is no adapter.
 */
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type CommandBuffer, type Executable, QueueAffinity } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromGpuError } from '../src/gpu-errors';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import { wgslKernel } from './cts-kernels';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const Q0 = QueueAffinity.of(0);
const TIMEOUT = { timeoutMs: 10_000 };

function at(semaphore: Semaphore, value: number): Fence {
  return Fence.of({ semaphore, value });
}

/** The failure of `fence`'s (single) semaphore once the wait settles, or undefined when it succeeded. */
async function failureOf(fence: Fence): Promise<KeelError | undefined> {
  try {
    await fence.wait(TIMEOUT);
    return undefined;
  } catch {
    return fence.timepoints[0]?.semaphore.failure as KeelError | undefined;
  }
}

/**
 * Runs `body` on a device whose GPUBuffers labelled `label` come back invalid while `broken(true)` is
 * in force, as an out-of-memory creation gives them (here through a size past maxBufferSize: a
 * validation error instead of GPUOutOfMemoryError, the same invalid object). Afterwards nothing may
 * have reached the uncaptured-error handler; the device is destroyed either way.
 */
async function withBrokenBuffers(
  label: string,
  body: (d: WebGpuDevice, broken: (on: boolean) => void) => Promise<void>,
): Promise<void> {
  let breaking = false;
  const caught: string[] = [];
  const d = await createWebGpuDevice({ onUncapturedError: (e) => caught.push(e.message) });
  const gpu = d.gpuDevice;
  const create = gpu.createBuffer.bind(gpu);
  gpu.createBuffer = (descriptor: GPUBufferDescriptor) =>
    create(
      breaking && descriptor.label === label
        ? { ...descriptor, size: gpu.limits.maxBufferSize + 4 }
        : descriptor,
    );
  try {
    await body(d, (on) => {
      breaking = on;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(caught).toEqual([]);
  } finally {
    await d.destroy();
  }
}

/** The CTS negate/double kernel (`negate`: out[i] = -in[i] for i < constants[0]). */
const NEGATE_DOUBLE = wgslKernel('negateDouble', [
  { name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
]);

/** The negate executable and a 16-byte input and output buffer on `d`. */
async function negateSetup(d: WebGpuDevice): Promise<{ negate: Executable; input: Buffer; out: Buffer }> {
  const negate = await d.createExecutable(NEGATE_DOUBLE);
  const input = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
  const out = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
  return { negate, input, out };
}

/** Records `out[0..4] = -input[0..4]` (one workgroup, the element count as the dispatch's constant). */
function negate4(cb: CommandBuffer, negate: Executable, input: Buffer, out: Buffer): void {
  cb.dispatch(negate, 'negate', {
    workgroupCount: [1, 1, 1],
    constants: [4],
    bindings: [{ buffer: input }, { buffer: out }],
  });
}

const FIXED_SIZE_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<u32>, 4>;
@compute @workgroup_size(1) fn main() { a[0] = vec4<u32>(1u); }
`;

describe.skipIf(!probe.available)(
  `@keel/device-webgpu reliability${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    let device: WebGpuDevice;
    const gpuErrors: string[] = [];
    let ids: Executable;

    beforeAll(async () => {
      device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      ids = await device.createExecutable(
        wgslKernel('workgroupIds', [
          { name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] },
        ]),
      );
    });

    afterAll(async () => {
      await device?.destroy();
      // Nothing Keel did reached the uncaptured-error handler.
      expect(gpuErrors).toEqual([]);
    });

    function buffer(byteLength: number): Buffer {
      return device.createBuffer({
        byteLength,
        usage: BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
      });
    }

    async function write(target: Buffer, bytes: ArrayBufferView): Promise<void> {
      const s = new TimelineSemaphore();
      device.queueWrite(Q0, Fence.empty, at(s, 1), bytes, { buffer: target });
      await s.wait(1, TIMEOUT);
    }

    async function read(source: Buffer): Promise<Uint32Array> {
      const out = new Uint8Array(source.byteLength);
      const s = new TimelineSemaphore();
      device.queueRead(Q0, Fence.empty, at(s, 1), { buffer: source }, out);
      await s.wait(1, TIMEOUT);
      return new Uint32Array(out.buffer);
    }

    describe('options are checked at creation', () => {
      it('refuses bad values, unknown keys and non-devices with INVALID_ARGUMENT naming the option', async () => {
        const cases: [unknown, RegExp][] = [
          [{ transientBudget: -5 }, /'transientBudget'.*-5/],
          [{ device: {} }, /'device' must be a GPUDevice, got an empty object/],
          [{ queueCount: '2' }, /'queueCount'.*"2"/],
          [{ transientSlabSize: 1.5 }, /'transientSlabSize'/],
          [{ tableCacheSize: 0 }, /'tableCacheSize'/],
          [{ onUncapturedError: 'log' }, /'onUncapturedError' must be a function/],
          [{ queueCnt: 2 }, /unknown option 'queueCnt'/],
          ['sync', /options must be an object, got "sync"/],
        ];
        for (const [options, message] of cases) {
          const error = await createWebGpuDevice(options as never).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT), String(message)).toBe(true);
          expect((error as KeelError).message).toMatch(message);
        }
      });

      it('refuses a transientSlabSize above the device maxBufferSize at creation', async () => {
        const error = await createWebGpuDevice({
          device: device.gpuDevice,
          transientSlabSize: device.info.limits.maxBufferSize + 1,
        }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect((error as KeelError).message).toMatch(/maxBufferSize/);
      });
    });

    describe('host memory detached before a deferred transfer', () => {
      it('fails a write whose source was transferred with FAILED_PRECONDITION and writes nothing', async () => {
        const target = buffer(16);
        await write(target, new Uint32Array([1, 2, 3, 4]));
        const gate = new TimelineSemaphore();
        const done = new TimelineSemaphore();
        const source = new Uint32Array([9, 9, 9, 9]);
        device.queueWrite(Q0, at(gate, 1), at(done, 1), source, { buffer: target });
        structuredClone(source.buffer, { transfer: [source.buffer] });
        gate.signal(1);
        const failure = await failureOf(at(done, 1));
        expect(failure?.code).toBe(ErrorCode.FAILED_PRECONDITION);
        expect(failure?.message).toMatch(/queueWrite: the host source was detached/);
        expect(Array.from(await read(target))).toEqual([1, 2, 3, 4]);
      });

      it('fails a read whose target was transferred with FAILED_PRECONDITION', async () => {
        const source = buffer(16);
        await write(source, new Uint32Array([5, 6, 7, 8]));
        const gate = new TimelineSemaphore();
        const done = new TimelineSemaphore();
        const target = new Uint8Array(16);
        device.queueRead(Q0, at(gate, 1), at(done, 1), { buffer: source }, target);
        structuredClone(target.buffer, { transfer: [target.buffer] });
        gate.signal(1);
        const failure = await failureOf(at(done, 1));
        expect(failure?.code).toBe(ErrorCode.FAILED_PRECONDITION);
        expect(failure?.message).toMatch(/queueRead: the host target was detached/);
      });
    });

    describe('device limits', () => {
      it('refuses buffers that round past maxBufferSize, and the device stays usable', async () => {
        const max = device.info.limits.maxBufferSize;
        const error = (() => {
          try {
            device.createBuffer({ byteLength: 4294967295, usage: BufferUsage.DEFAULT });
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect((error as KeelError).message).toMatch(new RegExp(`maxBufferSize of ${max}`));
        const s = new TimelineSemaphore();
        expect(() =>
          device.queueAlloca(Q0, Fence.empty, at(s, 1), { usage: BufferUsage.DEFAULT }, 4294967295),
        ).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
        const b = buffer(16);
        const filled = new TimelineSemaphore();
        device.queueFill(Q0, Fence.empty, at(filled, 1), { buffer: b }, 0x01020304, 4);
        await filled.wait(1, TIMEOUT);
        expect(Array.from(await read(b))).toEqual([0x01020304, 0x01020304, 0x01020304, 0x01020304]);
      });

      it('fails an indirect dispatch over maxComputeWorkgroupsPerDimension with OUT_OF_RANGE, not a silent skip', async () => {
        const limit = device.gpuDevice.limits.maxComputeWorkgroupsPerDimension;
        const out = buffer(64);
        const params = buffer(32);
        await write(params, new Uint32Array([1, 1, limit + 1, 0, 1, 1, 1, 0]));
        const over = device.createCommandBuffer();
        over.begin();
        over.dispatch(ids, 0, { indirect: { buffer: params }, bindings: [{ buffer: out }] });
        over.end();
        const s = new TimelineSemaphore();
        device.queueExecute(Q0, Fence.empty, at(s, 1), [over]);
        const failure = await failureOf(at(s, 1));
        expect(failure?.code).toBe(ErrorCode.OUT_OF_RANGE);
        expect(failure?.message).toMatch(
          new RegExp(
            `\\[1, 1, ${limit + 1}\\] exceeds the device's maxComputeWorkgroupsPerDimension of ${limit}`,
          ),
        );
        expect(Array.from(await read(out))).toEqual(new Array(16).fill(0));
        // A count within the limit, replayed after the failure, runs.
        const fine = device.createCommandBuffer();
        fine.begin();
        fine.dispatch(ids, 0, { indirect: { buffer: params, offset: 16 }, bindings: [{ buffer: out }] });
        fine.end();
        const t = new TimelineSemaphore();
        device.queueExecute(Q0, Fence.empty, at(t, 1), [fine]);
        await t.wait(1, TIMEOUT);
        expect(Array.from((await read(out)).subarray(0, 4))).toEqual([0, 0, 0, 0xc0ffee]);
      });
    });

    describe('GPU errors are Keel errors', () => {
      it("fails the operation's signal with INVALID_ARGUMENT and Dawn's error as cause", async () => {
        const fixed = await device.createExecutable({
          format: 'wgsl',
          label: 'fixed',
          code: FIXED_SIZE_WGSL,
          exports: [{ name: 'main', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] }],
        });
        const small = buffer(16);
        const cb = device.createCommandBuffer();
        cb.begin();
        cb.dispatch(fixed, 0, { workgroupCount: [1, 1, 1], bindings: [{ buffer: small }] });
        cb.end();
        const s = new TimelineSemaphore();
        device.queueExecute(Q0, Fence.empty, at(s, 1), [cb]);
        const failure = await failureOf(at(s, 1));
        expect(failure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
        expect(failure?.message).toMatch(/queueExecute: failed WebGPU validation/);
        expect((failure?.cause as { message?: unknown } | undefined)?.message).toEqual(expect.any(String));
        // Later work is unaffected.
        const b = buffer(16);
        await write(b, new Uint32Array([4, 3, 2, 1]));
        expect(Array.from(await read(b))).toEqual([4, 3, 2, 1]);
      });
    });

    describe('a transient slab whose creation fails', () => {
      it('reaches no uncaptured-error handler; operations on its buffers fail with its error, naming the slab; later allocas get a fresh pool', async () => {
        await withBrokenBuffers('keel transient slab', async (d, broken) => {
          broken(true);
          const s = new TimelineSemaphore();
          const b = d.queueAlloca(Q0, Fence.empty, at(s, 1), { usage: BufferUsage.DEFAULT }, 256);
          // Encoded in the same turn, before the slab's error is known: the batch fails on the GPU.
          d.queueFill(Q0, at(s, 1), at(s, 2), { buffer: b }, 1, 4);
          expect((await failureOf(at(s, 2)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          // Once known, operations on the buffer fail with the slab's error, before any GPU work.
          await new Promise((r) => setTimeout(r, 0)); // the slab's own scope pops settle
          const t = new TimelineSemaphore();
          d.queueFill(Q0, Fence.empty, at(t, 1), { buffer: b }, 2, 4);
          const failure = await failureOf(at(t, 1));
          expect(failure?.message).toMatch(/queueAlloca: a slab of \d+ bytes: failed WebGPU validation/);
          expect((failure?.cause as { message?: unknown } | undefined)?.message).toMatch(/max buffer size/);
          // Recovery: later allocas get a fresh pool (new slabs); the broken slab goes once its buffer
          // is deallocated.
          broken(false);
          const r = new TimelineSemaphore();
          const fresh = d.queueAlloca(Q0, Fence.empty, at(r, 1), { usage: BufferUsage.DEFAULT }, 256);
          d.queueFill(Q0, at(r, 1), at(r, 2), { buffer: fresh }, 9, 4);
          const out = new Uint32Array(64);
          d.queueRead(Q0, at(r, 2), at(r, 3), { buffer: fresh }, out);
          await r.wait(3, TIMEOUT);
          expect(out.every((v) => v === 9)).toBe(true);
          const held = d.stats.gpuBuffers;
          const gone = new TimelineSemaphore();
          d.queueDealloca(Q0, Fence.empty, at(gone, 1), b);
          await gone.wait(1, TIMEOUT);
          const again = d.queueAlloca(Q0, Fence.empty, at(r, 4), { usage: BufferUsage.DEFAULT }, 256);
          await r.wait(4, TIMEOUT);
          // The retired pool, now empty, was destroyed: its (broken) slab is gone.
          expect(d.stats.gpuBuffers).toBe(held - 1);
          expect(again.byteLength).toBe(256);
          // createBuffer buffers (their own GPUBuffers) are unaffected.
          const other = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
          const u = new TimelineSemaphore();
          d.queueFill(Q0, Fence.empty, at(u, 1), { buffer: other }, 3, 4);
          await u.wait(1, TIMEOUT);
        });
      });
    });

    describe('a resident-constants slab whose creation fails', () => {
      it('fails only the work that bound it before its failure was known; the plan is placed again in a fresh pool', async () => {
        await withBrokenBuffers('keel resident constants', async (d, broken) => {
          broken(true);
          const { negate, input, out } = await negateSetup(d);
          const cb = d.createCommandBuffer({ mode: 'reusable' });
          cb.begin();
          negate4(cb, negate, input, out);
          cb.end();
          const s = new TimelineSemaphore();
          d.queueWrite(Q0, Fence.empty, at(s, 1), new Int32Array([1, 2, 3, 4]), { buffer: input });
          await s.wait(1, TIMEOUT);
          // The first submission places the constants in the broken slab: its batch fails on the GPU.
          d.queueExecute(Q0, Fence.empty, at(s, 2), [cb]);
          expect((await failureOf(at(s, 2)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          await new Promise((r) => setTimeout(r, 0)); // the slab's own scope pops settle
          broken(false);
          // Later submissions of the same command buffer place it again, in a fresh pool, and run.
          const t = new TimelineSemaphore();
          const before = d.stats.gpuBuffers;
          d.queueExecute(Q0, Fence.empty, at(t, 1), [cb]);
          // Placed again: a fresh slab, and the retired pool (only the failed placement was in it) is
          // destroyed with its broken slab.
          expect(d.stats.gpuBuffers).toBe(before);
          const got = new Int32Array(4);
          d.queueRead(Q0, at(t, 1), at(t, 2), { buffer: out }, got);
          await t.wait(2, TIMEOUT);
          expect(Array.from(got)).toEqual([-1, -2, -3, -4]);
          d.queueExecute(Q0, at(t, 2), at(t, 3), [cb]);
          await t.wait(3, TIMEOUT);
        });
      });
    });

    describe('a uniform ring growth whose buffer creation fails', () => {
      it('fails only the batch that grew it; the next submission gets a new ring buffer', async () => {
        await withBrokenBuffers('keel uniform ring', async (d, broken) => {
          const { negate, input, out } = await negateSetup(d);
          const big = d.createBuffer({ byteLength: 65536, usage: BufferUsage.DEFAULT });
          // Five 64 KiB updates in one submission need more than the ring's 256 KiB: it grows, and the
          // new ring buffer comes back invalid.
          broken(true);
          const grow = d.createCommandBuffer({ mode: 'one-shot' });
          grow.begin();
          for (let i = 0; i < 5; i++) grow.update(new Uint8Array(65536).fill(i), { buffer: big });
          grow.end();
          const s = new TimelineSemaphore();
          d.queueExecute(Q0, Fence.empty, at(s, 1), [grow]);
          expect((await failureOf(at(s, 1)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          await new Promise((r) => setTimeout(r, 0)); // the ring's own scope pops settle
          broken(false);
          // Later work through the ring (dispatch constants, updates) runs on a new ring buffer.
          const t = new TimelineSemaphore();
          d.queueWrite(Q0, Fence.empty, at(t, 1), new Int32Array([1, 2, 3, 4]), { buffer: input });
          const cb = d.createCommandBuffer({ mode: 'one-shot' });
          cb.begin();
          negate4(cb, negate, input, out);
          cb.update(new Uint32Array([7, 7, 7, 7]), { buffer: input });
          cb.end();
          d.queueExecute(Q0, at(t, 1), at(t, 2), [cb]);
          const got = new Int32Array(4);
          const updated = new Uint32Array(4);
          d.queueRead(Q0, at(t, 2), at(t, 3), { buffer: out }, got);
          d.queueRead(Q0, at(t, 3), at(t, 4), { buffer: input }, updated);
          await t.wait(4, TIMEOUT);
          expect(Array.from(got)).toEqual([-1, -2, -3, -4]);
          expect(Array.from(updated)).toEqual([7, 7, 7, 7]);
        });
      });
    });

    describe('a readback staging buffer whose creation fails', () => {
      it('fails only its read; later reads of that size get a new staging buffer', async () => {
        await withBrokenBuffers('keel readback', async (d, broken) => {
          const b = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
          const s = new TimelineSemaphore();
          d.queueFill(Q0, Fence.empty, at(s, 1), { buffer: b }, 5, 4);
          await s.wait(1, TIMEOUT);
          broken(true);
          d.queueRead(Q0, Fence.empty, at(s, 2), { buffer: b }, new Uint32Array(16));
          // Its copy fails validation and its map fails (UNAVAILABLE, as every failed map of a read).
          expect([ErrorCode.UNAVAILABLE, ErrorCode.INVALID_ARGUMENT]).toContain(
            (await failureOf(at(s, 2)))?.code,
          );
          broken(false);
          for (let i = 0; i < 3; i++) {
            const t = new TimelineSemaphore();
            const out = new Uint32Array(16);
            d.queueRead(Q0, Fence.empty, at(t, 1), { buffer: b }, out);
            await t.wait(1, TIMEOUT);
            expect(out.every((v) => v === 5)).toBe(true);
          }
        });
      });
    });

    describe('a uniform detour region whose creation fails', () => {
      it('fails only the execute that used it; the next one gets a new region and runs', async () => {
        await withBrokenBuffers('keel uniform detour', async (d, broken) => {
          // A uniform and a writable storage binding of two queue-allocated buffers of one slab.
          const sum = await d.createExecutable({
            format: 'wgsl',
            code: `struct P { a: u32, b: u32, c: u32, d: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1) fn sum() { o[0] = p.a + p.b; }`,
            exports: [{ name: 'sum', bindingCount: 2, constantCount: 0, workgroupSize: [1, 1, 1] }],
          });
          const s = new TimelineSemaphore();
          const params = d.queueAlloca(Q0, Fence.empty, at(s, 1), { usage: BufferUsage.DEFAULT }, 16);
          const out = d.queueAlloca(Q0, at(s, 1), at(s, 2), { usage: BufferUsage.DEFAULT }, 16);
          d.queueWrite(Q0, at(s, 2), at(s, 3), new Uint32Array([3, 4, 0, 0]), { buffer: params });
          await s.wait(3, TIMEOUT);
          const cb = d.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
          cb.begin();
          cb.dispatch(sum, 'sum', { workgroupCount: [1, 1, 1], bindings: [{ slot: 0 }, { slot: 1 }] });
          cb.end();
          const table = [{ buffer: params }, { buffer: out }];
          broken(true);
          d.queueExecute(Q0, at(s, 3), at(s, 4), [cb], [table]);
          expect((await failureOf(at(s, 4)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          await new Promise((r) => setTimeout(r, 0)); // the region's own scope pops settle
          broken(false);
          const t = new TimelineSemaphore();
          d.queueExecute(Q0, Fence.empty, at(t, 1), [cb], [table]);
          await t.wait(1, TIMEOUT);
          const result = new Uint32Array(1);
          d.queueRead(Q0, at(t, 1), at(t, 2), { buffer: out, length: 4 }, result);
          await t.wait(2, TIMEOUT);
          expect(result[0]).toBe(7);
        });
      });
    });

    describe('a scratch buffer whose creation fails', () => {
      it('fails only the batch that used it; later copies within one buffer get a new scratch buffer', async () => {
        await withBrokenBuffers('keel scratch', async (d, broken) => {
          const b = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
          const s = new TimelineSemaphore();
          d.queueWrite(Q0, Fence.empty, at(s, 1), new Uint32Array([1, 2, 3, 4]), { buffer: b });
          await s.wait(1, TIMEOUT);
          // A copy within one GPUBuffer goes through the scratch buffer, made now and invalid.
          broken(true);
          d.queueCopy(Q0, at(s, 1), at(s, 2), { buffer: b, length: 16 }, { buffer: b, offset: 16 });
          expect((await failureOf(at(s, 2)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          await new Promise((r) => setTimeout(r, 0)); // the scratch buffer's own scope pops settle
          broken(false);
          const t = new TimelineSemaphore();
          d.queueCopy(Q0, Fence.empty, at(t, 1), { buffer: b, length: 16 }, { buffer: b, offset: 32 });
          const out = new Uint32Array(4);
          d.queueRead(Q0, at(t, 1), at(t, 2), { buffer: b, offset: 32, length: 16 }, out);
          await t.wait(2, TIMEOUT);
          expect(Array.from(out)).toEqual([1, 2, 3, 4]);
        });
      });
    });

    describe("a trace's timestamp resolve buffer whose creation fails", () => {
      it('fails only the timed execute that used it; a later trace times its dispatches again', async () => {
        await withBrokenBuffers('keel trace resolve', async (d, broken) => {
          const { negate, input, out } = await negateSetup(d);
          const s = new TimelineSemaphore();
          d.queueWrite(Q0, Fence.empty, at(s, 1), new Int32Array([1, 2, 3, 4]), { buffer: input });
          await s.wait(1, TIMEOUT);
          const cb = d.createCommandBuffer({ mode: 'reusable' });
          cb.begin();
          negate4(cb, negate, input, out);
          cb.end();
          broken(true);
          {
            using trace = d.startTrace();
            expect(trace.dispatchTiming).toBe('gpu-timestamp');
            d.queueExecute(Q0, Fence.empty, at(s, 2), [cb]);
            expect((await failureOf(at(s, 2)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          }
          await new Promise((r) => setTimeout(r, 0)); // the creation scopes' pops settle
          broken(false);
          const trace = d.startTrace();
          const t = new TimelineSemaphore();
          d.queueExecute(Q0, Fence.empty, at(t, 1), [cb]);
          const got = new Int32Array(4);
          d.queueRead(Q0, at(t, 1), at(t, 2), { buffer: out }, got);
          await t.wait(2, TIMEOUT);
          trace.stop();
          expect(Array.from(got)).toEqual([-1, -2, -3, -4]);
          const dispatches = (await trace.toChromeTrace()).traceEvents.filter((e) => e.cat === 'dispatch');
          expect(dispatches.map((e) => [e.name, e.args?.timing])).toEqual([['negate', 'gpu-timestamp']]);
        });
      });
    });

    describe('GPU error mapping', () => {
      it('maps out-of-memory, validation and internal GPUErrors to RESOURCE_EXHAUSTED, INVALID_ARGUMENT, INTERNAL with the cause', () => {
        // The webgpu package's own error classes (installed as globals when the device was created).
        const g = globalThis as unknown as Record<string, new (message: string) => GPUError>;
        const cases: [string, ErrorCode][] = [
          ['GPUOutOfMemoryError', ErrorCode.RESOURCE_EXHAUSTED],
          ['GPUValidationError', ErrorCode.INVALID_ARGUMENT],
          ['GPUInternalError', ErrorCode.INTERNAL],
        ];
        for (const [name, code] of cases) {
          const Class = g[name] as new (message: string) => GPUError;
          const gpuError = new Class(`dawn says ${name}`);
          const error = fromGpuError(gpuError, 'op');
          expect(error.code).toBe(code);
          expect(error.cause).toBe(gpuError);
          expect(error.message).toMatch(new RegExp(`^op: .*\\(dawn says ${name}\\)$`));
        }
      });
    });

    describe('device loss', () => {
      it('createExecutable on a destroyed GPUDevice is UNAVAILABLE, also when it is destroyed mid-compilation', async () => {
        const source = wgslKernel('workgroupIds', [
          { name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] },
        ]);
        const lost = await createWebGpuDevice();
        lost.gpuDevice.destroy();
        await expect(lost.createExecutable(source)).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
        await lost.destroy();
        const midway = await createWebGpuDevice();
        const compiling = midway.createExecutable(source);
        midway.gpuDevice.destroy();
        await expect(compiling).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
        await midway.destroy();
      });
    });

    describe('teardown', () => {
      it('destroy() waits for work in flight and leaves no GPU buffer, bind group cache or pending promise', async () => {
        const d = await createWebGpuDevice();
        const exe = await d.createExecutable(
          wgslKernel('workgroupIds', [
            { name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] },
          ]),
        );
        const usage = BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS;
        const b = d.createBuffer({ byteLength: 4096, usage });
        const s = new TimelineSemaphore();
        d.queueWrite(Q0, Fence.empty, at(s, 1), new Uint32Array([2, 1, 1, 0]), { buffer: b });
        const t = d.queueAlloca(Q0, at(s, 1), at(s, 2), { usage }, 1024);
        const cb = d.createCommandBuffer({ mode: 'reusable' });
        cb.begin();
        cb.fill({ buffer: b, offset: 1024, length: 7 }, 3, 1);
        cb.dispatch(exe, 0, { indirect: { buffer: b }, bindings: [{ buffer: t }] });
        cb.end();
        d.queueExecute(Q0, at(s, 2), at(s, 3), [cb]);
        d.queueRead(Q0, at(s, 3), at(s, 4), { buffer: b, length: 64 }, new Uint8Array(64));
        await s.wait(4, TIMEOUT);
        // More in flight when destroy() runs: a write (its staging is re-mapped afterwards) and a read.
        d.queueWrite(Q0, Fence.empty, at(s, 5), new Uint8Array(256), { buffer: b });
        d.queueRead(Q0, Fence.empty, at(s, 6), { buffer: b, length: 64 }, new Uint8Array(64));
        expect(d.stats.gpuBuffers).toBeGreaterThan(3);
        expect(d.stats.bindGroupLayouts).toBeGreaterThan(0);
        await d.destroy();
        expect(d.stats.gpuBuffers).toBe(0);
        expect(d.stats.bindGroupLayouts).toBe(0);
        expect(d.stats.bindGroups.size).toBe(0);
        expect(d.stats.upload.remapping).toBe(0);
        expect(d.stats.pending).toBe(0);
      });
    });
  },
);
