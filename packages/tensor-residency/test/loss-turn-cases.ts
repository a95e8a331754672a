/**
 * A device lost or destroyed in the same turn as a manager call: the manager notices it synchronously
 * (`device.lostReason`), not only when `device.lost` resolves. Every entry point then reports
 * UNAVAILABLE with the device's reason as `cause` (never the device's own FAILED_PRECONDITION), and
 * the tensors end up exactly as after a loss the manager heard of through `lost` (DATA_LOSS for a tensor
 * whose only up-to-date copy was on the device). Written once and run on every device kind.
 */
import { Fence, type KeelError } from '@keel/fence';
import { type Device, ErrorCode } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResidencyManager, Tensor } from '../src/index';
import { ANY, type DeviceKind, expectKeelError, makeDevice, signalOf } from './helpers';

/** A manager on `device` with `onHost` (host copy only) and `onlyThere` (written on the device). */
async function setUp(device: Device) {
  const m = new ResidencyManager(device, { budgetBytes: 1024, label: 'doomed' });
  const onHost = Tensor.fromHost('u32', [4], [1, 2, 3, 4], { label: 'on host' });
  const onlyThere = Tensor.empty('u32', [4], { label: 'only there' });
  const lease = m.acquire(onlyThere, 'write');
  const done = signalOf(device);
  device.queueFill(ANY, lease.wait, done, lease.ref, 7, 4);
  lease.release(done);
  await done.wait();
  return { device, m, onHost, onlyThere };
}

/** The UNAVAILABLE of a lost manager, with the device's reason (what `lost` resolves with) as cause. */
async function expectUnavailable(fn: () => unknown, device: Device): Promise<void> {
  const error = await expectKeelError(fn, ErrorCode.UNAVAILABLE, /lost or destroyed/);
  expect(error.cause).toBe(await device.lost);
}

/** What the tensors look like after the manager saw the loss, however it saw it. */
async function expectAfterLoss(
  m: ResidencyManager,
  device: Device,
  t: { onHost: Tensor; onlyThere: Tensor },
) {
  expect(m.lostReason).toBe(await device.lost);
  expect(m.residentCount).toBe(0);
  expect(m.counters.residentBytes).toBe(0);
  expect(t.onlyThere.locations).toEqual([]);
  await expectKeelError(() => t.onlyThere.toHost(), ErrorCode.DATA_LOSS, /only up-to-date copy/);
  expect(Array.from(await t.onHost.toHost())).toEqual([1, 2, 3, 4]);
  await expectUnavailable(() => m.acquire(t.onHost, 'read'), device);
}

export function lossTurnCases(kind: DeviceKind): void {
  describe(`a loss in the same turn as the call, on ${kind}`, () => {
    let devices: Device[] = [];
    /** A fresh device of `kind`, destroyed after the case (destroy is idempotent). */
    const fresh = async (label: string) => {
      const d = await makeDevice(kind, label);
      devices.push(d);
      return d;
    };
    beforeEach(() => {
      devices = [];
    });
    afterEach(async () => {
      for (const d of devices) await d.destroy();
    });

    it('destroy() without await, then acquire at once: UNAVAILABLE, and the tensors as after any loss', async () => {
      const { device, m, onHost, onlyThere } = await setUp(await fresh('doomed'));
      const destroyed = device.destroy();
      await expectUnavailable(() => m.acquire(onHost, 'read'), device);
      await destroyed;
      await expectAfterLoss(m, device, { onHost, onlyThere });
    });

    it('destroy() without await, then toHost of a tensor only on the device: UNAVAILABLE, then DATA_LOSS', async () => {
      const { device, m, onHost, onlyThere } = await setUp(await fresh('doomed'));
      const destroyed = device.destroy();
      await expectUnavailable(() => onlyThere.toHost(), device);
      await destroyed;
      await expectAfterLoss(m, device, { onHost, onlyThere });
    });

    it('another manager reading a tensor only on the destroyed device: UNAVAILABLE, no copy left behind', async () => {
      const { device, m, onHost, onlyThere } = await setUp(await fresh('doomed'));
      const reader = await fresh('reader');
      const other = new ResidencyManager(reader);
      const destroyed = device.destroy();
      await expectUnavailable(() => other.acquire(onlyThere, 'read'), device);
      expect(other.residentCount).toBe(0);
      await destroyed;
      await expectAfterLoss(m, device, { onHost, onlyThere });
      await expectKeelError(() => other.acquire(onlyThere, 'read'), ErrorCode.DATA_LOSS);
      await other.dispose();
    });

    it('a manager made on an already destroyed device: every entry point is UNAVAILABLE', async () => {
      const device = await fresh('gone');
      await device.destroy();
      const reason: KeelError = await device.lost;
      const m = new ResidencyManager(device);
      expect(m.lostReason).toBe(reason);
      const t = Tensor.fromHost('u32', [4], [1, 2, 3, 4]);
      const u = Tensor.zeros('u32', [4]);
      const calls: [string, () => unknown][] = [
        ['acquire', () => m.acquire(t, 'read')],
        ['acquireAll', () => m.acquireAll([{ tensor: t, access: 'read' }])],
        ['copy', () => m.copy(t, u)],
        ['stream', () => m.stream(t, { chunkBytes: 8 }, () => Fence.empty)],
        ['evict', () => m.evict(t)],
        ['evictAll', () => m.evictAll()],
        ['createPinned', () => m.createPinned('u32', [4])],
        ['mirror', () => m.mirror({ everyUses: 1 })],
      ];
      for (const [name, call] of calls) {
        const error = await expectKeelError(call, ErrorCode.UNAVAILABLE, /lost or destroyed/);
        expect(error.message, name).toMatch(new RegExp(`ResidencyManager\\.${name}\\b`));
        expect(error.cause, name).toBe(reason);
      }
      await m.dispose();
    });

    it('dispose() and rehome() in the same turn as destroy() act as after a loss', async () => {
      const { device, m, onHost, onlyThere } = await setUp(await fresh('doomed'));
      const next = await fresh('next');
      const destroyed = device.destroy();
      const moved = m.rehome(next); // a lost manager may rehome; `onHost` had no copy there, `onlyThere` lost its data
      expect(moved.residentCount).toBe(0);
      await expect(m.dispose()).resolves.toBeUndefined();
      await destroyed;
      await expectKeelError(() => onlyThere.toHost(), ErrorCode.DATA_LOSS, /only up-to-date copy/);
      moved.acquire(onHost, 'read').release(Fence.empty);
      expect(moved.residentCount).toBe(1);
      await moved.dispose();
    });

    it('a write lease released in the same turn as destroy(): written on a lost device, no mirror tried', async () => {
      const { device, m, onHost } = await setUp(await fresh('doomed'));
      const policy = m.mirror({ everyUses: 1 });
      const lease = m.acquire(onHost, 'readwrite');
      const destroyed = device.destroy();
      lease.release(Fence.empty); // written on the lost device: onHost's new version is lost
      expect(policy.stopped).toBe(true);
      expect(policy.stats.failed).toBe(0);
      await destroyed;
      await expectKeelError(() => onHost.toHost(), ErrorCode.DATA_LOSS, /lost/);
      expect(m.residentCount).toBe(0);
      await m.dispose();
    });

    it('Tensor.release in the same turn as destroy() frees nothing on the device and does not throw', async () => {
      const { device, m, onlyThere } = await setUp(await fresh('doomed'));
      const buffers = new ResidencyManager(device, { allocation: 'buffers' });
      const t = Tensor.fromHost('u32', [4], [1, 2, 3, 4]);
      buffers.acquire(t, 'read').release(Fence.empty);
      const destroyed = device.destroy();
      expect(() => onlyThere.release()).not.toThrow();
      expect(() => t.release()).not.toThrow();
      expect(m.residentCount).toBe(0);
      expect(buffers.residentCount).toBe(0);
      await destroyed;
      await m.dispose();
      await buffers.dispose();
    });

    it('a host write to a pinned tensor in the same turn as destroy() goes to ordinary memory, not lost', async () => {
      const device = await fresh('doomed');
      const m = new ResidencyManager(device);
      if (!m.supportsPinned) return; // no HostMapping on this device: no pinned memory to lose
      const t = m.createPinned('u32', [4]);
      expect(t.isPinned).toBe(true);
      const destroyed = device.destroy();
      t.write([5, 6, 7, 8]);
      expect(t.isPinned).toBe(false);
      await destroyed;
      expect(Array.from(await t.toHost())).toEqual([5, 6, 7, 8]);
      await m.dispose();
    });
  });
}
