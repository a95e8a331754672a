/**
 * A queueDealloca whose wait fails quarantines its block (@keel/allocator README § Failures); in the
 * ring pool (`queueAlloca(..., { pool: 'ring' })`) that block is a hole the ring allocates around, not
 * a wall: once the ring wraps, later ring allocas are served beside it instead of waiting forever, and
 * one that the quarantine leaves no room for is RESOURCE_EXHAUSTED at the call. The CTS case
 * `alloca.ring-quarantine-hole` checks this on every device; this file adds the CPU device's default
 * 64 MiB ring with 1 MiB allocas past the 63rd (where the wall used to stop them). Both modes; every
 * wait has a short timeout, so a hang fails (DEADLINE_EXCEEDED) instead of blocking.
 */
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';

const at = (semaphore: Semaphore, value: number): Fence => Fence.of({ semaphore, value });
const TIMEOUT = { timeoutMs: 2000 };
const RING = { pool: 'ring' } as const;

/** Allocates `byteLength` ring bytes and deallocates them behind a gate that fails (quarantined). */
async function quarantine(device: CpuDevice, byteLength: number): Promise<void> {
  const live = device.createSemaphore(0);
  const a = device.queueAlloca(1, Fence.empty, at(live, 1), { usage: BufferUsage.DEFAULT }, byteLength, RING);
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
  expect(device.allocatorStats().get('ring')?.quarantinedBytes).toBe(byteLength);
}

/** `count` ring allocas of `byteLength` bytes, strictly one live at a time. */
async function sequential(device: CpuDevice, count: number, byteLength: number): Promise<void> {
  let previous = Fence.empty;
  for (let i = 0; i < count; i++) {
    const live = device.createSemaphore(0);
    const b: Buffer = device.queueAlloca(
      1,
      previous,
      at(live, 1),
      { usage: BufferUsage.DEFAULT },
      byteLength,
      RING,
    );
    await live.wait(1, TIMEOUT);
    const freed = device.createSemaphore(0);
    device.queueDealloca(1, at(live, 1), at(freed, 1), b);
    await freed.wait(1, TIMEOUT);
    previous = at(freed, 1);
  }
}

describe.each(['sync', 'task'] as const)('device-cpu %s: a quarantined ring block is a hole', (mode) => {
  it('the default ring (64 MiB): 1 MiB ring allocas run past the 63rd', async () => {
    const device = createCpuDevice({ mode, queues: 1, workersPerQueue: 1 });
    try {
      await quarantine(device, 1 << 20);
      await sequential(device, 70, 1 << 20);
    } finally {
      await device.destroy();
    }
  }, 30_000);
});
