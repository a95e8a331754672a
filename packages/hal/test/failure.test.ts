/**
 * hal's failOperation: fails an operation's signal and reports the failure only when no timepoint of
 * it was pending, it is not ABORTED propagation, and the device passed a reporter (not destroyed/lost).
 */
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { abortedBy, failOperation } from '../src/driver/index';

describe('failOperation', () => {
  const boom = new KeelError(ErrorCode.INTERNAL, 'boom');

  function recorder() {
    const calls: [unknown, string][] = [];
    return { calls, report: (error: unknown, operation: string) => calls.push([error, operation]) };
  }

  it('reports a failure with no signal fence, or whose values already passed, and still fails them', () => {
    const { calls, report } = recorder();
    expect(failOperation(Fence.empty, boom, "device 'x' queueFill", report)).toBeUndefined();
    const passed = new TimelineSemaphore(5);
    failOperation(Fence.of({ semaphore: passed, value: 3 }), boom, "device 'x' queueCopy", report);
    expect(calls).toEqual([
      [boom, "device 'x' queueFill"],
      [boom, "device 'x' queueCopy"],
    ]);
    expect(passed.failure).toBe(boom);
  });

  it('does not report a failure a pending timepoint delivers, ABORTED, or without a reporter', () => {
    const { calls, report } = recorder();
    const pending = new TimelineSemaphore(0);
    const passed = new TimelineSemaphore(5);
    const both = Fence.of({ semaphore: passed, value: 1 }, { semaphore: pending, value: 1 });
    failOperation(both, boom, 'op', report);
    expect(pending.failure).toBe(boom);
    failOperation(Fence.empty, abortedBy(boom, 'op'), 'op', report);
    failOperation(Fence.empty, boom, 'op', undefined);
    expect(calls).toEqual([]);
  });
});
