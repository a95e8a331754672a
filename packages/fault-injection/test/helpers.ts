/**
 * Helpers of the fault-injection suite: bounded waits (a wait that does not settle in time fails the
 * test as a hang instead of stalling CI), fences of single-use semaphores, host reads, and checks of
 * the documented error codes and cause chains.
 */
import { ErrorCode, Fence, KeelError, type Semaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device, QueueAffinity } from '@keel/hal';
import { afterEach, expect } from 'vitest';
import { uncapturedGpuErrors } from './backends';

/** How long any single wait of the suite may take before it counts as a hang. */
export const HANG_MS = 15_000;

export const STORAGE = BufferUsage.DEFAULT;
export const Q0 = QueueAffinity.of(0);
export const Q1 = QueueAffinity.of(1);

/** The outcome of a settled signal: `'ok'` or the failure the semaphore holds. */
export type Outcome = 'ok' | KeelError;

/** Throws a hang error naming `what` unless `promise` settles within `ms`. */
export async function bounded<T>(promise: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (bounded) for `semaphore` to reach `value` or fail; a hang fails the test. */
export async function outcome(semaphore: Semaphore, value: number, what = 'signal'): Promise<Outcome> {
  try {
    await semaphore.wait(value, { timeoutMs: HANG_MS });
    return 'ok';
  } catch (error) {
    if (KeelError.is(error, ErrorCode.DEADLINE_EXCEEDED)) {
      throw new Error(`hang: ${what} (value ${value}) neither reached nor failed within ${HANG_MS} ms`);
    }
    if (!KeelError.is(error)) throw error;
    return semaphore.failure ?? error;
  }
}

/** A fresh semaphore of `device` and the fence of its value 1: one operation's signal. */
export function single(device: Device): { semaphore: Semaphore; fence: Fence } {
  const semaphore = device.createSemaphore(0);
  return { semaphore, fence: Fence.of({ semaphore, value: 1 }) };
}

/** Reads `length` bytes of `buffer` from `offset` (bounded). */
export async function readBytes(
  device: Device,
  buffer: Buffer,
  offset = 0,
  length?: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(length ?? buffer.byteLength - offset);
  const s = single(device);
  device.queueRead(QueueAffinity.ANY, Fence.empty, s.fence, { buffer, offset, length: out.byteLength }, out);
  const result = await outcome(s.semaphore, 1, 'queueRead');
  if (result !== 'ok') throw result;
  return out;
}

/** Writes `bytes` into `buffer` at `offset` and waits (bounded) for it. */
export async function writeBytes(
  device: Device,
  buffer: Buffer,
  bytes: Uint8Array,
  offset = 0,
): Promise<void> {
  const s = single(device);
  device.queueWrite(QueueAffinity.ANY, Fence.empty, s.fence, bytes, {
    buffer,
    offset,
    length: bytes.byteLength,
  });
  const result = await outcome(s.semaphore, 1, 'queueWrite');
  if (result !== 'ok') throw result;
}

/** Deterministic bytes for a buffer's contents: byte i = (seed + i * 7) mod 256. */
export function pattern(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (seed + i * 7) & 0xff;
  return out;
}

/** Asserts `error` is a KeelError with `code` (the message is shown on mismatch). */
export function expectCode(error: unknown, code: ErrorCode, what: string): asserts error is KeelError {
  expect(KeelError.is(error), `${what}: expected a KeelError ${code}, got ${String(error)}`).toBe(true);
  expect((error as KeelError).code, `${what}: ${(error as KeelError).message}`).toBe(code);
}

/**
 * Asserts `error` is ABORTED and its cause chain (through ABORTED links, at most `maxDepth`) ends at
 * an error with the code and message of `root`.
 */
export function expectAbortedBy(error: unknown, root: KeelError, what: string, maxDepth = 200): void {
  expectCode(error, ErrorCode.ABORTED, what);
  let link: unknown = error;
  for (let depth = 0; depth <= maxDepth; depth++) {
    if (!KeelError.is(link)) break;
    if (link.code === root.code && link.message === root.message) return;
    if (link.code !== ErrorCode.ABORTED) break;
    link = link.cause;
  }
  expect.fail(
    `${what}: the cause chain of ${(error as KeelError).message} does not end at "${root.message}"`,
  );
}

/** Asserts that a new device of the backend opens and runs a write and a read-back correctly. */
export async function expectFreshDeviceWorks(create: () => Promise<Device>): Promise<void> {
  const device = await bounded(create(), 'creating a fresh device');
  try {
    const buffer = device.createBuffer({ byteLength: 256, usage: STORAGE });
    const bytes = pattern(256, 99);
    await writeBytes(device, buffer, bytes);
    expect(await readBytes(device, buffer)).toEqual(bytes);
  } finally {
    await bounded(device.destroy(), 'destroying the fresh device');
  }
}

/** Collects `unhandledRejection`, `uncaughtException` and process warnings while `body` runs. */
export async function watchProcess<T>(
  body: () => Promise<T>,
): Promise<{ result: T; unhandled: unknown[]; warnings: Error[] }> {
  const unhandled: unknown[] = [];
  const warnings: Error[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  const onWarning = (warning: Error): void => {
    warnings.push(warning);
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  process.on('warning', onWarning);
  try {
    const result = await body();
    // Let microtask re-throws and rejection tracking run before the listeners go.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { result, unhandled, warnings };
  } finally {
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
    process.off('warning', onWarning);
  }
}

/** Asserts two byte arrays are equal, reporting the first differing index (cheap for large arrays). */
export function expectBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  expect(actual.byteLength, `${what}: length`).toBe(expected.byteLength);
  for (let i = 0; i < actual.byteLength; i++) {
    if (actual[i] !== expected[i]) {
      expect.fail(`${what}: byte ${i} is ${actual[i]}, expected ${expected[i]}`);
    }
  }
}

/**
 * Registers an afterEach that fails a test during which a WebGPU device of the suite reported an
 * uncaptured error (Keel must capture the GPU errors of what it submits; nothing goes to stderr).
 */
export function failOnUncapturedGpuErrors(): void {
  afterEach(() => {
    const errors = uncapturedGpuErrors.splice(0);
    expect(errors, 'uncaptured WebGPU errors').toEqual([]);
  });
}
