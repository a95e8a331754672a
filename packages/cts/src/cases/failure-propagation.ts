/**
 * Failure propagation through wait fences (IREE's semaphore_submission failure classes): a wait fence
 * with one failed and one never-signalled timepoint fails at once; a submission whose wait already
 * failed is accepted and fails its signal; a failure reaches every timepoint of a multi-signal fence,
 * host waiters, queueRead (host memory untouched) and queueHostCall (callback not called). Every failed
 * signal is ABORTED with the original failure on its cause chain, and nothing runs.
 */
import { Fence, type Semaphore } from '@keel/fence';
import { ErrorCode, KeelError } from '@keel/hal';
import {
  CtsAssertionError,
  causedBy,
  check,
  checkArrayEqual,
  checkEqual,
  expectRejection,
} from '../assertions';
import { defineCase } from '../case';
import type { CtsContext } from '../context';
import { delay } from '../context';
import { readAll, writeAll } from './chain';
import { ramp } from './transfers';

/** Checks that `semaphore` failed with ABORTED whose cause chain holds `cause` (its waits rejected). */
async function checkAborted(
  ctx: CtsContext,
  semaphore: Semaphore,
  value: number,
  cause: unknown,
  what: string,
) {
  const rejection = await expectRejection(
    semaphore.wait(value, { timeoutMs: ctx.timeoutMs }),
    ErrorCode.ABORTED,
    `${what}: its signal`,
  );
  const failure = semaphore.failure;
  check(failure !== undefined, `${what}: the signal semaphore failed`);
  checkEqual(failure.code, ErrorCode.ABORTED, `${what}: failure code`);
  check(causedBy(failure, cause), `${what}: the failure's cause chain holds the original error`);
  check(causedBy(rejection, cause), `${what}: the wait's rejection leads to the original error`);
}

/** Runs `submit`; a throw at the call fails the case (a failed wait is reported through the signal). */
function submitted(what: string, submit: () => void): void {
  try {
    submit();
  } catch (error) {
    throw new CtsAssertionError(
      `${what}: the call threw ${KeelError.is(error) ? `${error.code}: ${error.message}` : String(error)}; a failed wait must fail the signal instead`,
    );
  }
}

export const failurePropagationCases = [
  defineCase({
    id: 'semaphore.failed-and-pending-wait',
    title:
      'a wait fence with a failed and a never-signalled timepoint fails its operations at once (ABORTED, cause kept), submitted before or after the failure',
    tags: ['semaphore', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const a = ctx.semaphore();
      const b = ctx.semaphore(); // never signalled
      const target = ctx.buffer(16);
      const cb = ctx.record();
      cb.fill({ buffer: target }, 0xee, 1);
      cb.end();
      const both = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 1 });
      const barrier = ctx.fresh();
      const fill = ctx.fresh();
      const execute = ctx.fresh();
      const late = ctx.fresh();
      ctx.device.queueBarrier(ctx.queue(0), both, barrier.fence);
      ctx.device.queueFill(ctx.queue(1), both, fill.fence, { buffer: target }, 0xff, 1);
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.of({ semaphore: b, value: 1 }, { semaphore: a, value: 1 }),
        execute.fence,
        [cb],
      );
      const cause = new KeelError(ErrorCode.DATA_LOSS, 'cts: a failed');
      a.fail(cause);
      ctx.device.queueBarrier(ctx.queue(1), both, late.fence);
      for (const [what, op] of [
        ['a barrier submitted before the failure', barrier],
        ['a fill submitted before the failure', fill],
        ['an execute submitted before the failure', execute],
        ['a barrier submitted after the failure', late],
      ] as const) {
        await checkAborted(ctx, op.semaphore, 1, cause, what);
      }
      checkEqual(b.value, 0, 'payload of the never-signalled semaphore');
      check(b.failure === undefined, 'the never-signalled semaphore did not fail');
      checkArrayEqual(await ctx.read(target), new Uint8Array(16), 'target (nothing ran)');
    },
  }),
  defineCase({
    id: 'semaphore.already-failed-wait',
    title:
      'every queue operation whose wait already failed is accepted without a throw and fails its signal with ABORTED (cause kept); nothing runs',
    tags: ['semaphore', 'transfer', 'host-call'],
    recordsCommands: false,
    async run(ctx) {
      const a = ctx.semaphore();
      const cause = new KeelError(ErrorCode.CANCELLED, 'cts: failed before the submissions');
      a.fail(cause);
      const wait = Fence.of({ semaphore: a, value: 1 });
      const source = ctx.buffer(16);
      const target = ctx.buffer(16);
      const base = ramp(16, 40);
      await writeAll(ctx, [
        [source, ramp(16, 1)],
        [target, base],
      ]);
      const host = new Uint8Array(16).fill(0xcc);
      let called = false;
      const cb = ctx.record();
      cb.fill({ buffer: target }, 0x11, 1);
      cb.end();
      const d = ctx.device;
      const q = ctx.queue(0);
      const ops: readonly (readonly [string, (signal: Fence) => void])[] = [
        ['queueExecute', (s) => d.queueExecute(q, wait, s, [cb])],
        ['queueFill', (s) => d.queueFill(q, wait, s, { buffer: target }, 0x22, 1)],
        ['queueCopy', (s) => d.queueCopy(q, wait, s, { buffer: source }, { buffer: target })],
        ['queueUpdate', (s) => d.queueUpdate(q, wait, s, new Uint8Array(16).fill(0x33), { buffer: target })],
        ['queueWrite', (s) => d.queueWrite(q, wait, s, new Uint8Array(16).fill(0x44), { buffer: target })],
        ['queueRead', (s) => d.queueRead(q, wait, s, { buffer: source }, host)],
        ['queueBarrier', (s) => d.queueBarrier(q, wait, s)],
        [
          'queueHostCall',
          (s) =>
            d.queueHostCall(q, wait, s, () => {
              called = true;
            }),
        ],
      ];
      const signals = ops.map(([what, submit]) => {
        const signal = ctx.fresh();
        submitted(what, () => submit(signal.fence));
        return signal.semaphore;
      });
      for (const [i, [what]] of ops.entries()) await checkAborted(ctx, signals[i]!, 1, cause, what);
      await delay(5);
      check(!called, 'the host call was not called');
      checkArrayEqual(host, new Uint8Array(16).fill(0xcc), 'host memory of the read');
      checkArrayEqual((await readAll(ctx, [target]))[0]!, base, 'target (nothing ran)');
    },
  }),
  defineCase({
    id: 'semaphore.failure-reaches-every-signal',
    title:
      'a failed wait fails every timepoint of a multi-signal execute and rejects host waiters registered before; a queueRead behind it leaves host memory alone, a queueHostCall is not called',
    tags: ['semaphore', 'host-call', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const w = ctx.semaphore();
      const target = ctx.buffer(16);
      await ctx.write(target, new Uint8Array(16).fill(5));
      const cb = ctx.record();
      cb.fill({ buffer: target }, 9, 1);
      cb.end();
      const s1 = ctx.semaphore();
      const s2 = ctx.semaphore();
      const s3 = ctx.semaphore(2);
      const signal = Fence.of(
        { semaphore: s1, value: 1 },
        { semaphore: s2, value: 1 },
        { semaphore: s3, value: 4 },
      );
      const options = { timeoutMs: ctx.timeoutMs };
      const hostWaits = [s1.wait(1, options), s2.wait(1, options), s3.wait(4, options), signal.wait(options)];
      for (const p of hostWaits) p.catch(() => {}); // awaited below
      const gate = Fence.of({ semaphore: w, value: 1 });
      ctx.device.queueExecute(ctx.queue(0), gate, signal, [cb]);
      const host = new Uint8Array(16).fill(0xcc);
      const read = ctx.fresh();
      ctx.device.queueRead(ctx.queue(1), gate, read.fence, { buffer: target }, host);
      let called = false;
      const h1 = ctx.semaphore();
      const h2 = ctx.semaphore();
      ctx.device.queueHostCall(
        ctx.queue(0),
        gate,
        Fence.of({ semaphore: h1, value: 1 }, { semaphore: h2, value: 1 }),
        () => {
          called = true;
        },
      );
      await delay(5);
      const cause = new KeelError(ErrorCode.DATA_LOSS, 'cts: the producer failed');
      w.fail(cause);
      for (const [i, what] of ['s1 at 1', 's2 at 1', 's3 at 4', 'the whole signal fence'].entries()) {
        const rejection = await expectRejection(hostWaits[i]!, ErrorCode.ABORTED, `host waiter on ${what}`);
        check(
          causedBy(rejection, cause),
          `host waiter on ${what}: the rejection leads to the original error`,
        );
      }
      for (const [what, semaphore, value] of [
        ['execute signal s1', s1, 1],
        ['execute signal s2', s2, 1],
        ['execute signal s3 (created at 2)', s3, 4],
        ['queueRead', read.semaphore, 1],
        ['queueHostCall signal h1', h1, 1],
        ['queueHostCall signal h2', h2, 1],
      ] as const) {
        await checkAborted(ctx, semaphore, value, cause, what);
      }
      checkEqual(s3.value, 2, 'payload of s3 (kept at its last value)');
      await delay(5);
      check(!called, 'the host call was not called');
      checkArrayEqual(host, new Uint8Array(16).fill(0xcc), 'host memory of the read');
      checkArrayEqual(await ctx.read(target), new Uint8Array(16).fill(5), 'target (the execute did not run)');
    },
  }),
  defineCase({
    id: 'semaphore.chain-keeps-original-cause',
    title:
      'along a chain of operations (barrier → fill → barrier across queues), every signal fails ABORTED whose cause is the original failure itself, with one "a wait timepoint failed" in its message',
    tags: ['semaphore', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const root = ctx.semaphore();
      const target = ctx.buffer(16);
      const a = ctx.fresh();
      const b = ctx.fresh();
      const c = ctx.fresh();
      ctx.device.queueBarrier(ctx.queue(0), Fence.of({ semaphore: root, value: 1 }), a.fence);
      ctx.device.queueFill(ctx.queue(1), a.fence, b.fence, { buffer: target }, 7, 1);
      ctx.device.queueBarrier(ctx.queue(0), b.fence, c.fence);
      await delay(5);
      const cause = new KeelError(ErrorCode.DATA_LOSS, 'cts: the first producer failed');
      root.fail(cause);
      for (const [what, hop] of [
        ['first hop (barrier)', a],
        ['second hop (fill)', b],
        ['third hop (barrier)', c],
      ] as const) {
        await expectRejection(hop.fence.wait({ timeoutMs: ctx.timeoutMs }), ErrorCode.ABORTED, what);
        const failure = hop.semaphore.failure;
        check(failure !== undefined, `${what}: the signal semaphore failed`);
        checkEqual(failure.code, ErrorCode.ABORTED, `${what}: failure code`);
        check(failure.cause === cause, `${what}: the failure's cause is the original failure itself`);
        checkEqual(
          failure.message.split('a wait timepoint failed').length - 1,
          1,
          `${what}: "a wait timepoint failed" in the message (${failure.message})`,
        );
      }
    },
  }),
];
