/**
 * queueWrite's staging (write-staging.ts): each write of a submission batch puts its bytes with
 * `queue.writeBuffer` into a region of one staging buffer and copies them in command order. Checked
 * against byte models: writes interleaved with copies, fills and dispatches in one batch; unaligned
 * offsets and lengths; writes past the staging cap (split, the batch submitted in between); batches
 * back to back reusing the regions; sources over a SharedArrayBuffer; no `mapAsync` on a warm write;
 * loss and teardown with writes pending. Registered by device.test.ts (Dawn in Node) and
 * device.browser.test.ts (Chromium).
 */
import { ErrorCode, Fence, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Executable, QueueAffinity } from '@keel/hal';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import { wgslKernel } from './cts-kernels';
import { Chain, readAndWait, writeAndWait } from './queue-helpers';

const Q0 = QueueAffinity.of(0);
const TIMEOUT = { timeoutMs: 30_000 };
/** The staging cap (write-staging.ts WRITE_CHUNK). */
const CAP = 16 * 1024 * 1024;

/** Byte `i` of a write's source in these tests. */
function pattern(length: number, seed: number): Uint8Array {
  return new Uint8Array(length).map((_, i) => (i * 31 + seed * 7 + 1) & 0xff);
}

/** Index of the first byte where `a` and `b` differ, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** One operation of a batch: a write, a copy between the two buffers, a fill or a negate dispatch. */
type Step =
  | { kind: 'write'; to: 0 | 1; offset: number; length: number }
  | { kind: 'copy'; from: 0 | 1; sourceOffset: number; targetOffset: number; length: number }
  | { kind: 'fill'; to: 0 | 1; offset: number; length: number; value: number }
  | { kind: 'negate'; words: number };

const SIZE = 1024;

function stepArbitrary(): fc.Arbitrary<Step> {
  const offset = fc.nat({ max: SIZE - 1 });
  const to = fc.constantFrom<0 | 1>(0, 1);
  return fc.oneof(
    fc.record({ kind: fc.constant('write' as const), to, offset, length: fc.nat({ max: SIZE }) }),
    fc.record({ kind: fc.constant('write' as const), to, offset, length: fc.nat({ max: 9 }) }),
    fc.record({
      kind: fc.constant('copy' as const),
      from: to,
      sourceOffset: offset,
      targetOffset: offset,
      length: fc.nat({ max: SIZE }),
    }),
    fc.record({
      kind: fc.constant('fill' as const),
      to,
      offset,
      length: fc.nat({ max: 64 }),
      value: fc.nat({ max: 255 }),
    }),
    fc.record({ kind: fc.constant('negate' as const), words: fc.integer({ min: 1, max: SIZE / 4 }) }),
  );
}

/** Registers the tests under `describe(title)`. */
export function defineWriteTests(title: string): void {
  describe(title, () => {
    let device: WebGpuDevice;
    const gpuErrors: string[] = [];
    let negate: Executable;

    beforeAll(async () => {
      device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
      negate = await device.createExecutable(
        wgslKernel('negateDouble', [
          { name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
          { name: 'double', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
        ]),
      );
    });

    afterAll(async () => {
      await device?.destroy();
      // Every command Keel encoded was valid WebGPU.
      expect(gpuErrors).toEqual([]);
    });

    function buffer(byteLength: number): Buffer {
      return device.createBuffer({ byteLength, usage: BufferUsage.DEFAULT });
    }

    function write(target: Buffer, bytes: ArrayBufferView, offset = 0): Promise<void> {
      return writeAndWait(device, target, bytes, offset, TIMEOUT.timeoutMs);
    }

    function read(source: Buffer, offset = 0, length = source.byteLength - offset): Promise<Uint8Array> {
      return readAndWait(device, source, offset, length, TIMEOUT.timeoutMs);
    }

    it('lands writes interleaved with copies, fills and dispatches of one batch in command order (property)', async () => {
      const buffers = [buffer(SIZE), buffer(SIZE)] as const;
      await fc.assert(
        fc.asyncProperty(fc.array(stepArbitrary(), { minLength: 1, maxLength: 12 }), async (steps) => {
          const model = [new Uint8Array(SIZE), new Uint8Array(SIZE)] as const;
          const chain = new Chain();
          const submissions = device.stats.submissions;
          // Everything below is issued in one turn, each operation on its predecessor's GPU-ordered
          // signal: one batch, one queue.submit.
          device.queueFill(Q0, Fence.empty, chain.next(), { buffer: buffers[0] }, 0, 4);
          device.queueFill(Q0, chain.now(), chain.next(), { buffer: buffers[1] }, 0, 4);
          steps.forEach((step, k) => {
            if (step.kind === 'write') {
              const length = Math.min(step.length, SIZE - step.offset);
              const bytes = pattern(length, k);
              device.queueWrite(Q0, chain.now(), chain.next(), bytes, {
                buffer: buffers[step.to],
                offset: step.offset,
              });
              model[step.to].set(bytes, step.offset);
            } else if (step.kind === 'copy') {
              const from = step.from;
              const to = (1 - from) as 0 | 1;
              const length = Math.min(step.length, SIZE - step.sourceOffset, SIZE - step.targetOffset);
              device.queueCopy(
                Q0,
                chain.now(),
                chain.next(),
                { buffer: buffers[from], offset: step.sourceOffset, length },
                { buffer: buffers[to], offset: step.targetOffset, length },
              );
              model[to].set(
                model[from].subarray(step.sourceOffset, step.sourceOffset + length),
                step.targetOffset,
              );
            } else if (step.kind === 'fill') {
              const length = Math.min(step.length, SIZE - step.offset);
              device.queueFill(
                Q0,
                chain.now(),
                chain.next(),
                { buffer: buffers[step.to], offset: step.offset, length },
                step.value,
                1,
              );
              model[step.to].fill(step.value, step.offset, step.offset + length);
            } else {
              // buffers[1][i] = -buffers[0][i] for the first `words` i32 words.
              const cb = device.createCommandBuffer({ mode: 'one-shot', bindingCapacity: 0 });
              cb.begin();
              cb.dispatch(negate, 'negate', {
                workgroupCount: [Math.ceil(step.words / 64), 1, 1],
                constants: [step.words],
                bindings: [
                  { buffer: buffers[0], length: step.words * 4 },
                  { buffer: buffers[1], length: step.words * 4 },
                ],
              });
              cb.end();
              device.queueExecute(Q0, chain.now(), chain.next(), [cb]);
              const a = new Int32Array(model[0].buffer, 0, step.words);
              const b = new Int32Array(model[1].buffer, 0, step.words);
              for (let i = 0; i < step.words; i++) b[i] = -(a[i] as number) | 0;
            }
          });
          // Both reads wait on the last operation (a read's own signal is not GPU-ordered: a read
          // behind a read would run in a batch of its own).
          const out = [new Uint8Array(SIZE), new Uint8Array(SIZE)] as const;
          const last = chain.now();
          const reads = new Chain();
          device.queueRead(Q0, last, chain.next(), { buffer: buffers[0] }, out[0]);
          device.queueRead(Q0, last, reads.next(), { buffer: buffers[1] }, out[1]);
          await Fence.join(chain.now(), reads.now()).wait(TIMEOUT);
          expect(device.stats.submissions - submissions).toBe(1);
          expect(firstDifference(out[0], model[0])).toBe(-1);
          expect(firstDifference(out[1], model[1])).toBe(-1);
        }),
        { numRuns: 40 },
      );
    });

    it('gives every write of a batch its own region: a later write to the same target does not overtake an earlier copy', async () => {
      // write A → T, copy T → X, write B → T, copy T → Y, ... in one batch: with shared regions the
      // later writeBuffer (which runs ahead of the batch's commands) would replace A before its copy.
      const target = buffer(64);
      const copies = buffer(64 * 16);
      const chain = new Chain();
      const submissions = device.stats.submissions;
      const expected = new Uint8Array(64 * 16);
      for (let k = 0; k < 16; k++) {
        // Aligned and unaligned lengths and offsets (the copy kernel's detour included).
        const offset = k % 4;
        const bytes = pattern(64 - offset - (k % 3), k);
        device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target, offset });
        device.queueCopy(
          Q0,
          chain.now(),
          chain.next(),
          { buffer: target, offset, length: bytes.length },
          { buffer: copies, offset: 64 * k + offset, length: bytes.length },
        );
        expected.set(bytes, 64 * k + offset);
      }
      const out = new Uint8Array(64 * 16);
      device.queueRead(Q0, chain.now(), chain.next(), { buffer: copies }, out);
      await chain.now().wait(TIMEOUT);
      expect(device.stats.submissions - submissions).toBe(1);
      expect(firstDifference(out, expected)).toBe(-1);
    });

    it('reuses the regions in the next batch only after the batch that copies from them was submitted', async () => {
      // Batch k: write A_k → T (region 0 of the staging), copy T → X_k; flush. Batch k + 1 writes into
      // region 0 again: X_k must still hold A_k. All of it is issued in one turn, nothing awaited.
      const batches = 24;
      const length = 4096 + 3;
      const target = buffer(length);
      const copies = buffer(length * batches);
      const chain = new Chain();
      const submissions = device.stats.submissions;
      const expected = new Uint8Array(length * batches);
      for (let k = 0; k < batches; k++) {
        const bytes = pattern(length - (k % 4), k);
        device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target });
        device.queueCopy(
          Q0,
          chain.now(),
          chain.next(),
          { buffer: target, length: bytes.length },
          { buffer: copies, offset: length * k, length: bytes.length },
        );
        expected.set(bytes, length * k);
        device.flush(Q0);
      }
      const out = new Uint8Array(length * batches);
      device.queueRead(Q0, chain.now(), chain.next(), { buffer: copies }, out);
      await chain.now().wait(TIMEOUT);
      expect(device.stats.submissions - submissions).toBe(batches + 1);
      expect(firstDifference(out, expected)).toBe(-1);
    });

    it('round-trips writes with unaligned offsets and lengths issued back to back (one batch)', async () => {
      const size = 8192;
      const target = buffer(size);
      await write(target, new Uint8Array(size));
      const model = new Uint8Array(size);
      const chain = new Chain();
      let at = 0;
      let k = 0;
      for (const length of [1, 2, 3, 4, 5, 6, 7, 9, 255, 1021, 4093]) {
        for (const phase of [0, 1, 2, 3]) {
          const offset = (at & ~3) + phase;
          const bytes = pattern(length, k++);
          device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target, offset });
          model.set(bytes, offset);
          at = (at + 37 * length + 11) % (size - 4100);
        }
      }
      await chain.now().wait(TIMEOUT);
      expect(firstDifference(await read(target), model)).toBe(-1);
    });

    it('round-trips writes of many sizes at aligned and unaligned offsets, issued as one chain (property)', async () => {
      const size = 2048;
      const target = buffer(size);
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(
              fc.nat({ max: 9 }),
              fc.oneof(fc.nat({ max: 9 }), fc.constantFrom(255, 256, 257, 1021, 1024, 1031)),
            ),
            { minLength: 1, maxLength: 8 },
          ),
          async (writes) => {
            const model = new Uint8Array(size);
            const chain = new Chain();
            device.queueFill(Q0, Fence.empty, chain.next(), { buffer: target }, 0, 4);
            writes.forEach(([offset, length], k) => {
              const bytes = pattern(length, k);
              // Issued back to back: each runs on its GPU-ordered wait, with its own staging buffer.
              device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target, offset, length });
              model.set(bytes, offset);
            });
            const out = new Uint8Array(size);
            device.queueRead(Q0, chain.now(), chain.next(), { buffer: target }, out);
            await chain.now().wait(TIMEOUT);
            expect(firstDifference(out, model)).toBe(-1);
          },
        ),
        { numRuns: 30 },
      );
    });

    it('takes sources over a SharedArrayBuffer and any typed array view', async () => {
      const target = buffer(64);
      await write(target, new Uint8Array(64));
      const words = new Uint32Array([0x04030201, 0x08070605, 0x0c0b0a09]);
      await write(target, words, 4);
      const expected = new Uint8Array(64);
      expected.set(new Uint8Array(words.buffer), 4);
      if (typeof SharedArrayBuffer !== 'undefined') {
        const shared = new Uint8Array(new SharedArrayBuffer(32), 5, 21);
        shared.set(pattern(21, 3));
        await write(target, shared, 23);
        expected.set(pattern(21, 3), 23);
      }
      expect(Array.from(await read(target))).toEqual(Array.from(expected));
    });

    it('queueUpdate takes a source over a SharedArrayBuffer, aligned or not', async () => {
      if (typeof SharedArrayBuffer === 'undefined') return;
      const target = buffer(64);
      await write(target, new Uint8Array(64));
      const shared = new Uint8Array(new SharedArrayBuffer(48));
      shared.set(pattern(48, 5));
      const c = new Chain();
      device.queueUpdate(Q0, Fence.empty, c.next(), shared.subarray(8, 24), { buffer: target, offset: 4 });
      device.queueUpdate(Q0, c.now(), c.next(), shared.subarray(1, 8), { buffer: target, offset: 33 });
      await c.now().wait(TIMEOUT);
      const expected = new Uint8Array(64);
      expected.set(shared.subarray(8, 24), 4);
      expected.set(shared.subarray(1, 8), 33);
      expect(Array.from(await read(target))).toEqual(Array.from(expected));
    });

    it('queueUpdates of falling lengths at unaligned offsets touch only their own bytes', async () => {
      const target = buffer(256);
      await write(target, new Uint8Array(256));
      const expected = new Uint8Array(256);
      const c = new Chain();
      for (const [offset, length, seed] of [
        [1, 200, 1],
        [130, 9, 2],
        [7, 3, 3],
        [250, 5, 4],
      ] as const) {
        const bytes = pattern(length, seed);
        device.queueUpdate(Q0, c.now(), c.next(), bytes, { buffer: target, offset });
        expected.set(bytes, offset);
      }
      await c.now().wait(TIMEOUT);
      expect(firstDifference(await read(target), expected)).toBe(-1);
    });

    it('splits a write larger than the staging cap, submitting the batch in between, and lands it whole', async () => {
      const size = 2 * CAP + 64;
      const target = buffer(size);
      const small = buffer(1024);
      const expected = new Uint8Array(size);
      for (const [offset, length] of [
        [0, CAP + 4],
        [3, 2 * CAP + 61],
        [6, CAP - 3],
      ] as const) {
        const chain = new Chain();
        // A small write ahead of it in the same batch takes a region first.
        const head = pattern(1000, offset);
        device.queueWrite(Q0, Fence.empty, chain.next(), head, { buffer: small, offset });
        const bytes = pattern(length, offset + 1);
        const submissions = device.stats.submissions;
        device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target, offset });
        // Each chunk of at most CAP bytes that does not fit behind the regions before it needs a submit.
        expect(device.stats.submissions - submissions).toBeGreaterThanOrEqual(Math.ceil(length / CAP) - 1);
        await chain.now().wait(TIMEOUT);
        expected.set(bytes, offset);
        expect(firstDifference(await read(target), expected)).toBe(-1);
        expect(firstDifference(await read(small, offset, 1000), head)).toBe(-1);
      }
      // The staging buffer never grows past the cap.
      expect(device.stats.upload.keptBytes).toBe(CAP);
    });

    it('submits a batch whose writes together pass the staging cap, and regions restart at 0', async () => {
      const part = 5 * 1024 * 1024 + 1;
      const count = 5;
      const target = buffer(part * count);
      const chain = new Chain();
      const submissions = device.stats.submissions;
      const expected = new Uint8Array(part * count);
      for (let k = 0; k < count; k++) {
        const bytes = pattern(part, k + 11);
        device.queueWrite(Q0, chain.now(), chain.next(), bytes, { buffer: target, offset: part * k });
        expected.set(bytes, part * k);
      }
      // 5 × 5 MiB in 16 MiB of regions: at least one submit happened before the end of the turn.
      expect(device.stats.submissions - submissions).toBeGreaterThanOrEqual(1);
      await chain.now().wait(TIMEOUT);
      expect(firstDifference(await read(target), expected)).toBe(-1);
    });

    it('stages a burst of small writes in one buffer, one region each, with no mapAsync', async () => {
      const target = buffer(1024);
      const probe = device.gpuDevice.createBuffer({ size: 4, usage: 8 /* COPY_DST */ });
      const proto = Object.getPrototypeOf(probe) as { mapAsync: GPUBuffer['mapAsync'] };
      probe.destroy();
      const mapAsync = proto.mapAsync;
      let maps = 0;
      proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer['mapAsync']>) {
        maps++;
        return mapAsync.apply(this, args);
      };
      try {
        const burst = async (): Promise<void> => {
          const chain = new Chain();
          for (let k = 0; k < 20; k++)
            device.queueWrite(Q0, chain.now(), chain.next(), pattern(512, k), { buffer: target, offset: k });
          await chain.now().wait(TIMEOUT);
        };
        await burst(); // warm
        const before = device.stats.upload;
        const submissions = device.stats.submissions;
        maps = 0;
        await burst();
        for (let k = 0; k < 10; k++) await write(target, pattern(100 + k, k), k);
        expect(maps).toBe(0);
        const after = device.stats.upload;
        expect(after.created - before.created).toBe(0);
        expect(after.reused - before.reused).toBe(30);
        expect(after.remapping).toBe(0);
        expect(device.stats.submissions - submissions).toBe(11);
      } finally {
        proto.mapAsync = mapAsync;
      }
      expect(Array.from(await read(target, 9, 109))).toEqual(Array.from(pattern(109, 9)));
    });

    it('reads the source only when the write runs (behind an unsignalled wait)', async () => {
      const target = buffer(64);
      await write(target, new Uint8Array(64));
      const gate = new TimelineSemaphore();
      const chain = new Chain();
      const source = new Uint8Array(37).fill(1);
      const before = device.stats.upload;
      device.queueWrite(Q0, Fence.of({ semaphore: gate, value: 1 }), chain.next(), source, {
        buffer: target,
        offset: 3,
      });
      const out = new Uint8Array(64);
      device.queueRead(Q0, chain.now(), chain.next(), { buffer: target }, out);
      await new Promise((r) => setTimeout(r, 20));
      expect(chain.semaphore.value).toBe(0);
      const waiting = device.stats.upload;
      expect(waiting.created + waiting.reused).toBe(before.created + before.reused); // nothing staged yet
      source.fill(2); // the write has not run: its bytes are read when it does
      gate.signal(1);
      await chain.now().wait(TIMEOUT);
      const expected = new Uint8Array(64);
      expected.fill(2, 3, 40);
      expect(Array.from(out)).toEqual(Array.from(expected));
    });

    it('fails pending and batched writes with UNAVAILABLE when the GPUDevice is lost', async () => {
      const lossy = await createWebGpuDevice();
      const b = lossy.createBuffer({ byteLength: 4096, usage: BufferUsage.DEFAULT });
      const gate = new TimelineSemaphore();
      const pending = new Chain();
      lossy.queueWrite(Q0, Fence.of({ semaphore: gate, value: 1 }), pending.next(), new Uint8Array(64), {
        buffer: b,
      });
      // Encoded into the open batch (its bytes already in the staging buffer), not submitted yet.
      const batched = new Chain();
      lossy.queueWrite(Q0, Fence.empty, batched.next(), pattern(4093, 1), { buffer: b, offset: 1 });
      lossy.gpuDevice.destroy();
      expect((await lossy.lost).code).toBe(ErrorCode.UNAVAILABLE);
      await expect(pending.now().wait(TIMEOUT)).rejects.toThrow();
      expect(pending.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      await expect(batched.now().wait(TIMEOUT)).rejects.toThrow();
      expect(batched.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      await lossy.destroy();
      expect(lossy.stats.gpuBuffers).toBe(0);
    });

    it('a staging buffer whose creation failed (out of memory) is replaced: later writes succeed', async () => {
      const d = await createWebGpuDevice();
      const gpu = d.gpuDevice;
      const create = gpu.createBuffer.bind(gpu);
      let failNext = true;
      // The first staging buffer comes back invalid, as an out-of-memory creation gives it (here through
      // a size past maxBufferSize: the same invalid object, a GPU error in the batch's scopes).
      gpu.createBuffer = (descriptor: GPUBufferDescriptor) => {
        if (failNext && descriptor.label === 'keel write staging') {
          failNext = false;
          return create({ ...descriptor, size: gpu.limits.maxBufferSize + 4 });
        }
        return create(descriptor);
      };
      try {
        const b = d.createBuffer({ byteLength: 256, usage: BufferUsage.DEFAULT });
        const first = new Chain();
        d.queueWrite(Q0, Fence.empty, first.next(), pattern(256, 1), { buffer: b });
        await expect(first.now().wait(TIMEOUT)).rejects.toThrow();
        expect(first.semaphore.failure?.code).toBe(ErrorCode.INVALID_ARGUMENT);
        const second = new Chain();
        const want = pattern(256, 2);
        d.queueWrite(Q0, Fence.empty, second.next(), want, { buffer: b });
        const got = new Uint8Array(256);
        d.queueRead(Q0, second.now(), second.next(), { buffer: b }, got);
        await second.now().wait(TIMEOUT);
        expect(firstDifference(got, want)).toBe(-1);
        expect(d.stats.upload.created).toBe(2);
      } finally {
        await d.destroy();
      }
    });

    it('destroy fails pending and in-flight writes with UNAVAILABLE and destroys the staging buffer', async () => {
      const doomed = await createWebGpuDevice();
      const b = doomed.createBuffer({ byteLength: 1024, usage: BufferUsage.DEFAULT });
      const warm = new Chain();
      doomed.queueWrite(Q0, Fence.empty, warm.next(), new Uint8Array(512), { buffer: b });
      await warm.now().wait(TIMEOUT);
      expect(doomed.stats.upload.free).toBe(1);
      const gate = new TimelineSemaphore();
      const pending = new Chain();
      doomed.queueWrite(Q0, Fence.of({ semaphore: gate, value: 1 }), pending.next(), new Uint8Array(64), {
        buffer: b,
      });
      const inflight = new Chain();
      doomed.queueWrite(Q0, Fence.empty, inflight.next(), new Uint8Array(1023), { buffer: b, offset: 1 });
      await doomed.destroy();
      await expect(pending.now().wait(TIMEOUT)).rejects.toThrow();
      await expect(inflight.now().wait(TIMEOUT)).rejects.toThrow();
      expect(pending.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      expect(inflight.semaphore.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      const stats = doomed.stats.upload;
      expect(stats.created).toBe(1);
      expect(stats.destroyed).toBe(1);
      expect(stats.free).toBe(0);
      expect(stats.keptBytes).toBe(0);
      expect(doomed.stats.gpuBuffers).toBe(0);
      gate.signal(1); // nothing runs any more
      await new Promise((r) => setTimeout(r, 10));
      expect(doomed.stats.upload.created).toBe(stats.created);
    });
  });
}
