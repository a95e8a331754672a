/**
 * Mirror policy and re-homing, written once and run on every device kind: dirty device tensors are
 * mirrored to the host every K uses or T ms (double-buffered, one in flight per tensor, a round's
 * tensors together); after the device is lost a mirrored tensor reads its last mirrored version and
 * says so (`recovery`), an unmirrored one still reads DATA_LOSS; `rehome` moves the tensors onto a
 * new device and mirroring continues there.
 */
import { Fence } from '@keel/fence';
import { type Device, ErrorCode } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResidencyManager, Tensor } from '../src/index';
import { ANY, type DeviceKind, expectKeelError, hostFence, makeDevice, signalOf } from './helpers';

/** Writes `values` into the tensor on the manager's device (a 'write' lease), as a kernel would. */
function deviceWrite(m: ResidencyManager, t: Tensor<'f32'>, values: readonly number[], after?: Fence): Fence {
  const lease = m.acquire(t, 'write');
  const done = signalOf(m.device);
  m.device.queueWrite(ANY, lease.wait, done, new Float32Array(values), lease.ref);
  lease.release(after === undefined ? done : Fence.join(done, after));
  return done;
}

/** Waits (bounded) until `check` holds, letting completions run. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check(), what).toBe(true);
}

export function mirrorCases(kind: DeviceKind): void {
  describe(`mirror policy and rehome on ${kind}`, { timeout: 60_000 }, () => {
    let devices: Device[] = [];
    const device = async (label?: string) => {
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

    it('mirrors every K uses; after the device is lost the tensor reads the last mirror and says so', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev, { label: 'train' });
      const policy = m.mirror({ everyUses: 2 });
      const t = Tensor.empty('f32', [4], { label: 'w' });
      const unmirrored = Tensor.empty('f32', [4], { label: 'scratch' });
      for (let i = 1; i <= 5; i++) {
        await deviceWrite(m, t, [i, i, i, i]).wait();
        await until(() => policy.stats.inFlight === 0, 'mirror landed');
      }
      expect(policy.stats.mirrors).toBe(2);
      // Mirrored at uses 2 and 4: versions 2 and 4 (Tensor.empty is version 0).
      expect(t.version).toBe(5);
      expect(m.mirroredVersion(t)).toBe(4);
      expect(policy.stats).toMatchObject({ rounds: 2, mirrors: 2, mirroredBytes: 32, failed: 0, skipped: 0 });
      // The mirror is not a residency transfer: the copy is still the only up-to-date one.
      expect(t.isOnHost).toBe(false);
      expect(m.counters.deviceToHostBytes).toBe(0);
      await deviceWrite(m, unmirrored, [9, 9, 9, 9]).wait(); // one use: not due yet

      await dev.destroy();
      await until(() => m.lostReason !== undefined, 'loss noticed');
      expect(Array.from(await t.toHost())).toEqual([4, 4, 4, 4]);
      expect(t.recovery).toMatchObject({
        mirroredVersion: 4,
        lostVersion: 5,
        lostUpdates: 1,
        manager: 'train',
      });
      expect(t.isOnHost).toBe(true);
      // Without a mirror: DATA_LOSS, as before.
      await expectKeelError(() => unmirrored.toHost(), ErrorCode.DATA_LOSS, /only up-to-date copy/);
      // The next write clears the recovery note.
      t.write([0, 0, 0, 0]);
      expect(t.recovery).toBeUndefined();
    });

    it('rehome: the tensors move onto a new device from their mirrors, and mirroring goes on there', async () => {
      const dev = await device('first');
      const m = new ResidencyManager(dev, { label: 'params', budgetBytes: 4096 });
      m.mirror({ everyUses: 1 });
      const w = Tensor.fromHost('f32', [4], [1, 1, 1, 1], { label: 'w' });
      const b = Tensor.fromHost('f32', [2], [5, 5], { label: 'b' });
      // Step 1 writes both in one acquireAll: one round mirrors both.
      const leases = m.acquireAll([
        { tensor: w, access: 'readwrite' },
        { tensor: b, access: 'readwrite' },
      ]);
      const d1 = signalOf(dev);
      const d2 = signalOf(dev);
      dev.queueWrite(ANY, leases.wait, d1, new Float32Array([2, 2, 2, 2]), leases.leases[0]!.ref);
      dev.queueWrite(ANY, d1, d2, new Float32Array([6, 6]), leases.leases[1]!.ref);
      leases.release(d2);
      await d2.wait();
      await until(() => m.mirrorPolicy!.stats.mirrors === 2, 'one round of two');
      expect(m.mirrorPolicy!.stats.rounds).toBe(1);
      await expectKeelError(() => m.rehome(dev), ErrorCode.FAILED_PRECONDITION, /still has its device/);

      await dev.destroy();
      await until(() => m.lostReason !== undefined, 'loss noticed');
      const next = await device('second');
      await expectKeelError(() => m.rehome(dev), ErrorCode.INVALID_ARGUMENT, /lost device/);
      const moved = m.rehome(next);
      expect(moved.device).toBe(next);
      expect(moved.label).toBe('params');
      expect(moved.budgetBytes).toBe(4096);
      expect(w.isOnDevice(moved)).toBe(true);
      expect(b.isOnDevice(moved)).toBe(true);
      expect(moved.counters.hostToDeviceBytes).toBe(16 + 8);
      expect(moved.mirrorPolicy?.everyUses).toBe(1);
      expect(w.recovery?.lostUpdates).toBe(0);
      // Training continues on the new device from the mirrored values.
      const lease = moved.acquire(w, 'readwrite');
      expect(moved.counters.transfersAvoided).toBeGreaterThan(0);
      const probe = new Float32Array(4);
      const read = signalOf(next);
      next.queueRead(ANY, lease.wait, read, lease.ref, probe);
      const wrote = signalOf(next);
      next.queueWrite(ANY, read, wrote, new Float32Array([3, 3, 3, 3]), lease.ref);
      lease.release(wrote);
      await read.wait();
      expect(Array.from(probe)).toEqual([2, 2, 2, 2]);
      await until(() => moved.mirrorPolicy!.stats.mirrors === 1, 'mirrored on the new device');
      expect(Array.from(await w.toHost())).toEqual([3, 3, 3, 3]);
      expect(w.recovery).toBeUndefined();
      await moved.dispose();
    });

    it('one mirror in flight per tensor: a due mirror waits; a loss meanwhile restores the previous one, never a mix', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev, { label: 'm' });
      const policy = m.mirror({ everyUses: 1 });
      const t = Tensor.empty('f32', [4], { label: 't' });
      const u = Tensor.empty('f32', [4], { label: 'u' });
      const writeBoth = (value: number, after?: Fence): Fence => {
        const leases = m.acquireAll([
          { tensor: t, access: 'write' },
          { tensor: u, access: 'write' },
        ]);
        const d1 = signalOf(dev);
        const d2 = signalOf(dev);
        dev.queueWrite(ANY, leases.wait, d1, new Float32Array(4).fill(value), leases.leases[0]!.ref);
        dev.queueWrite(ANY, d1, d2, new Float32Array(4).fill(-value), leases.leases[1]!.ref);
        leases.release(after === undefined ? d2 : Fence.join(d2, after));
        return d2;
      };
      await writeBoth(1).wait();
      await until(() => policy.stats.mirrors === 2 && policy.stats.inFlight === 0, 'first round');
      // Round 2's writes end at a host fence not yet signalled: its mirror is issued and stays in flight.
      const gate = hostFence('gate');
      writeBoth(2, gate.fence);
      expect(policy.stats.inFlight).toBe(1);
      // Round 3 is due but both tensors have a mirror in flight: deferred.
      writeBoth(3, gate.fence);
      expect(policy.stats.skipped).toBe(1);
      expect(policy.stats.inFlight).toBe(1);
      // The device is lost before the round-2 mirror lands: both restore round 1, together.
      await dev.destroy();
      await until(() => m.lostReason !== undefined, 'loss noticed');
      gate.signal();
      expect(Array.from(await t.toHost())).toEqual([1, 1, 1, 1]);
      expect(Array.from(await u.toHost())).toEqual([-1, -1, -1, -1]);
      expect(t.recovery).toMatchObject({ mirroredVersion: 1, lostVersion: 3, lostUpdates: 2 });
      expect(u.recovery).toMatchObject({ mirroredVersion: 1, lostVersion: 3, lostUpdates: 2 });
      expect(policy.stopped).toBe(true);
    });

    it('everyMs: a tensor left dirty is mirrored by the timer', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const policy = m.mirror({ everyMs: 5 });
      const t = Tensor.empty('f32', [4], { label: 't' });
      await deviceWrite(m, t, [7, 7, 7, 7]).wait();
      await until(() => policy.stats.mirrors === 1, 'mirrored by the sweep');
      expect(m.mirroredVersion(t)).toBe(t.version);
      policy[Symbol.dispose]();
      await dev.destroy();
      await until(() => m.lostReason !== undefined, 'loss noticed');
      // Disposed: its mirrors are gone, so the loss is a loss again.
      await expectKeelError(() => t.toHost(), ErrorCode.DATA_LOSS);
    });

    it('bad mirror options are INVALID_ARGUMENT naming the option; one active policy per manager', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const bad: [unknown, RegExp][] = [
        [{}, /'everyUses'.*'everyMs'/],
        ['often', /options must be an object, got "often"/],
        [{ everyUses: 0 }, /option 'everyUses' must be an integer ≥ 1, got 0/],
        [{ everyUses: 1.5 }, /option 'everyUses'/],
        [{ everyUses: '2' }, /option 'everyUses' must be an integer ≥ 1, got "2"/],
        [{ everyMs: -1 }, /option 'everyMs' must be a number ≥ 1/],
        [{ everyMs: Number.NaN }, /option 'everyMs'/],
        [{ everyUses: 2, affinity: 0 }, /option 'affinity'/],
        [{ everyUses: 2, affinity: 2 ** 32 }, /option 'affinity'/],
        [{ everyUses: 2, every: 3 }, /unknown option 'every'/],
      ];
      for (const [options, pattern] of bad) {
        await expectKeelError(
          () => m.mirror(options as Parameters<ResidencyManager['mirror']>[0]),
          ErrorCode.INVALID_ARGUMENT,
          pattern,
        );
      }
      const policy = m.mirror({ everyUses: 3 });
      await expectKeelError(() => m.mirror({ everyUses: 3 }), ErrorCode.FAILED_PRECONDITION, /already has/);
      policy[Symbol.dispose]();
      const again = m.mirror({ everyMs: 1000 });
      expect(m.mirrorPolicy).toBe(again);
      expect(again.options).toEqual({ everyMs: 1000, affinity: m.affinity });
      await m.dispose();
      expect(again.stopped).toBe(true);
    });
  });
}
