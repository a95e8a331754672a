/** Test helpers: devices, the kernel fixture, read-back and a seeded random generator. */
import { createCpuDevice } from '@keel/device-cpu';
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, type Device, type Executable } from '@keel/hal';
import type { Scheduler } from '../src/index';

/** Usage of every buffer the tests make. */
export const USAGE = BufferUsage.TRANSFER_SOURCE | BufferUsage.TRANSFER_TARGET | BufferUsage.DISPATCH_STORAGE;

export const KERNELS_URL = new URL('./fixtures/kernels.mjs', import.meta.url);

/** A CPU device in task mode with `queues` queues of one worker each (or sync mode). */
export async function cpuDevice(queues: number, mode: 'task' | 'sync' = 'task'): Promise<Device> {
  return await createCpuDevice({ mode, queues, workersPerQueue: 1 });
}

/** The `mix` kernel of fixtures/kernels.mjs on `device`. */
export function mixExecutable(device: Device): Promise<Executable> {
  return device.createExecutable({
    format: 'js-module',
    url: KERNELS_URL,
    label: 'mix',
    exports: [{ name: 'mix', bindingCount: 3, constantCount: 1, workgroupSize: [64, 1, 1] }],
  });
}

/** Reads a whole buffer back through the scheduler once `wait` is reached. */
export async function readBack(
  scheduler: Scheduler,
  buffer: Parameters<Device['queueRead']>[3]['buffer'],
  wait: Fence = Fence.empty,
): Promise<Uint8Array> {
  const out = new Uint8Array(buffer.byteLength);
  const semaphore = buffer.device.createSemaphore(0);
  scheduler.submit(
    { kind: 'read', source: { buffer }, target: out },
    { wait, signalFence: Fence.of({ semaphore, value: 1 }) },
  );
  await semaphore.wait(1, { timeoutMs: 10_000 });
  return out;
}

/** A one-timepoint fence of a fresh semaphore of `device`. */
export function nextFence(device: Device, value = 1): Fence {
  return Fence.of({ semaphore: device.createSemaphore(0), value });
}

/** mulberry32: a small seeded generator, so a failing graph can be replayed from its seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The KeelError `fn` throws (fails the test if it throws anything else, or nothing). */
export function failure(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not throw');
}
