/**
 * GPU order and queue-ordered reuse: a queueAlloca that takes a block from a pending queueDealloca
 * (@keel/allocator rule d: its wait is joined with that dealloca's death frontier) is signalled only
 * once that frontier is reached, so the device may not count its signal as GPU-ordered while the
 * frontier is not (the previous owner's work behind it may still be deferred behind a host semaphore,
 * not even encoded). Likewise a queueDealloca of an allocation that is not live yet is signalled only
 * after the alloca's signal. Counting either as GPU-ordered at the call let the new owner's work run
 * ahead of the previous owner's: a later read showed the previous owner's bytes (the allocator
 * fuzzer's seeds 65, 66, 105, 106). On Dawn in Node (skipped without an adapter); every wait has a
 * short timeout, so a hang fails instead of blocking.
 */
import { Fence, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createWebGpuDevice } from '../src/index';
import type { WebGpuBuffer } from '../src/webgpu-buffer';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const at = (semaphore: Semaphore, value: number): Fence => Fence.of({ semaphore, value });
const TIMEOUT = { timeoutMs: 2000 };
const RING = { pool: 'ring' } as const;
const PARAMS = { usage: BufferUsage.DEFAULT };
/** The ring's capacity: every alloca below takes all of it, so the second one must reuse (rule d). */
const N = 8192;

async function readBack(device: Device, buffer: Buffer, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  const done = device.createSemaphore(0);
  device.queueRead(1, Fence.empty, at(done, 1), { buffer, length }, out);
  await done.wait(1, TIMEOUT);
  return out;
}

describe.skipIf(!probe.available)(
  `device-webgpu: rule-d reuse waits for the previous owner's work${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it("a block taken from a pending dealloca never shows the previous owner's gated write", async () => {
      const device = await createWebGpuDevice({ transientSlabSize: N });
      try {
        const gate = new TimelineSemaphore(0);
        const a = device.createSemaphore(0);
        const first = device.queueAlloca(1, Fence.empty, at(a, 1), PARAMS, N, RING);
        // The previous owner's write waits on the host gate: deferred, not encoded yet.
        device.queueWrite(1, Fence.join(at(a, 1), at(gate, 1)), at(a, 2), new Uint8Array(N).fill(0xaa), {
          buffer: first,
        });
        device.queueDealloca(1, at(a, 2), at(a, 3), first);
        const b = device.createSemaphore(0);
        const second = device.queueAlloca(1, Fence.empty, at(b, 1), PARAMS, N, RING);
        expect((second as WebGpuBuffer).allocation?.source).toBe('waited');
        device.queueWrite(1, at(b, 1), at(b, 2), new Uint8Array(N).fill(0xbb), { buffer: second });
        expect(b.value).toBe(0);
        gate.signal(1);
        await b.wait(2, TIMEOUT);
        expect(a.value).toBe(3);
        const out = await readBack(device, second, N);
        expect(out.findIndex((byte) => byte !== 0xbb)).toBe(-1);
      } finally {
        await device.destroy();
      }
    });

    it('a chain of two rule-d owners: the third never shows the first one’s gated write', async () => {
      const device = await createWebGpuDevice({ transientSlabSize: N });
      try {
        const gate = new TimelineSemaphore(0);
        const s = device.createSemaphore(0);
        const first = device.queueAlloca(1, Fence.empty, at(s, 1), PARAMS, N, RING);
        device.queueWrite(1, Fence.join(at(s, 1), at(gate, 1)), at(s, 2), new Uint8Array(N).fill(0xaa), {
          buffer: first,
        });
        device.queueDealloca(1, at(s, 2), at(s, 3), first);
        // The second owner is deallocated before it is live (its frontier: its own alloca's signal).
        const t = device.createSemaphore(0);
        const second = device.queueAlloca(1, Fence.empty, at(t, 1), PARAMS, N, RING);
        device.queueDealloca(1, Fence.empty, at(t, 2), second);
        const u = device.createSemaphore(0);
        const third = device.queueAlloca(1, Fence.empty, at(u, 1), PARAMS, N, RING);
        expect((third as WebGpuBuffer).allocation?.source).toBe('waited');
        device.queueWrite(1, at(u, 1), at(u, 2), new Uint8Array(N).fill(0xcc), { buffer: third });
        gate.signal(1);
        await u.wait(2, TIMEOUT);
        const out = await readBack(device, third, N);
        expect(out.findIndex((byte) => byte !== 0xcc)).toBe(-1);
      } finally {
        await device.destroy();
      }
    });

    it("work after the dealloca of a rule-d allocation that is not live yet runs after the previous owner's users", async () => {
      const device = await createWebGpuDevice({ transientSlabSize: N });
      try {
        const target = device.createBuffer({ byteLength: 256, usage: BufferUsage.DEFAULT });
        const gate = new TimelineSemaphore(0);
        const s = device.createSemaphore(0);
        const first = device.queueAlloca(1, Fence.empty, at(s, 1), PARAMS, N, RING);
        // A user of the first owner, behind the host gate, writes `target`; the dealloca follows it.
        device.queueWrite(1, at(gate, 1), at(s, 2), new Uint8Array(256).fill(0x11), { buffer: target });
        device.queueDealloca(1, Fence.join(at(s, 1), at(s, 2)), at(s, 3), first);
        const t = device.createSemaphore(0);
        const second = device.queueAlloca(1, Fence.empty, at(t, 1), PARAMS, N, RING);
        expect((second as WebGpuBuffer).allocation?.source).toBe('waited');
        // Signalled after the second alloca's signal, hence after the gated write.
        device.queueDealloca(1, Fence.empty, at(t, 2), second);
        device.queueWrite(1, at(t, 2), at(t, 3), new Uint8Array(256).fill(0x22), { buffer: target });
        gate.signal(1);
        await t.wait(3, TIMEOUT);
        const out = await readBack(device, target, 256);
        expect(out.findIndex((byte) => byte !== 0x22)).toBe(-1);
        target.destroy();
      } finally {
        await device.destroy();
      }
    });
  },
);
