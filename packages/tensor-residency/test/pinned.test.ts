/**
 * Pinned host tensors: host memory in the device's staging memory, so uploads and readbacks are one
 * queueCopy with no host copy. The CPU device implements hal's optional `mapHostView` (feature
 * 'host-mapping'), so the manager finds the capability on the device itself; without it, createPinned
 * falls back to ordinary memory and ordinary staged copies.
 */
import { Fence } from '@keel/fence';
import type { Device } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { isHostMappable, ResidencyManager, Tensor } from '../src/index';
import {
  ANY,
  checksum,
  type DeviceKind,
  floats,
  hostFence,
  makeDevice,
  readBuffer,
  signalOf,
} from './helpers';

const N = 16 * 1024; // 64 KiB of f32

for (const kind of ['cpu-sync', 'cpu-task'] as DeviceKind[]) {
  describe(`pinned host tensors on ${kind}`, () => {
    let device: Device | undefined;
    afterEach(async () => {
      await device?.destroy();
      device = undefined;
    });

    it('skip the host copy on upload and readback (bytes copied counted)', async () => {
      device = await makeDevice(kind);
      const dev = device;
      const data = floats(N, 42);
      // Ordinary path: the bytes are copied from host memory into device memory (queueWrite).
      const plain = new ResidencyManager(dev, { label: 'plain' });
      const a = Tensor.empty('f32', [N]);
      a.writeWith((view) => view.set(data));
      plain.acquire(a, 'read').release(Fence.empty);
      // Pinned path: the host bytes already are device staging memory (queueCopy, no host copy).
      expect(isHostMappable(dev)).toBe(true);
      const pinned = new ResidencyManager(dev, { label: 'pinned' });
      expect(pinned.supportsPinned).toBe(true);
      const p = pinned.createPinned('f32', [N], { label: 'pinned input' });
      expect(p.isPinned).toBe(true);
      p.writeWith((view) => view.set(data));
      const lease = pinned.acquire(p, 'readwrite');
      const seen = await readBuffer(dev, lease.buffer, lease.wait, p.byteLength);
      expect(checksum(seen)).toBe(checksum(data));
      expect(plain.counters.hostCopyBytes).toBe(N * 4);
      expect(pinned.counters.hostCopyBytes).toBe(0);
      expect(pinned.counters.pinnedTransferBytes).toBe(N * 4);
      expect(pinned.counters.hostToDeviceBytes).toBe(plain.counters.hostToDeviceBytes);
      // Readback into pinned memory: again a queueCopy.
      const done = signalOf(dev);
      dev.queueFill(ANY, lease.wait, done, lease.ref, 0x3f800000, 4); // 1.0f
      lease.release(done);
      expect(p.isOnHost).toBe(false);
      const back = await p.toHost();
      expect(back.every((v) => v === 1)).toBe(true);
      expect(pinned.counters.hostCopyBytes).toBe(0);
      expect(pinned.counters.pinnedTransferBytes).toBe(2 * N * 4);
      expect(pinned.counters.deviceToHostBytes).toBe(N * 4);
      // A host write while the staging memory is in use goes to fresh pinned memory (copy on write).
      p.write(data);
      const reader = pinned.acquire(p, 'read'); // uploads `data` from the staging memory
      const gate = hostFence('gate');
      const used = signalOf(dev);
      dev.queueBarrier(ANY, Fence.join(reader.wait, gate.fence), used);
      reader.release(used);
      p.write(new Float32Array(N).fill(3)); // the device copy is stale again
      const next = pinned.acquire(p, 'read'); // the upload waits for `used` (write after read)
      const staging = new Float32Array(N).fill(4);
      p.write(staging); // the staging memory is still read by the pending upload: fresh memory
      expect(p.isPinned).toBe(true);
      gate.signal();
      const uploaded = await readBuffer(dev, next.buffer, next.wait, p.byteLength);
      next.release(Fence.empty);
      expect(new Float32Array(uploaded.buffer).every((v) => v === 3)).toBe(true);
      expect((await p.toHost()).every((v) => v === 4)).toBe(true);
      p.release();
      a.release();
    });

    it('fall back to ordinary memory and a counted copy without the capability', async () => {
      device = await makeDevice(kind);
      // The same device seen through a view that lacks the optional capability (as WebGPU does).
      const withoutMapping = new Proxy(device, {
        get: (target, key) => (key === 'mapHostView' ? undefined : Reflect.get(target, key, target)),
      });
      expect(isHostMappable(withoutMapping)).toBe(false);
      const m = new ResidencyManager(withoutMapping);
      expect(m.supportsPinned).toBe(false);
      const p = m.createPinned('u32', [1000]);
      expect(p.isPinned).toBe(false);
      p.writeWith((view) => view.fill(5));
      m.acquire(p, 'read').release(Fence.empty);
      expect(m.counters.hostCopyBytes).toBe(4000);
      expect(m.counters.pinnedTransferBytes).toBe(0);
      m.evict(p);
      expect(Array.from((await p.toHost()).subarray(0, 3))).toEqual([5, 5, 5]);
    });
  });
}
