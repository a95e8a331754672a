/**
 * Cross-device moves. A queue operation's buffers live on one device, so the scheduler never copies
 * between devices implicitly: data moves by an explicit copy through host memory — `queueRead` on a
 * target of the source's device into a host staging array, then `queueWrite` from it on a target of the
 * destination's device, ordered by a semaphore of the source device. Both halves go through
 * `Scheduler.submit`, so both follow the placement policy and show up in counters and traces.
 * (@keel/tensor-residency does the same for tensors, with budgets and staleness tracking; the scheduler
 * depends only on hal and fence, so it carries this small helper of its own.)
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import {
  type Buffer,
  BufferUsage,
  type DirectBufferRef,
  describeBuffer,
  describeUsage,
  hasAllBits,
} from '@keel/hal';
import { assertBufferLive, resolveRange } from '@keel/hal/driver';
import type { SubmitOptions } from './queue-operation';
import type { Scheduler } from './scheduler';
import { checkSubmitOptions } from './submit-options';

/** FAILED_PRECONDITION unless `buffer` is live, INVALID_ARGUMENT unless it has the `usage` bits. */
function checkTransferBuffer(buffer: Buffer, usage: number, what: string): void {
  assertBufferLive(buffer, what);
  if (!hasAllBits(buffer.usage, usage)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: ${describeBuffer(buffer)} has usage ${describeUsage(buffer.usage)}, the transfer needs ${describeUsage(usage)}`,
    );
  }
}

/** Where each half of a cross-device copy ran (target indices); `read` is -1 for a same-device copy. */
export interface CrossDeviceCopyPlacement {
  readonly read: number;
  readonly write: number;
}

/**
 * Copies `source` to `target` once `options.wait` is reached and signals `options.signalFence` (or its
 * deprecated alias `options.signal`) when the bytes are in `target`. Ranges are resolved as `Device.queueCopy` does (an omitted length takes the
 * other side's) and must have equal lengths (INVALID_ARGUMENT). On one device this is a
 * single queue copy. Across devices it holds a host staging array of the range's length until the
 * write completes; `options.affinity` constrains both halves (each is intersected with the targets of
 * its buffer's device). A failure of the read fails the write's signal with ABORTED (device contract).
 * Argument errors leave nothing enqueued: the options (as `submit` checks them), both buffers (live,
 * transfer usage) and both halves' placement are checked before the read is submitted.
 */
export function copyAcrossDevices(
  scheduler: Scheduler,
  source: DirectBufferRef,
  target: DirectBufferRef,
  options: SubmitOptions = {},
): CrossDeviceCopyPlacement {
  const what = 'copyAcrossDevices';
  checkSubmitOptions(options, what);
  if (typeof source?.buffer !== 'object' || source.buffer === null) {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: source is not a buffer reference`);
  }
  if (typeof target?.buffer !== 'object' || target.buffer === null) {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: target is not a buffer reference`);
  }
  // As Device.queueCopy: an omitted length takes the other side's, the target's defaults to the source's.
  const from = resolveRange(
    { offset: source.offset, length: source.length ?? target.length },
    source.buffer,
    `${what} source`,
  );
  const to = resolveRange(
    { offset: target.offset, length: target.length ?? from.length },
    target.buffer,
    `${what} target`,
  );
  if (from.length !== to.length) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: source range of ${describeBuffer(source.buffer)} has ${from.length} bytes but target range of ${describeBuffer(target.buffer)} has ${to.length}`,
    );
  }
  const sourceDevice = source.buffer.device;
  if (sourceDevice === target.buffer.device) {
    return { read: -1, write: scheduler.submit({ kind: 'copy', source, target }, options) };
  }
  // Everything the write half needs is checked before the read half is submitted, so that an
  // argument error leaves nothing enqueued (the read would otherwise run for nothing).
  const staging = new Uint8Array(from.length);
  const readOp = { kind: 'read', source, target: staging } as const;
  const writeOp = { kind: 'write', source: staging, target } as const;
  const readOptions: SubmitOptions = { affinity: options.affinity, wait: options.wait };
  const writeOptions = {
    affinity: options.affinity,
    signalFence: options.signalFence,
    signal: options.signal,
  };
  scheduler.checkSubmit(readOp, readOptions);
  scheduler.checkSubmit(writeOp, writeOptions);
  checkTransferBuffer(source.buffer, BufferUsage.TRANSFER_SOURCE, `${what} source`);
  checkTransferBuffer(target.buffer, BufferUsage.TRANSFER_TARGET, `${what} target`);
  const staged = Fence.of({ semaphore: sourceDevice.createSemaphore(0), value: 1 });
  const read = scheduler.submit(readOp, { ...readOptions, signalFence: staged });
  const write = scheduler.submit(writeOp, { ...writeOptions, wait: staged });
  return { read, write };
}
