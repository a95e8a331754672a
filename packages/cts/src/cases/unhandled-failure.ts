/**
 * Undeliverable failures (hal's `onUnhandledFailure` device option): an operation's failure that none
 * of its signal timepoints can deliver (no signal fence, or every signal value already passed) reaches
 * the hook with the device's and the operation's names; failures a pending timepoint delivers, ABORTED
 * propagation from a failed wait, and failures of destroy are not reported. Host calls make the
 * failures, so every device is checked the same way.
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { QueueAffinity, type UnhandledFailureContext } from '@keel/hal';
import { causedBy, check, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';

interface Seen {
  readonly error: KeelError;
  readonly context: UnhandledFailureContext;
}

export const unhandledFailureCases = [
  defineCase({
    id: 'failure.unhandled-reported',
    title:
      'onUnhandledFailure hears failures no signal timepoint can deliver, and nothing else (delivered, ABORTED, destroy)',
    tags: ['host-call', 'lifecycle'],
    recordsCommands: false,
    async run(ctx, extra) {
      const seen: Seen[] = [];
      const handle = await extra.createDevice({
        onUnhandledFailure: (error, context) => {
          seen.push({ error, context });
        },
      });
      const d = handle.device;
      const any = QueueAffinity.ANY;
      const noSignal = new Error('cts: unhandled, no signal fence');
      const passedValue = new KeelError(ErrorCode.DATA_LOSS, 'cts: unhandled, signal value already passed');
      try {
        const passed = d.createSemaphore(5);
        const s = d.createSemaphore(0);
        const gate = d.createSemaphore(0);
        d.queueHostCall(any, Fence.empty, Fence.empty, () => {
          throw noSignal;
        });
        d.queueHostCall(any, Fence.empty, Fence.of({ semaphore: passed, value: 3 }), async () => {
          await delay(1);
          throw passedValue;
        });
        // Delivered through a pending timepoint: not reported.
        d.queueHostCall(any, Fence.empty, Fence.of({ semaphore: s, value: 1 }), () => {
          throw new Error('cts: delivered');
        });
        // Waits on the failed timepoint: ABORTED with no signal of its own, not reported.
        d.queueBarrier(any, Fence.of({ semaphore: s, value: 1 }), Fence.empty);
        // Still pending at destroy (no signal): its UNAVAILABLE is the device's, not reported.
        d.queueHostCall(any, Fence.of({ semaphore: gate, value: 1 }), Fence.empty, () => {});
        let failed = false;
        try {
          await s.wait(1, { timeoutMs: ctx.timeoutMs });
        } catch {
          failed = true;
        }
        check(failed, 'the delivered failure fails its signal');
        for (let waited = 0; seen.length < 2 && waited < ctx.timeoutMs; waited += 5) await delay(5);
        await delay(20);
      } finally {
        await d.destroy();
      }
      await delay(10);
      const messages = seen.map((s) => s.error.message).join(' | ');
      checkEqual(seen.length, 2, `undeliverable failures reported (${messages})`);
      const first = seen.find((s) => causedBy(s.error, noSignal));
      const second = seen.find((s) => causedBy(s.error, passedValue));
      check(first !== undefined, `the failure without a signal fence is reported (${messages})`);
      check(second !== undefined, `the failure whose signal value had passed is reported (${messages})`);
      check(KeelError.is(first.error), 'a thrown Error reaches the hook as a KeelError');
      checkEqual(second.error.code, ErrorCode.DATA_LOSS, 'a KeelError reaches the hook with its code');
      for (const { context } of seen) {
        check(
          typeof context.device === 'string' && context.device.length > 0,
          `context.device names the device (${context.device})`,
        );
        check(
          typeof context.operation === 'string' && context.operation.includes('queueHostCall'),
          `context.operation names the operation (${context.operation})`,
        );
      }
    },
  }),
];
