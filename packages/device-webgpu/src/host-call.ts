/**
 * Running the callback of a WebGPU device's host call (queueHostCall; op-scheduler.ts runs it in a
 * microtask once its waits are reached): `runHostCall(op)` calls `op.callback` once and hands the outcome
 * to the record's bound callbacks: `onHostCallDone()` when it returns anything but a thenable, or when its
 * thenable fulfils; `onHostCallFailed(error)` when it throws or its thenable rejects (with the thrown or
 * rejection value, `undefined` included: the scheduler turns it into a failure naming the operation).
 *
 * Promises: exactly one of the two callbacks is called per run, synchronously for a synchronous
 * outcome; nothing is thrown; no closure is made (the callbacks are bound once per record).
 */
import type { QueueOp } from './queue-op';

export function runHostCall(op: QueueOp): void {
  let result: void | Promise<void>;
  try {
    result = (op.callback as () => void | Promise<void>)();
  } catch (error) {
    op.onHostCallFailed(error);
    return;
  }
  if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
    (result as Promise<void>).then(op.onHostCallDone, op.onHostCallFailed);
  } else {
    op.onHostCallDone();
  }
}
