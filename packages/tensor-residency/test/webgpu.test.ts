/**
 * The seed cases on WebGPU (Dawn; lavapipe here), and cross-device moves between the CPU device and
 * WebGPU. Skipped with a one-line reason when no WebGPU adapter is found, except under CI (then the
 * missing adapter fails the run).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { Fence } from '@keel/fence';
import type { Device } from '@keel/hal';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOnHost, ResidencyManager, Tensor } from '../src/index';
import { ANY, checksum, floats, readBuffer, signalOf } from './helpers';
import { trainWithKernel } from './kernel-training';
import { lossTurnCases } from './loss-turn-cases';
import { mirrorCases } from './mirror-cases';
import { BYTES, op, run } from './residency-model';
import { seedCases } from './seed-cases';
import { streamEvictionCases } from './stream-eviction-cases';

async function probe(): Promise<string | undefined> {
  try {
    const device = await createWebGpuDevice();
    await device.destroy();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const missing = await probe();
if (missing !== undefined && process.env.CI) {
  throw new Error(`WebGPU tests: no WebGPU adapter under CI: ${missing}`);
}
const reason = missing === undefined ? '' : ` (skipped: no WebGPU adapter: ${missing.split('\n')[0]})`;
if (missing !== undefined) console.warn(`tensor-residency: WebGPU tests${reason}`);

describe.skipIf(missing !== undefined)(`WebGPU${reason}`, () => {
  seedCases('webgpu');
  mirrorCases('webgpu');
  lossTurnCases('webgpu');
  streamEvictionCases('webgpu');

  describe('training with a real kernel on webgpu', () => {
    it('SGD on resident weights: one upload, one readback of the weights', async () => {
      const device = await createWebGpuDevice();
      try {
        await trainWithKernel(device);
      } finally {
        await device.destroy();
      }
    });
  });

  describe('CPU device + WebGPU', () => {
    let cpu: Device;
    let gpu: Device;
    beforeAll(async () => {
      cpu = createCpuDevice({ mode: 'sync', queues: 1 });
      gpu = await createWebGpuDevice();
    });
    afterAll(async () => {
      await cpu.destroy();
      await gpu.destroy();
    });

    it('produced on the CPU, consumed on WebGPU and back: each move once, through the host', async () => {
      const c = new ResidencyManager(cpu, { label: 'cpu' });
      const g = new ResidencyManager(gpu, { label: 'webgpu' });
      const data = floats(4096, 11);
      const t = Tensor.empty('f32', [4096], { label: 'activation' });
      const produced = c.acquire(t, 'write');
      const done = signalOf(cpu);
      cpu.queueWrite(ANY, produced.wait, done, data, produced.ref);
      produced.release(done);
      // Consumed (and rewritten) on WebGPU: the update doubles nothing, it fills the second half.
      const onGpu = g.acquire(t, 'readwrite');
      const seen = await readBuffer(gpu, onGpu.buffer, onGpu.wait, t.byteLength);
      expect(checksum(seen)).toBe(checksum(data));
      const filled = signalOf(gpu);
      gpu.queueFill(ANY, onGpu.wait, filled, { buffer: onGpu.buffer, offset: 8192, length: 8192 }, 0, 4);
      onGpu.release(filled);
      expect(c.counters.deviceToHostBytes).toBe(t.storageBytes);
      expect(g.counters.hostToDeviceBytes).toBe(t.storageBytes);
      expect(g.counters.crossDeviceMoves).toBe(1);
      // Back to the CPU: once more through the host.
      const back = c.acquire(t, 'read');
      const onCpu = await readBuffer(cpu, back.buffer, back.wait, t.byteLength);
      back.release(Fence.empty);
      const expected = data.slice();
      expected.fill(0, 2048);
      expect(checksum(onCpu)).toBe(checksum(expected));
      expect(g.counters.deviceToHostBytes).toBe(t.storageBytes);
      expect(c.counters.hostToDeviceBytes).toBe(t.storageBytes);
      expect(c.counters.crossDeviceMoves).toBe(1);
      const [host] = await ensureOnHost([t]);
      expect(checksum(host)).toBe(checksum(expected));
      expect(c.counters.transfers + g.counters.transfers).toBe(4);
    });

    it('property: random reads and writes on WebGPU (two managers) and the CPU match a host-only model', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 30 }), (ops) => run(ops, [gpu, cpu], undefined)),
        { numRuns: 25 },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 30 }), (ops) => run(ops, [gpu, cpu], 2 * BYTES)),
        { numRuns: 25 },
      );
    });

    it('pinned tensors fall back to ordinary memory on WebGPU (no synchronous mapping)', async () => {
      const g = new ResidencyManager(gpu);
      expect(g.supportsPinned).toBe(false);
      const p = g.createPinned('f32', [256]);
      expect(p.isPinned).toBe(false);
      p.writeWith((v) => v.fill(2));
      g.acquire(p, 'read').release(Fence.empty);
      expect(g.counters.hostCopyBytes).toBe(1024);
    });
  });
});
