/**
 * Helpers the device's test cases share (device-cases.ts, write-cases.ts): a semaphore chain and host
 * writes and reads that wait for their signal.
 */
import { Fence, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, type Device, QueueAffinity } from '@keel/hal';

const Q0 = QueueAffinity.of(0);

/** A semaphore and a counter: `next()` is the fence of its next value, `now()` the current one. */
export class Chain {
  readonly semaphore: Semaphore = new TimelineSemaphore();
  value = 0;
  next(): Fence {
    this.value++;
    return Fence.of({ semaphore: this.semaphore, value: this.value });
  }
  now(): Fence {
    return this.value === 0 ? Fence.empty : Fence.of({ semaphore: this.semaphore, value: this.value });
  }
}

/** queueWrite of all of `bytes` at `offset` of `target` on queue 0, awaited (`timeoutMs` bounds the wait). */
export async function writeAndWait(
  device: Device,
  target: Buffer,
  bytes: ArrayBufferView,
  offset: number,
  timeoutMs: number,
): Promise<void> {
  const done = new Chain();
  device.queueWrite(Q0, Fence.empty, done.next(), bytes, {
    buffer: target,
    offset,
    length: bytes.byteLength,
  });
  await done.now().wait({ timeoutMs });
}

/** queueRead of `length` bytes at `offset` of `source` on queue 0, awaited; returns the bytes. */
export async function readAndWait(
  device: Device,
  source: Buffer,
  offset: number,
  length: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  const done = new Chain();
  device.queueRead(Q0, Fence.empty, done.next(), { buffer: source, offset, length }, out);
  await done.now().wait({ timeoutMs });
  return out;
}
