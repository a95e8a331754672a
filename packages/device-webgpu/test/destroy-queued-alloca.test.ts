/**
 * `device.destroy()` fails every pending signal with UNAVAILABLE, a queued alloca's included (fuzz
 * finding F5; the CPU device's test: device-cpu destroy-queued-alloca.test.ts). The device used to fail
 * its pending work first: a dealloca waiting on that work then failed, quarantined its block, and the
 * allocator refused the alloca queued for that memory (RESOURCE_EXHAUSTED) before its own destroy could
 * fail it. Now the allocators stop reacting before the device fails its work (PoolRegistry.destroy's
 * `failPending`). On Dawn in Node (skipped without an adapter).
 */
import { ErrorCode, Fence, type Semaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createWebGpuDevice } from '../src/index';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const at = (semaphore: Semaphore, value = 1): Fence => Fence.of({ semaphore, value });
const PARAMS = { usage: BufferUsage.DEFAULT };

describe.skipIf(!probe.available)(
  `device-webgpu: destroy with a queued alloca${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it('ring: the alloca queued for memory a pending dealloca frees fails UNAVAILABLE', async () => {
      const device = await createWebGpuDevice({ transientSlabSize: 4096 });
      const gate = device.createSemaphore(0);
      const kernel = device.createSemaphore(0);
      const queued = device.createSemaphore(0);
      const freed = device.createSemaphore(0);
      const a = device.queueAlloca(1, Fence.empty, Fence.empty, PARAMS, 4096, { pool: 'ring' });
      device.queueBarrier(1, at(gate), at(kernel)); // work using `a`, waiting on the host
      device.queueAlloca(1, Fence.empty, at(queued), PARAMS, 4096, { pool: 'ring' }); // the ring is full
      device.queueDealloca(1, at(kernel), at(freed), a);
      expect(device.allocatorStats().get('ring')?.queuedRequests).toBe(1);
      await device.destroy();
      expect(queued.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      expect(freed.failure?.code).toBe(ErrorCode.UNAVAILABLE);
      expect(kernel.failure?.code).toBe(ErrorCode.UNAVAILABLE);
    });
  },
);
