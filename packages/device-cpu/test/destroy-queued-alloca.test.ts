/**
 * `device.destroy()` fails every pending signal with UNAVAILABLE, a queued alloca's included (fuzz
 * finding F5). The device used to fail its pending work first: a dealloca waiting on that work then
 * failed, quarantined its block, and the allocator refused the alloca queued for that memory
 * (RESOURCE_EXHAUSTED) before its own destroy could fail it. Now the allocators stop reacting before the
 * device fails its work (PoolRegistry.destroy's `failPending`), so their allocas and deallocas fail with
 * the device's reason rather than ABORTED for that work's failure. Both modes. The ring case runs on
 * every device as the CTS case `lifecycle.destroy-queued-alloca`; this file pins the CPU device's
 * stricter outcome (UNAVAILABLE, not ABORTED) for an alloca waiting on pending work.
 */
import { ErrorCode, Fence, type Semaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCpuDevice } from '../dist/node/index.js';

const at = (semaphore: Semaphore, value = 1): Fence => Fence.of({ semaphore, value });
const PARAMS = { usage: BufferUsage.TRANSFER_TARGET };

describe.each(['sync', 'task'] as const)('device-cpu (%s): destroy with a queued alloca', (mode) => {
  it('tlsf: an alloca waiting on pending work fails UNAVAILABLE too, not ABORTED for that work', async () => {
    const device = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
    const gate = device.createSemaphore(0);
    const kernel = device.createSemaphore(0);
    const pending = device.createSemaphore(0);
    device.queueBarrier(1, at(gate), at(kernel));
    device.queueAlloca(1, at(kernel), at(pending), PARAMS, 64, { pool: 'tlsf' });
    await device.destroy();
    expect(pending.failure?.code).toBe(ErrorCode.UNAVAILABLE);
    expect(kernel.failure?.code).toBe(ErrorCode.UNAVAILABLE);
  });
});
