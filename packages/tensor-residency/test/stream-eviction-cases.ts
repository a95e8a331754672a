/**
 * Streaming through a budget held by dirty, leased-and-released copies, written once and run on every
 * device kind: each round a read-modify-write kernel updates every small tensor in place through a
 * 'readwrite' lease (released with the kernel's own signal fence), and every few rounds a readwrite
 * stream of a tensor larger than the budget evicts the small copies that are the only up-to-date ones.
 * Each write-back must run after the kernel that last wrote the copy, and the next upload after the
 * write-back: one increment lost anywhere shows in the final bytes. On cpu-task (two queues) the
 * kernels, write-backs, re-uploads and chunk transfers really run concurrently, ordered by fences only.
 *
 * Every kernel signals a fresh single-use fence: the fence handed to `release(after)` must not be
 * reached before the kernel is done. (One timeline shared by kernels that no fence orders, each
 * signalling `++value`, is reached by whichever finishes first; a device leaves a value already passed
 * alone, so `after` would be reached early and the write-back would read the copy before its kernel
 * ran: that is a caller's error, not a case of this file.)
 */
import { type Device, type Executable, slotRef } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureOnHost, ResidencyManager, Tensor } from '../src/index';
import { ANY, type DeviceKind, makeDevice, signalOf } from './helpers';

const WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> d: array<u32>;
@compute @workgroup_size(64)
fn addOne(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&d)) { d[id.x] = d[id.x] + 1u; }
}`;

const EXPORTS = [{ name: 'addOne', bindingCount: 1, constantCount: 0, workgroupSize: [64, 1, 1] as const }];

function addOneExecutable(device: Device): Promise<Executable> {
  if (device.info.backend === 'webgpu') {
    return device.createExecutable({ format: 'wgsl', code: WGSL, exports: EXPORTS, label: 'addOne' });
  }
  return device.createExecutable({
    format: 'js-module',
    url: new URL('./fixtures/add-one.js', import.meta.url),
    exports: EXPORTS,
    label: 'addOne',
  });
}

export function streamEvictionCases(kind: DeviceKind): void {
  describe(`streaming past dirty released copies on ${kind}`, { timeout: 60_000 }, () => {
    let dev: Device | undefined;
    beforeEach(async () => {
      dev = await makeDevice(kind);
    });
    afterEach(async () => {
      await dev?.destroy();
      dev = undefined;
    });

    it('a stream evicting leased-and-released dirty copies writes each back after its last kernel: nothing lost', async () => {
      const device = dev as Device;
      const elements = 256; // 1 KiB of u32 per small tensor
      const budget = 3 * 1024; // three of the four small tensors fit
      const m = new ResidencyManager(device, { budgetBytes: budget, label: 'stream-evict' });
      const exe = await addOneExecutable(device);
      const addOne = (n: number) => {
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1, label: `addOne ${n}` });
        cb.begin();
        cb.dispatch(exe, 'addOne', { workload: [n], bindings: [slotRef(0)] });
        cb.end();
        return cb;
      };
      const small = addOne(elements);
      const chunkElements = 256; // the stream's 1 KiB chunks
      const chunk = addOne(chunkElements);
      const tensors = [0, 1, 2, 3].map((i) =>
        Tensor.fromHost('u32', [elements], new Uint32Array(elements).fill(i), { label: `t${i}` }),
      );
      const big = Tensor.fromHost('u32', [8 * chunkElements], new Uint32Array(8 * chunkElements), {
        label: 'big',
      });
      const rounds = 60;
      let streams = 0;
      let streamWritebacks = 0;
      for (let round = 0; round < rounds; round++) {
        for (const t of tensors) {
          const lease = m.acquire(t, 'readwrite');
          const done = signalOf(device); // the kernel's own fence: reached only once it is done
          device.queueExecute(ANY, lease.wait, done, [small], [[lease.ref]]);
          lease.release(done);
        }
        if (round % 5 === 0) {
          const before = m.counters.writebacks;
          const done = m.stream(big, { access: 'readwrite', chunkBytes: 1024 }, (c) => {
            const f = signalOf(device);
            device.queueExecute(ANY, c.wait, f, [chunk], [[c.ref]]);
            return f;
          });
          streamWritebacks += m.counters.writebacks - before;
          streams++;
          await done.wait({ timeoutMs: 20_000 });
        }
      }
      // The stream made room by evicting copies only the device held (the case under test).
      expect(streamWritebacks).toBe(2 * streams);
      expect(m.counters.peakResidentBytes).toBeLessThanOrEqual(budget);
      const host = await ensureOnHost([...tensors, big]);
      for (let i = 0; i < tensors.length; i++) {
        const wrong = (host[i] as Uint32Array).filter((x) => x !== i + rounds).length;
        expect(wrong, `t${i}: elements not ${i + rounds} (first is ${(host[i] as Uint32Array)[0]})`).toBe(0);
      }
      expect((host[4] as Uint32Array).every((x) => x === streams)).toBe(true);
      for (const t of [...tensors, big]) t.release();
      await m.dispose();
    });
  });
}
