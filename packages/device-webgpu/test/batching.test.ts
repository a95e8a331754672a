/**
 * Submission batches (op-scheduler.ts § Batching): operations that become runnable in one synchronous
 * turn share one `queue.submit` and one set of error scopes; an update (whose `queue.writeBuffer` runs
 * ahead of every encoder) still sees the effects of earlier operations of the turn; a GPU error fails
 * every operation of its batch, and only those; an operation whose encoding fails before encoding
 * anything fails alone; indirect counts are checked per execute within a batch; `flush` submits at
 * once; a buffer destroyed in the turn that used it stays valid for that work. Skipped with the
 * reason where there is no adapter.
 */
import { ErrorCode, Fence, type KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, QueueAffinity } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import { wgslKernel } from './cts-kernels';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const Q0 = QueueAffinity.of(0);
const Q1 = QueueAffinity.of(1);
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

/** Fails WebGPU validation at submit: the binding is smaller than the fixed-size array. */
const FIXED_SIZE_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<u32>, 4>;
@compute @workgroup_size(1) fn main() { a[0] = vec4<u32>(1u); }
`;

describe.skipIf(!probe.available)(
  `@keel/device-webgpu submission batches${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    let device: WebGpuDevice;
    const gpuErrors: string[] = [];

    beforeAll(async () => {
      device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
    });

    afterAll(async () => {
      await device?.destroy();
      expect(gpuErrors).toEqual([]);
    });

    function buffer(byteLength: number): Buffer {
      return device.createBuffer({
        byteLength,
        usage: BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
      });
    }

    async function read(source: Buffer, on: WebGpuDevice = device): Promise<number[]> {
      const out = new Uint32Array(source.byteLength / 4);
      const s = new TimelineSemaphore();
      on.queueRead(Q0, Fence.empty, at(s, 1), { buffer: source }, out);
      await s.wait(1, TIMEOUT);
      return Array.from(out);
    }

    it('submits the operations of one turn with one queue.submit and, once warm, three error-scope pops', async () => {
      const a = buffer(16);
      const b = buffer(16);
      const out = new Uint32Array(4);
      async function turn(): Promise<{ submissions: number; pops: number }> {
        const before = device.stats;
        const s = new TimelineSemaphore();
        device.queueWrite(Q1, Fence.empty, at(s, 1), new Uint32Array([1, 2, 3, 4]), { buffer: a });
        device.queueFill(Q0, at(s, 1), at(s, 2), { buffer: b }, 9, 4);
        device.queueCopy(Q0, at(s, 2), at(s, 3), { buffer: a, length: 8 }, { buffer: b, offset: 8 });
        device.queueRead(Q0, at(s, 3), at(s, 4), { buffer: b }, out);
        // Nothing deferred: each waits only for GPU order, so all four are encoded in this turn.
        expect(device.stats.pending - before.pending).toBe(4);
        await s.wait(4, TIMEOUT);
        const after = device.stats;
        return {
          submissions: after.submissions - before.submissions,
          pops: after.errorScopePops - before.errorScopePops,
        };
      }
      // The first turn may create bind groups and staging buffers: their operations' spans add scopes.
      const first = await turn();
      expect(first.submissions).toBe(1);
      expect(first.pops % 3).toBe(0);
      expect(Array.from(out)).toEqual([9, 9, 1, 2]);
      out.fill(0);
      // Warm: the staging buffer is proven, the bind groups are cached: the submit's three pops only.
      expect(await turn()).toEqual({ submissions: 1, pops: 3 });
      expect(Array.from(out)).toEqual([9, 9, 1, 2]);
    });

    it('a queueUpdate into a proven buffer adds no scopes: one submit, three pops; into a buffer created in the same turn, its own three', async () => {
      async function update(target: Buffer): Promise<number> {
        const before = device.stats.errorScopePops;
        const s = new TimelineSemaphore();
        device.queueUpdate(Q0, Fence.empty, at(s, 1), new Uint32Array([5, 6, 7, 8]), { buffer: target });
        await s.wait(1, TIMEOUT);
        return device.stats.errorScopePops - before;
      }
      // Created in this turn: its creation scopes have not come back, so the update's writeBuffer gets
      // scopes of its own (the target could be an invalid buffer).
      const fresh = buffer(16);
      expect(await update(fresh)).toBe(6);
      expect(await read(fresh)).toEqual([5, 6, 7, 8]);
      // Proven now (its creation scopes came back clean): the submit's three pops only.
      expect(await update(fresh)).toBe(3);
      expect(await read(fresh)).toEqual([5, 6, 7, 8]);
    });

    it('flush() submits the open batch at once', () => {
      const b = buffer(16);
      const before = device.stats.submissions;
      const s = new TimelineSemaphore();
      device.queueFill(Q0, Fence.empty, at(s, 1), { buffer: b }, 5, 4);
      expect(device.stats.submissions).toBe(before);
      device.flush(Q0);
      expect(device.stats.submissions).toBe(before + 1);
      return s.wait(1, TIMEOUT);
    });

    it('an update issued after a copy from its target in the same turn does not overtake the copy', async () => {
      const source = buffer(16);
      const target = buffer(16);
      const s = new TimelineSemaphore();
      device.queueWrite(Q0, Fence.empty, at(s, 1), new Uint32Array([1, 2, 3, 4]), { buffer: source });
      device.queueCopy(Q0, at(s, 1), at(s, 2), { buffer: source }, { buffer: target });
      // GPU-ordered after the copy: its queue.writeBuffer must not run before the copy's submit.
      device.queueUpdate(Q0, at(s, 2), at(s, 3), new Uint32Array([7, 7, 7, 7]), { buffer: source });
      await s.wait(3, TIMEOUT);
      expect(await read(target)).toEqual([1, 2, 3, 4]);
      expect(await read(source)).toEqual([7, 7, 7, 7]);
    });

    it('a GPU error fails every operation of its batch (the command buffer is dropped whole), not later ones', async () => {
      const fixed = await device.createExecutable({
        format: 'wgsl',
        label: 'fixed',
        code: FIXED_SIZE_WGSL,
        exports: [{ name: 'main', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] }],
      });
      const small = buffer(16);
      const other = buffer(16);
      const cb = device.createCommandBuffer();
      cb.begin();
      cb.dispatch(fixed, 0, { workgroupCount: [1, 1, 1], bindings: [{ buffer: small }] });
      cb.end();
      const bad = new TimelineSemaphore();
      const innocent = new TimelineSemaphore();
      device.queueExecute(Q0, Fence.empty, at(bad, 1), [cb]);
      device.queueFill(Q1, Fence.empty, at(innocent, 1), { buffer: other }, 3, 4);
      const [badFailure, innocentFailure] = await Promise.all([
        failureOf(at(bad, 1)),
        failureOf(at(innocent, 1)),
      ]);
      expect(badFailure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(badFailure?.message).toMatch(/queueExecute: failed WebGPU validation/);
      expect(badFailure?.message).toMatch(/submitted with 1 other operation in one command buffer/);
      expect(innocentFailure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(innocentFailure?.message).toMatch(/queueFill: failed WebGPU validation/);
      expect((innocentFailure?.cause as { message?: unknown } | undefined)?.message).toEqual(
        expect.any(String),
      );
      // The fill did not run; the next turn's batch is unaffected.
      expect(await read(other)).toEqual([0, 0, 0, 0]);
      const s = new TimelineSemaphore();
      device.queueFill(Q1, Fence.empty, at(s, 1), { buffer: other }, 3, 4);
      await s.wait(1, TIMEOUT);
      expect(await read(other)).toEqual([3, 3, 3, 3]);
    });

    it('an operation whose encoding fails before encoding anything fails alone; its batch runs', async () => {
      const good = buffer(16);
      const target = buffer(16);
      const gate = new TimelineSemaphore();
      const s = new TimelineSemaphore();
      const failed = new TimelineSemaphore();
      const source = new Uint32Array([1, 2, 3, 4]);
      // Both wait on the gate: they run in the same turn (one batch) when it is signalled.
      device.queueFill(Q0, at(gate, 1), at(s, 1), { buffer: good }, 1, 4);
      device.queueWrite(Q0, at(gate, 1), at(failed, 1), source, { buffer: target });
      device.queueFill(Q0, at(gate, 1), at(s, 2), { buffer: good, offset: 8 }, 4, 4);
      // The write's source is detached before it runs: it fails while encoding, having encoded nothing.
      structuredClone(source.buffer, { transfer: [source.buffer] });
      const before = device.stats.submissions;
      gate.signal(1);
      device.flush(Q0);
      expect(device.stats.submissions).toBe(before + 1);
      const failure = await failureOf(at(failed, 1));
      expect(failure?.code).toBe(ErrorCode.FAILED_PRECONDITION);
      expect(failure?.message).toMatch(/detached/);
      await s.wait(2, TIMEOUT);
      expect(await read(good)).toEqual([1, 1, 4, 4]);
      expect(await read(target)).toEqual([0, 0, 0, 0]);
    });

    it('indirect counts are validated per execute within one batch: only the one over the limit fails', async () => {
      const ids = await device.createExecutable(
        wgslKernel('workgroupIds', [
          { name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] },
        ]),
      );
      const limit = device.gpuDevice.limits.maxComputeWorkgroupsPerDimension;
      const params = buffer(32);
      const w = new TimelineSemaphore();
      device.queueWrite(Q0, Fence.empty, at(w, 1), new Uint32Array([1, 1, 1, 0, 1, 1, limit + 1, 0]), {
        buffer: params,
      });
      await w.wait(1, TIMEOUT);
      const outs = [buffer(64), buffer(64)];
      const cbs = [0, 16].map((offset, i) => {
        const cb = device.createCommandBuffer();
        cb.begin();
        cb.dispatch(ids, 0, {
          indirect: { buffer: params, offset },
          bindings: [{ buffer: outs[i] as Buffer }],
        });
        cb.end();
        return cb;
      });
      const fine = new TimelineSemaphore();
      const over = new TimelineSemaphore();
      const before = device.stats.submissions;
      device.queueExecute(Q0, Fence.empty, at(fine, 1), [cbs[0]!]);
      device.queueExecute(Q0, Fence.empty, at(over, 1), [cbs[1]!]);
      device.flush(Q0);
      expect(device.stats.submissions).toBe(before + 1);
      expect(await failureOf(at(fine, 1))).toBeUndefined();
      expect((await failureOf(at(over, 1)))?.code).toBe(ErrorCode.OUT_OF_RANGE);
      expect((await read(outs[0]!)).slice(0, 4)).toEqual([0, 0, 0, 0xc0ffee]);
      expect(await read(outs[1]!)).toEqual(new Array(16).fill(0));
    });

    it('a buffer destroyed in the turn that used it stays valid for that work', async () => {
      const source = buffer(16);
      const target = buffer(16);
      const s = new TimelineSemaphore();
      device.queueWrite(Q0, Fence.empty, at(s, 1), new Uint32Array([5, 6, 7, 8]), { buffer: source });
      device.queueCopy(Q0, at(s, 1), at(s, 2), { buffer: source }, { buffer: target });
      source.destroy();
      await s.wait(2, TIMEOUT);
      expect(await read(target)).toEqual([5, 6, 7, 8]);
    });

    it('destroy() with a batch still open fails its operations with UNAVAILABLE and leaves nothing behind', async () => {
      const own = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      const b = own.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
      const s = new TimelineSemaphore();
      const out = new Uint32Array(4);
      own.queueFill(Q0, Fence.empty, at(s, 1), { buffer: b }, 1, 4);
      own.queueRead(Q0, at(s, 1), at(s, 2), { buffer: b }, out);
      expect(own.stats.pending).toBe(2);
      const destroyed = own.destroy();
      const failure = await failureOf(at(s, 2));
      expect(failure?.code).toBe(ErrorCode.UNAVAILABLE);
      await destroyed;
      expect(own.stats.gpuBuffers).toBe(0);
      expect(own.stats.submissions).toBe(0);
      expect(Array.from(out)).toEqual([0, 0, 0, 0]);
    });

    describe('a GPUDevice shared with the caller', () => {
      /** WebGPU buffer usages (Node has no GPUBufferUsage global): MAP_READ with STORAGE is invalid. */
      const INVALID_USAGE = 0x0001 | 0x0080;

      async function errorsSettled(errors: string[], count: number): Promise<void> {
        for (let i = 0; i < 200 && errors.length < count; i++) await new Promise((r) => setTimeout(r, 5));
      }

      it("a caller's own WebGPU error in the same turn as Keel's work reaches the caller, and Keel's work runs", async () => {
        const caught: string[] = [];
        const own = await createWebGpuDevice({ onUncapturedError: (e) => caught.push(e.message) });
        try {
          const target = own.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
          const written = own.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
          const out = new Uint32Array(4);
          const s = new TimelineSemaphore();
          // Keel's work opens a batch; the caller's mistake follows in the same turn, then more Keel work.
          own.queueFill(Q0, Fence.empty, at(s, 1), { buffer: target }, 7, 4);
          own.gpuDevice.createBuffer({ size: 16, usage: INVALID_USAGE });
          own.queueWrite(Q0, at(s, 1), at(s, 2), new Uint32Array([1, 2, 3, 4]), { buffer: written });
          own.gpuDevice.createBuffer({ size: 16, usage: INVALID_USAGE });
          own.queueRead(Q0, at(s, 2), at(s, 3), { buffer: target }, out);
          await s.wait(3, TIMEOUT);
          expect(Array.from(out)).toEqual([7, 7, 7, 7]);
          await errorsSettled(caught, 2);
          expect(caught).toHaveLength(2);
        } finally {
          await own.destroy();
        }
      });

      it("a caller's error scope around Keel's work catches the caller's error, and Keel's scopes stay balanced", async () => {
        const caught: string[] = [];
        const own = await createWebGpuDevice({ onUncapturedError: (e) => caught.push(e.message) });
        try {
          const gpu = own.gpuDevice;
          const target = own.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
          const s = new TimelineSemaphore();
          gpu.pushErrorScope('validation');
          own.queueFill(Q0, Fence.empty, at(s, 1), { buffer: target }, 5, 4);
          own.queueWrite(Q0, at(s, 1), at(s, 2), new Uint32Array([1, 2, 3, 4]), { buffer: target });
          gpu.createBuffer({ size: 16, usage: INVALID_USAGE });
          const mine = gpu.popErrorScope();
          // With nothing of the caller's on the stack any more, a pop has no scope to pop.
          gpu.pushErrorScope('out-of-memory');
          const empty = gpu.popErrorScope();
          await s.wait(2, TIMEOUT);
          expect((await mine)?.constructor.name).toBe('GPUValidationError');
          expect(await empty).toBeNull();
          expect(await read(target, own)).toEqual([1, 2, 3, 4]);
          // A GPU error of Keel's own work in a later turn is still Keel's (its signal fails).
          const fixed = await own.createExecutable({
            format: 'wgsl',
            label: 'fixed',
            code: FIXED_SIZE_WGSL,
            exports: [{ name: 'main', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] }],
          });
          const cb = own.createCommandBuffer();
          cb.begin();
          cb.dispatch(fixed, 0, { workgroupCount: [1, 1, 1], bindings: [{ buffer: target }] });
          cb.end();
          const bad = new TimelineSemaphore();
          gpu.pushErrorScope('validation');
          own.queueExecute(Q0, Fence.empty, at(bad, 1), [cb]);
          const callerScope = gpu.popErrorScope();
          expect((await failureOf(at(bad, 1)))?.code).toBe(ErrorCode.INVALID_ARGUMENT);
          expect(await callerScope).toBeNull();
          await errorsSettled(caught, 1);
          expect(caught).toEqual([]);
        } finally {
          await own.destroy();
        }
      });
    });

    it('completes every operation once when a completion callback submits work that grows the in-flight ring', async () => {
      // A fresh device: its in-flight ring holds 64 operations before it grows.
      const own = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      try {
        const b = own.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
        const s = new TimelineSemaphore();
        const more = new TimelineSemaphore();
        // Runs inside the completion of the first fill: two fills, then an update, whose flush submits
        // them (two pushes onto a ring holding 63 operations: the second grows it).
        s.onReached(1, () => {
          own.queueFill(Q0, Fence.empty, at(more, 1), { buffer: b }, 1, 4);
          own.queueFill(Q0, Fence.empty, at(more, 2), { buffer: b }, 2, 4);
          own.queueUpdate(Q0, Fence.empty, at(more, 3), new Uint32Array([3, 3, 3, 3]), { buffer: b });
        });
        for (let i = 1; i <= 64; i++) own.queueFill(Q0, Fence.empty, at(s, i), { buffer: b }, i, 4);
        await s.wait(64, TIMEOUT);
        await more.wait(3, TIMEOUT);
        expect(s.failure).toBeUndefined();
        expect(more.failure).toBeUndefined();
        expect(own.stats.pending).toBe(0);
      } finally {
        await own.destroy();
      }
    });
  },
);
