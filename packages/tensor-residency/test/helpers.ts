/**
 * Test helpers: real devices (CPU sync/task, WebGPU when an adapter exists), host-controlled fences,
 * data and checksums.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { type ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import type { Buffer, Device } from '@keel/hal';
import { expect } from 'vitest';

export type DeviceKind = 'cpu-sync' | 'cpu-task' | 'webgpu';

/** A fresh device of `kind`. */
export async function makeDevice(kind: DeviceKind, label?: string): Promise<Device> {
  switch (kind) {
    case 'cpu-sync':
      return createCpuDevice({ mode: 'sync', queues: 2, label: label ?? 'cpu-sync' });
    case 'cpu-task':
      return createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: label ?? 'cpu-task' });
    case 'webgpu': {
      const { createWebGpuDevice } = await import('@keel/device-webgpu');
      return (await createWebGpuDevice()) as Device;
    }
  }
}

/** A fence the test signals by hand. */
export function hostFence(label = 'host'): { fence: Fence; signal(): void; fail(error: unknown): void } {
  const semaphore = new TimelineSemaphore(0, { label });
  const fence = Fence.of({ semaphore, value: 1 });
  return { fence, signal: () => semaphore.signal(1), fail: (e) => semaphore.fail(e) };
}

/** A fresh single-use signal fence of `device`. */
export function signalOf(device: Device): Fence {
  return Fence.of({ semaphore: device.createSemaphore(0), value: 1 });
}

/** Deterministic pseudo-random f32 data. */
export function floats(n: number, seed = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = ((x >>> 0) % 2000) / 100 - 10;
  }
  return out;
}

/** FNV-1a over the bytes of a view. */
export function checksum(view: ArrayBufferView): number {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i] as number;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Reads a device buffer range back (a test-side probe, not counted by any manager). */
export async function readBuffer(
  device: Device,
  buffer: Buffer,
  wait: Fence,
  bytes: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(bytes);
  const done = signalOf(device);
  device.queueRead(0xffffffff, wait, done, { buffer, offset: 0, length: bytes }, out);
  await done.wait();
  return out;
}

/** Expects `fn` (sync or async) to fail with a KeelError of `code` whose message matches `pattern`. */
export async function expectKeelError(
  fn: () => unknown,
  code: ErrorCode,
  pattern?: RegExp,
): Promise<KeelError> {
  let thrown: unknown;
  try {
    await fn();
  } catch (error) {
    thrown = error;
  }
  expect(KeelError.is(thrown), `expected a KeelError ${code}, got ${String(thrown)}`).toBe(true);
  const error = thrown as KeelError;
  expect(error.code, error.message).toBe(code);
  if (pattern !== undefined) expect(error.message).toMatch(pattern);
  return error;
}

export const ANY = 0xffffffff;
