/**
 * Reads whose staging buffer's map fails (registered by map-loss.test.ts on Dawn in Node and by
 * map-loss.browser.test.ts in Chromium). A map that fails because the GPUDevice is lost or destroyed
 * fails its read with that loss: the very KeelError `lost` resolves with, which every other operation
 * fails with, also where the map rejects before `GPUDevice.lost` settles. Chromium's `destroy()`
 * unmaps every buffer at once (pending maps reject with AbortError) and settles `lost` a round trip
 * later; Dawn in Node settles `lost` first, so there order 'mimic-browser' does what Chromium does
 * (unmaps the pending staging buffers, then destroys). A map that fails on a live device fails its read
 * promptly with the map's error, and the device goes on working.
 */
import { ErrorCode, Fence, type KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createWebGpuDevice } from '../src/index';

const Q0 = QueueAffinity.of(0);
const TIMEOUT = { timeoutMs: 10_000 };
/** GPUBufferUsage.MAP_READ (the global is not installed before a device is created in Node). */
const MAP_READ = 0x1;

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

/** Records the GPUBuffers `gpu` creates from now on with MAP_READ usage (Keel's readback staging). */
function recordMappable(gpu: GPUDevice): GPUBuffer[] {
  const mappable: GPUBuffer[] = [];
  const create = gpu.createBuffer.bind(gpu);
  gpu.createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = create(descriptor);
    if ((descriptor.usage & MAP_READ) !== 0) mappable.push(buffer);
    return buffer;
  };
  return mappable;
}

/** Unmaps the buffers of `mappable` whose map is pending: each map rejects with AbortError at once. */
function abortMaps(mappable: readonly GPUBuffer[]): number {
  let aborted = 0;
  for (const buffer of mappable) {
    if (buffer.mapState !== 'pending') continue;
    buffer.unmap();
    aborted++;
  }
  return aborted;
}

/**
 * How `GPUDevice.destroy()` ends the maps: 'dawn': `lost` settles first (Dawn in Node); 'browser':
 * the maps reject first (Chromium); 'mimic-browser': as 'browser', by unmapping them first on Dawn.
 */
export type DestroyOrder = 'dawn' | 'browser' | 'mimic-browser';

/** Registers the tests under `describe(title)`. */
export function defineMapLossTests(title: string, order: DestroyOrder): void {
  describe(title, () => {
    it('reads whose maps a GPUDevice.destroy() fails fail with the loss, as every other operation', async () => {
      const d = await createWebGpuDevice();
      const gpu = d.gpuDevice;
      const mappable = recordMappable(gpu);
      const n = 1 << 18;
      const b = d.createBuffer({ byteLength: n * 4, usage: BufferUsage.DEFAULT });
      const filled = new TimelineSemaphore();
      d.queueFill(Q0, Fence.empty, at(filled, 1), { buffer: b }, 3, 4);
      const reads: Semaphore[] = [];
      for (let i = 0; i < 4; i++) {
        const s = new TimelineSemaphore();
        reads.push(s);
        d.queueRead(Q0, at(filled, 1), at(s, 1), { buffer: b }, new Uint32Array(n));
      }
      // Submitted now: every read's staging buffer is being mapped when the GPUDevice is destroyed.
      d.flush(Q0);
      expect(mappable.filter((m) => m.mapState === 'pending').length).toBe(reads.length);
      // A later operation, deferred on a semaphore nobody signals: failed by the loss itself.
      const gate = new TimelineSemaphore();
      const deferred = new TimelineSemaphore();
      d.queueFill(Q0, at(gate, 1), at(deferred, 1), { buffer: b }, 1, 4);
      if (order === 'mimic-browser') expect(abortMaps(mappable)).toBe(reads.length);
      gpu.destroy();
      const reason = await d.lost;
      expect(reason.code).toBe(ErrorCode.UNAVAILABLE);
      expect(reason.message).toMatch(/the GPU device was lost/);
      expect(await failureOf(at(deferred, 1))).toBe(reason);
      let failed = 0;
      for (const s of reads) {
        const failure = await failureOf(at(s, 1));
        // Signalled when the copies finished first (Dawn can), else failed by the loss, never otherwise.
        if (failure === undefined) continue;
        expect(failure).toBe(reason);
        failed++;
      }
      // Where the maps reject first, every read fails (the case the loss check is for).
      if (order !== 'dawn') expect(failed).toBe(reads.length);
      await d.destroy();
      expect(d.stats.pending).toBe(0);
    });

    it('a map that fails on a live device fails its read promptly with its error; the device goes on', async () => {
      const d = await createWebGpuDevice();
      const mappable = recordMappable(d.gpuDevice);
      const b = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
      const s = new TimelineSemaphore();
      d.queueFill(Q0, Fence.empty, at(s, 1), { buffer: b }, 7, 4);
      d.queueRead(Q0, at(s, 1), at(s, 2), { buffer: b }, new Uint32Array(16));
      d.flush(Q0);
      expect(abortMaps(mappable)).toBe(1);
      const failure = await failureOf(at(s, 2));
      expect(failure?.code).toBe(ErrorCode.UNAVAILABLE);
      expect(failure?.message).toMatch(/queueRead: mapping the staging buffer failed \(.+\)$/);
      expect((failure?.cause as { name?: unknown } | undefined)?.name).toBe('AbortError');
      const out = new Uint32Array(16);
      const after = new TimelineSemaphore();
      d.queueRead(Q0, Fence.empty, at(after, 1), { buffer: b }, out);
      await after.wait(1, TIMEOUT);
      expect(out.every((v) => v === 7)).toBe(true);
      expect(d.stats.pending).toBe(0);
      await d.destroy();
    });
  });
}
