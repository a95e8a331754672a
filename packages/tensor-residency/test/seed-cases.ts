/**
 * The seed's cases (Glow RFC #3629), written once and run on every device kind: training, colocated
 * partitions, cross-device moves, lazy outputs, stale copies, fences, streaming, release.
 */
import { Fence } from '@keel/fence';
import { BufferUsage, type Device, ErrorCode } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureOnHost, ResidencyManager, Tensor } from '../src/index';
import {
  ANY,
  checksum,
  type DeviceKind,
  expectKeelError,
  floats,
  hostFence,
  makeDevice,
  readBuffer,
  signalOf,
} from './helpers';

const KiB = 1024;

/** Lets pending promise callbacks and device completions run. */
async function settle(device?: Device): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
  if (device !== undefined) {
    const done = signalOf(device);
    device.queueBarrier(ANY, Fence.empty, done);
    await done.wait();
  }
}

export function seedCases(kind: DeviceKind): void {
  describe(`seed cases on ${kind}`, () => {
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

    it('training: weights upload once, stay on the device every step, read back only at the end', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev, { label: 'train' });
      const steps = 6;
      const w0 = floats(1024, 7); // 4 KiB of weights
      const weights = Tensor.fromHost('f32', [1024], w0.slice(), { label: 'weights' });
      const input = Tensor.empty('f32', [64], { label: 'input' }); // 256 B per step
      const output = Tensor.empty('f32', [16], { label: 'output' }); // 64 B per step
      const model = w0.slice();
      const w = weights.storageBytes;
      const x = input.storageBytes;
      const y = output.storageBytes;
      for (let step = 0; step < steps; step++) {
        const batch = floats(64, 100 + step);
        input.write(batch);
        const leases = m.acquireAll([
          { tensor: weights, access: 'readwrite' },
          { tensor: input, access: 'read' },
          { tensor: output, access: 'write' },
        ]);
        // The "update": the batch lands in slot `step` of the weights; the output is weights[0..16).
        const updated = signalOf(dev);
        dev.queueCopy(ANY, leases.wait, updated, leases.leases[1]!.ref, {
          buffer: leases.buffer(0),
          offset: step * x,
          length: x,
        });
        const produced = signalOf(dev);
        dev.queueCopy(
          ANY,
          updated,
          produced,
          { buffer: leases.buffer(0), offset: 0, length: y },
          leases.leases[2]!.ref,
        );
        leases.release(produced);
        model.set(batch, step * 64);
        // The loss: the output is read back every step.
        const out = await output.toHost();
        expect(Array.from(out)).toEqual(Array.from(model.subarray(0, 16)));
        // No weight transfer during the steps: only the initial upload.
        const c = m.counters;
        expect(c.hostToDeviceBytes).toBe(w + (step + 1) * x);
        expect(c.deviceToHostBytes).toBe((step + 1) * y);
        expect(weights.isOnHost).toBe(false);
      }
      const final = await weights.toHost();
      expect(Array.from(final)).toEqual(Array.from(model));
      const c = m.counters;
      expect(c.hostToDeviceBytes).toBe(w + steps * x);
      expect(c.deviceToHostBytes).toBe(steps * y + w);
      expect(c.transfers).toBe(1 + steps + steps + 1);
      // weights: avoided on steps 2..n; output: write-only every step.
      expect(c.transfersAvoided).toBe(steps - 1 + steps);
      expect(c.deviceToDeviceBytes).toBe(0);
      weights.release();
      input.release();
      output.release();
      expect(m.counters.residentBytes).toBe(0);
    });

    it('colocated partitions: a tensor produced and consumed on the same device moves nowhere', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const activation = Tensor.empty('u32', [256], { label: 'activation 2' });
      const result = Tensor.empty('u32', [256], { label: 'result' });
      const producer = m.acquire(activation, 'write');
      const produced = signalOf(dev);
      dev.queueFill(ANY, producer.wait, produced, producer.ref, 0xabcd1234, 4);
      producer.release(produced);
      // Partition C on the same device consumes it.
      const done = m.copy(activation, result);
      await done.wait();
      const c = m.counters;
      expect(c.transfers).toBe(0);
      expect(c.hostToDeviceBytes + c.deviceToHostBytes + c.deviceToDeviceBytes).toBe(0);
      expect(c.transfersAvoided).toBe(3);
      expect(activation.isOnHost).toBe(false);
      expect(activation.isOnDevice(m)).toBe(true);
      const out = await result.toHost();
      expect(out.every((v) => v === 0xabcd1234)).toBe(true);
      expect(m.counters.deviceToHostBytes).toBe(result.storageBytes);
    });

    it('cross-device: produced on device A, consumed on device B, moved once through the host', async () => {
      const a = new ResidencyManager(await device('A'), { label: 'A' });
      const b = new ResidencyManager(await device('B'), { label: 'B' });
      const t = Tensor.empty('f32', [512], { label: 'activation 1' });
      const lease = a.acquire(t, 'write');
      const written = signalOf(a.device);
      a.device.queueWrite(ANY, lease.wait, written, floats(512, 3), lease.ref);
      lease.release(written);
      for (let use = 0; use < 3; use++) {
        const consumer = b.acquire(t, 'read');
        const bytes = await readBuffer(b.device, consumer.buffer, consumer.wait, t.byteLength);
        consumer.release(Fence.empty);
        expect(checksum(bytes)).toBe(checksum(floats(512, 3)));
      }
      expect(a.counters.deviceToHostBytes).toBe(t.storageBytes);
      expect(a.counters.transfers).toBe(1);
      expect(b.counters.hostToDeviceBytes).toBe(t.storageBytes);
      expect(b.counters.transfers).toBe(1);
      expect(b.counters.crossDeviceMoves).toBe(1);
      expect(b.counters.transfersAvoided).toBe(2);
      // The move left an up-to-date host copy behind: reading it costs nothing more.
      expect(t.isOnHost).toBe(true);
      await t.toHost();
      expect(a.counters.transfers + b.counters.transfers).toBe(2);
    });

    it('two managers on one device: a direct queueCopy, no host transfer', async () => {
      const dev = await device();
      const m1 = new ResidencyManager(dev, { label: 'partition 1' });
      const m2 = new ResidencyManager(dev, { label: 'partition 2' });
      const t = Tensor.fromHost(
        'i32',
        [300],
        Int32Array.from({ length: 300 }, (_, i) => i * 3 - 7),
      );
      m1.acquire(t, 'read').release(Fence.empty);
      const lease = m2.acquire(t, 'read');
      const bytes = await readBuffer(dev, lease.buffer, lease.wait, t.byteLength);
      lease.release(Fence.empty);
      expect(Array.from(new Int32Array(bytes.buffer))).toEqual(
        Array.from({ length: 300 }, (_, i) => i * 3 - 7),
      );
      expect(m2.counters.deviceToDeviceBytes).toBe(t.storageBytes);
      expect(m2.counters.hostToDeviceBytes).toBe(0);
      expect(m1.counters.hostToDeviceBytes).toBe(t.storageBytes);
    });

    it('lazy outputs: stay on the device until toHost()/ensureOnHost(); a stale host copy transfers once', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const outputs = [0, 1, 2].map((i) => Tensor.empty('u8', [10 + i], { label: `out ${i}` }));
      for (const [i, out] of outputs.entries()) {
        const lease = m.acquire(out, 'write');
        const done = signalOf(dev);
        dev.queueFill(
          ANY,
          lease.wait,
          done,
          { buffer: lease.buffer, offset: 0, length: out.storageBytes },
          10 + i,
          1,
        );
        lease.release(done);
      }
      await settle(dev);
      expect(m.counters.deviceToHostBytes).toBe(0);
      expect(outputs.map((o) => o.isOnHost)).toEqual([false, false, false]);
      const first = outputs[0]!;
      const [v1, v2] = await Promise.all([first.toHost(), first.toHost()]);
      expect(v1.buffer).toBe(v2.buffer);
      expect(Array.from(v1)).toEqual(new Array(10).fill(10));
      expect(m.counters.transfers).toBe(1);
      await first.toHost();
      expect(m.counters.transfers).toBe(1);
      const views = await ensureOnHost(outputs);
      expect(views.map((v) => v.length)).toEqual([10, 11, 12]);
      expect(Array.from(views[2]!)).toEqual(new Array(12).fill(12));
      expect(m.counters.transfers).toBe(3);
      expect(m.counters.deviceToHostBytes).toBe(12 + 12 + 12);
      await ensureOnHost(outputs);
      expect(m.counters.transfers).toBe(3);
    });

    it('a write marks the other copies stale (host write and device write)', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const t = Tensor.fromHost('f32', [8], [1, 2, 3, 4, 5, 6, 7, 8]);
      m.acquire(t, 'read').release(Fence.empty);
      expect(t.isOnDevice(m)).toBe(true);
      t.write([8, 7, 6, 5, 4, 3, 2, 1]);
      expect(t.isOnDevice(m)).toBe(false);
      expect(t.locations).toEqual([m]);
      const lease = m.acquire(t, 'readwrite');
      expect(m.counters.hostToDeviceBytes).toBe(64);
      const seen = await readBuffer(dev, lease.buffer, lease.wait, 32);
      expect(Array.from(new Float32Array(seen.buffer))).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
      const done = signalOf(dev);
      dev.queueFill(ANY, lease.wait, done, lease.ref, 0, 4);
      lease.release(done);
      expect(t.isOnHost).toBe(false);
      expect(t.isOnDevice(m)).toBe(true);
      expect(Array.from(await t.toHost())).toEqual(new Array(8).fill(0));
      expect(m.counters.deviceToHostBytes).toBe(32);
    });

    it('readers wait on the right fences (read after write, write after read)', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const t = Tensor.empty('u32', [64], { label: 'produced' });
      // A writer whose work waits on a host fence we control.
      const gate = hostFence('gate');
      const writer = m.acquire(t, 'write');
      const written = signalOf(dev);
      dev.queueFill(ANY, Fence.join(writer.wait, gate.fence), written, writer.ref, 7, 4);
      writer.release(written);
      // A reader on the device waits on the writer's fence.
      const reader = m.acquire(t, 'read');
      expect(reader.wait.timepoints.map((tp) => tp.semaphore)).toContain(written.timepoints[0]!.semaphore);
      expect(reader.wait.query()).toBe('pending');
      // A host reader too.
      let arrived = false;
      const host = t.toHost().then((v) => {
        arrived = true;
        return v;
      });
      await settle();
      expect(arrived).toBe(false);
      // The device reader's own use ends after a second gate: a later writer must wait for it.
      const useGate = hostFence('reader use');
      const used = signalOf(dev);
      dev.queueBarrier(ANY, Fence.join(reader.wait, useGate.fence), used);
      reader.release(used);
      const writer2 = m.acquire(t, 'write');
      expect(writer2.wait.timepoints.map((tp) => tp.semaphore)).toContain(used.timepoints[0]!.semaphore);
      gate.signal();
      expect(Array.from(await host)).toEqual(new Array(64).fill(7));
      expect(arrived).toBe(true);
      await settle(dev);
      expect(writer2.wait.query()).toBe('pending');
      useGate.signal();
      await writer2.wait.wait();
      writer2.release(Fence.empty);
    });

    it('eviction and release never free a buffer still in use', async () => {
      const dev = await device();
      const size = 4 * KiB;
      const m = new ResidencyManager(dev, { budgetBytes: 2 * size });
      const a = Tensor.empty('u8', [size], { label: 'a' });
      const la = m.acquire(a, 'write');
      const aWritten = signalOf(dev);
      dev.queueFill(ANY, la.wait, aWritten, la.ref, 0xaa, 1);
      la.release(aWritten);
      // A reader of a's buffer that only runs once `gate` is signalled.
      const probe = dev.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: size });
      const gate = hostFence('gate');
      const reader = m.acquire(a, 'read');
      const copied = signalOf(dev);
      dev.queueCopy(ANY, Fence.join(reader.wait, gate.fence), copied, reader.ref, { buffer: probe });
      reader.release(copied);
      // Two more tensors evict a (the only up-to-date copy: written back first) while the reader waits.
      for (const [i, pattern] of [0x11, 0x22].entries()) {
        const t = Tensor.empty('u8', [size], { label: `t${i}` });
        const l = m.acquire(t, 'write');
        const done = signalOf(dev);
        dev.queueFill(ANY, l.wait, done, l.ref, pattern, 1);
        l.release(done);
      }
      expect(a.locations).toEqual([]);
      expect(m.counters.evictions).toBe(1);
      expect(m.counters.writebacks).toBe(1);
      gate.signal();
      const seen = await readBuffer(dev, probe, copied, size);
      expect(seen.every((v) => v === 0xaa)).toBe(true);
      expect((await a.toHost()).every((v) => v === 0xaa)).toBe(true);
      // release() while a use is pending: the buffer stays usable for that use.
      const b = Tensor.fromHost('u8', [size], new Uint8Array(size).fill(0x5c));
      const lb = m.acquire(b, 'read');
      const gate2 = hostFence('gate 2');
      const copied2 = signalOf(dev);
      dev.queueCopy(ANY, Fence.join(lb.wait, gate2.fence), copied2, lb.ref, { buffer: probe });
      lb.release(copied2);
      b.release();
      expect(m.counters.residentBytes).toBe(size); // t1 is left
      expect(lb.buffer.state).not.toBe('live');
      gate2.signal();
      const seen2 = await readBuffer(dev, probe, copied2, size);
      expect(seen2.every((v) => v === 0x5c)).toBe(true);
      probe.destroy();
    });

    it('streaming: tensors whose total exceeds the budget, in sequence: LRU eviction, write-back, nothing lost', async () => {
      const dev = await device();
      const size = KiB;
      const m = new ResidencyManager(dev, { budgetBytes: 3 * size });
      const inputs = Array.from({ length: 8 }, (_, i) =>
        Tensor.fromHost('f32', [size / 4], floats(size / 4, 50 + i)),
      );
      const outputs = inputs.map((_, i) => Tensor.empty('f32', [size / 4], { label: `out ${i}` }));
      for (let i = 0; i < inputs.length; i++) {
        // Each step consumes input i and produces output i on the device.
        m.copy(inputs[i]!, outputs[i]!);
        expect(m.counters.residentBytes).toBeLessThanOrEqual(3 * size);
      }
      // LRU: clean inputs were dropped, dirty outputs written back; the last step is still resident.
      const c = m.counters;
      expect(c.writebacks).toBe(6);
      expect(c.evictions).toBe(13);
      expect(c.peakResidentBytes).toBe(3 * size);
      expect(outputs.slice(0, 6).every((o) => o.isOnHost && o.locations.length === 0)).toBe(true);
      expect(outputs[6]!.isOnDevice(m) && inputs[7]!.isOnDevice(m) && outputs[7]!.isOnDevice(m)).toBe(true);
      const views = await ensureOnHost(outputs);
      for (let i = 0; i < 8; i++) expect(checksum(views[i]!)).toBe(checksum(floats(size / 4, 50 + i)));
      // Every input uploaded once, every output read back once: nothing moved twice.
      expect(m.counters.hostToDeviceBytes).toBe(8 * size);
      expect(m.counters.deviceToHostBytes).toBe(8 * size);
    });

    it('streaming: a tensor larger than the budget is processed in chunks (acquire refuses it clearly)', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev, { budgetBytes: 3 * KiB });
      const n = (10 * KiB) / 4;
      const data = floats(n, 9);
      const big = Tensor.fromHost('f32', [n], data.slice(), { label: 'big' });
      await expectKeelError(() => m.acquire(big, 'read'), ErrorCode.RESOURCE_EXHAUSTED, /'big'.*stream\(\)/);
      // Read: each chunk copied to a probe at its offset reassembles the tensor.
      const probe = dev.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: big.storageBytes });
      const read = m.stream(big, { chunkBytes: KiB }, (chunk) => {
        const done = signalOf(dev);
        dev.queueCopy(ANY, chunk.wait, done, chunk.ref, {
          buffer: probe,
          offset: chunk.byteOffset,
          length: chunk.byteLength,
        });
        return done;
      });
      const seen = await readBuffer(dev, probe, read, big.storageBytes);
      expect(checksum(seen)).toBe(checksum(data));
      // Readwrite: each chunk's first half becomes its second half.
      const done = m.stream(big, { access: 'readwrite', chunkBytes: KiB }, (chunk) => {
        const half = chunk.byteLength / 2;
        const f = signalOf(dev);
        dev.queueCopy(
          ANY,
          chunk.wait,
          f,
          { buffer: chunk.buffer, offset: half, length: half },
          { buffer: chunk.buffer, offset: 0, length: half },
        );
        return f;
      });
      expect(big.isOnHost).toBe(true);
      const expected = data.slice();
      for (let off = 0; off < n; off += 256) expected.copyWithin(off, off + 128, off + 256);
      expect(checksum(await big.toHost())).toBe(checksum(expected));
      await done.wait();
      const c = m.counters;
      expect(c.streamedChunks).toBe(20);
      expect(c.hostToDeviceBytes).toBe(20 * KiB);
      expect(c.deviceToHostBytes).toBe(10 * KiB);
      expect(c.residentBytes).toBe(0);
      expect(c.peakResidentBytes).toBeLessThanOrEqual(3 * KiB);
      probe.destroy();
    });

    it('release() frees device memory and makes the tensor unusable', async () => {
      const dev = await device();
      const m = new ResidencyManager(dev);
      const t = Tensor.fromHost('f32', [256], floats(256));
      const lease = m.acquire(t, 'read');
      const buffer = lease.buffer;
      lease.release(Fence.empty);
      expect(m.counters.residentBytes).toBe(1024);
      const open = m.acquire(t, 'read');
      await expectKeelError(() => t.release(), ErrorCode.FAILED_PRECONDITION, /open lease/);
      open.release(Fence.empty);
      t.release();
      t.release(); // idempotent
      expect(m.counters.residentBytes).toBe(0);
      expect(buffer.state).not.toBe('live');
      expect(t.released).toBe(true);
      await expectKeelError(() => m.acquire(t, 'read'), ErrorCode.FAILED_PRECONDITION, /was released/);
      await expectKeelError(() => t.toHost(), ErrorCode.FAILED_PRECONDITION, /was released/);
      await expectKeelError(() => t.write(floats(256)), ErrorCode.FAILED_PRECONDITION, /was released/);
    });

    it('a transfer to a destroyed device is a KeelError; data only there is DATA_LOSS', async () => {
      const dev = await device();
      const other = new ResidencyManager(await device('other'));
      const m = new ResidencyManager(dev);
      const onHost = Tensor.fromHost('f32', [4], [1, 2, 3, 4]);
      const onlyThere = Tensor.empty('f32', [4], { label: 'only there' });
      const l = m.acquire(onlyThere, 'write');
      const done = signalOf(dev);
      dev.queueFill(ANY, l.wait, done, l.ref, 0, 4);
      l.release(done);
      await done.wait();
      await dev.destroy();
      await settle();
      await expectKeelError(() => m.acquire(onHost, 'read'), ErrorCode.UNAVAILABLE, /lost or destroyed/);
      await expectKeelError(() => onlyThere.toHost(), ErrorCode.DATA_LOSS, /only up-to-date copy/);
      await expectKeelError(() => other.acquire(onlyThere, 'read'), ErrorCode.DATA_LOSS);
      // A full write recovers the tensor.
      onlyThere.write([4, 3, 2, 1]);
      expect(Array.from(await onlyThere.toHost())).toEqual([4, 3, 2, 1]);
      other.acquire(onlyThere, 'read').release(Fence.empty);
      expect(other.counters.hostToDeviceBytes).toBe(16);
    });
  });
}
