// Timeline semaphores and fences: wait on several timelines at once, the promise-free `onReached`
// hook, cancellation with an AbortSignal, failure propagation, and `waitAny`. (Across threads:
// examples/worker-fence.mjs.)
import { ErrorCode, Fence, KeelError, TimelineSemaphore, waitAny } from '@keel/fence';

const upload = new TimelineSemaphore(0, { label: 'upload' });
const compute = new TimelineSemaphore(0, { label: 'compute' });

// Work that needs upload ≥ 1 and compute ≥ 3.
const ready = Fence.of({ semaphore: upload, value: 1 }, { semaphore: compute, value: 3 });
const done = ready.wait({ timeoutMs: 1000 });
upload.signal(1);
compute.signal(3);
await done;
if (ready.query() !== 'signaled') throw new Error('fence should be signaled');

// Promise-free hook for hot paths (devices chain queue work with it): runs inside the signal call.
const reached = [];
compute.onReached(4, (error) => reached.push(error ?? 'compute reached 4'));
compute.signal(4);
if (reached.join() !== 'compute reached 4') throw new Error(`onReached ran ${reached.length} times`);

// Cancel a wait with an AbortSignal (the option is `abortSignal`).
const controller = new AbortController();
const cancelled = upload.wait(5, { abortSignal: controller.signal }).catch((e) => e);
controller.abort('not needed');
const cancel = await cancelled;
if (!KeelError.is(cancel, ErrorCode.CANCELLED) || cancel.cause !== 'not needed') throw cancel;

// waitAny resolves with the index of the first fence reached.
const first = waitAny([
  Fence.of({ semaphore: upload, value: 2 }),
  Fence.of({ semaphore: compute, value: 5 }),
]);
compute.signal(5);
if ((await first) !== 1) throw new Error('compute@5 should win');

// A failure travels to every waiter: waits reject with ABORTED, the cause is the failure.
const waiting = Fence.of({ semaphore: upload, value: 9 }).wait();
upload.fail(new KeelError(ErrorCode.DATA_LOSS, 'upload: source went away'));
const aborted = await waiting.catch((e) => e);
if (!KeelError.is(aborted, ErrorCode.ABORTED) || !KeelError.is(aborted.cause, ErrorCode.DATA_LOSS))
  throw aborted;

console.log(`fences ok: ${aborted.message}`);
