/**
 * The WebGPU device's ring pool (`queueAlloca(..., { pool: 'ring' })`) is @keel/allocator's RingPool
 * over GPUBuffer slabs, the same code path as the CPU device's (device-cpu ring-quarantine.test.ts):
 * a block quarantined by a queueDealloca whose wait fails is a hole the ring allocates around, so once
 * the ring wraps later ring allocas are served beside it instead of waiting forever, and one that the
 * quarantine leaves no room for is RESOURCE_EXHAUSTED at the call. On Dawn in Node (skipped without an
 * adapter); every wait has a short timeout, so a hang fails instead of blocking.
 */
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createWebGpuDevice } from '../src/index';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const at = (semaphore: Semaphore, value: number): Fence => Fence.of({ semaphore, value });
const TIMEOUT = { timeoutMs: 2000 };
const RING = { pool: 'ring' } as const;

describe.skipIf(!probe.available)(
  `device-webgpu: a quarantined ring block is a hole${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it('2048 of 8192 bytes quarantined, then 8 ring allocas one at a time all complete', async () => {
      const device = await createWebGpuDevice({ transientSlabSize: 8192 });
      try {
        const live = device.createSemaphore(0);
        const a = device.queueAlloca(1, Fence.empty, at(live, 1), { usage: BufferUsage.DEFAULT }, 2048, RING);
        await live.wait(1, TIMEOUT);
        const gate = new TimelineSemaphore(0);
        const done = device.createSemaphore(0);
        device.queueDealloca(1, Fence.join(at(live, 1), at(gate, 1)), at(done, 1), a);
        gate.fail(new KeelError(ErrorCode.DATA_LOSS, 'gate failed (test)'));
        const error = await done.wait(1, TIMEOUT).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((error as KeelError | undefined)?.code).toBe(ErrorCode.ABORTED);
        expect(device.allocatorStats().get('ring')?.quarantinedBytes).toBe(2048);
        let previous = Fence.empty;
        for (let i = 0; i < 8; i++) {
          const s = device.createSemaphore(0);
          const b = device.queueAlloca(1, previous, at(s, 1), { usage: BufferUsage.DEFAULT }, 2048, RING);
          await s.wait(1, TIMEOUT);
          const freed = device.createSemaphore(0);
          device.queueDealloca(1, at(s, 1), at(freed, 1), b);
          await freed.wait(1, TIMEOUT);
          previous = at(freed, 1);
        }
        expect(device.allocatorStats().get('ring')?.queuedRequests).toBe(0);
        expect(() =>
          device.queueAlloca(1, Fence.empty, Fence.empty, { usage: BufferUsage.DEFAULT }, 8192, RING),
        ).toThrow(/can never be served by ring pool .* 2048 bytes of quarantined blocks/);
      } finally {
        await device.destroy();
      }
    });
  },
);
