/**
 * The optional 'host-mapping' capability (hal Device.mapHostView): CPU buffers are host memory, so a
 * HOST_VISIBLE + MAPPING buffer is viewed in place. Imports the built package (dist), as the other
 * device tests do, so task mode finds dist/node/worker.js.
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, MemoryType, QueueAffinity } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const MAPPABLE = {
  usage: BufferUsage.DEFAULT | BufferUsage.MAPPING,
  memoryType: MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT,
};

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return KeelError.is(error) ? error.code : `not a KeelError: ${String(error)}`;
  }
  return undefined;
}

for (const mode of ['sync', 'task'] as CpuDeviceMode[]) {
  describe(`mapHostView (${mode})`, () => {
    it('advertises the feature and aliases the buffer both ways, without copies', async () => {
      const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
      devices.push(d);
      expect(d.info.features).toContain('host-mapping');
      const buffer = d.createBuffer({ ...MAPPABLE, byteLength: 64 });
      const view = d.mapHostView(buffer);
      expect(view.byteLength).toBe(64);
      expect(view.byteOffset % 8).toBe(0);
      view.fill(7); // host write, seen by the device's next operation
      const s = new TimelineSemaphore(0);
      const read = new Uint8Array(64);
      d.queueRead(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, read);
      await s.wait(1, { timeoutMs: 5000 });
      expect(Array.from(read)).toEqual(new Array(64).fill(7));
      // Device write, visible through the same view once its signal is reached.
      d.queueFill(
        QueueAffinity.ANY,
        Fence.empty,
        Fence.of({ semaphore: s, value: 2 }),
        { buffer, offset: 16, length: 16 },
        0xab,
        1,
      );
      await s.wait(2, { timeoutMs: 5000 });
      expect(view[15]).toBe(7);
      expect(view[16]).toBe(0xab);
      expect(view[31]).toBe(0xab);
      expect(view[32]).toBe(7);
    });

    it('refuses foreign, unmappable and dead buffers with a KeelError', async () => {
      const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
      const other = createCpuDevice({ mode: 'sync' });
      devices.push(d, other);
      const plain = d.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: 16 });
      expect(codeOf(() => d.mapHostView(plain))).toBe('INVALID_ARGUMENT');
      expect(() => d.mapHostView(plain)).toThrow(/needs HOST_VISIBLE memory and MAPPING usage/);
      const foreign = other.createBuffer({ ...MAPPABLE, byteLength: 16 });
      expect(() => d.mapHostView(foreign)).toThrow(/does not belong to this device/);
      const dead = d.createBuffer({ ...MAPPABLE, byteLength: 16 });
      dead.destroy();
      expect(codeOf(() => d.mapHostView(dead))).toBe('FAILED_PRECONDITION');
    });
  });
}
