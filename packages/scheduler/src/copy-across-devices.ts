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
import { type DirectBufferRef, describeBuffer } from '@keel/hal';
import { resolveRange } from '@keel/hal/driver';
import type { SubmitOptions } from './queue-operation';
import type { Scheduler } from './scheduler';

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
 */
export function copyAcrossDevices(
  scheduler: Scheduler,
  source: DirectBufferRef,
  target: DirectBufferRef,
  options: SubmitOptions = {},
): CrossDeviceCopyPlacement {
  const what = 'copyAcrossDevices';
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
  const staging = new Uint8Array(from.length);
  const staged = Fence.of({ semaphore: sourceDevice.createSemaphore(0), value: 1 });
  const read = scheduler.submit(
    { kind: 'read', source, target: staging },
    { affinity: options.affinity, wait: options.wait, signalFence: staged },
  );
  const write = scheduler.submit(
    { kind: 'write', source: staging, target },
    { affinity: options.affinity, wait: staged, signalFence: options.signalFence, signal: options.signal },
  );
  return { read, write };
}
