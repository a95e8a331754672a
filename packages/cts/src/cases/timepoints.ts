/**
 * Timepoints through the queue (IREE's semaphore_submission classes): wait fences of several timepoints
 * reached out of order, several signal timepoints on one operation with host waiters registered before
 * the submission, one signal that satisfies several earlier waits on lower values, host signals past the
 * waited value, semaphores created at a non-zero value, and signal timepoints something else already
 * passed (the operation runs and leaves them alone).
 */
import { Fence } from '@keel/fence';
import { CtsAssertionError, check, checkArrayEqual, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';

const filled = (n: number, v: number) => new Uint8Array(n).fill(v);

/** A promise's state, readable at any time (to show a host waiter did not resolve early). */
function track(promise: Promise<void>): { readonly settled: () => boolean; readonly done: Promise<void> } {
  let settled = false;
  const done = promise.finally(() => {
    settled = true;
  });
  done.catch(() => {}); // the case awaits `done`; no unhandled rejection before it does
  return { settled: () => settled, done };
}

/** Resolves with `promise`; fails the case when it is not settled within `ms`. */
async function within(ms: number, promise: Promise<void>, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CtsAssertionError(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export const timepointCases = [
  defineCase({
    id: 'semaphore.wait-fence-out-of-order',
    title:
      'an execute waiting on three timepoints reached out of order runs after the last one; its two signal timepoints wake host waiters registered before the submission',
    tags: ['semaphore'],
    recordsCommands: false,
    async run(ctx) {
      // Two rounds with fresh semaphores: whichever timepoint a device would watch alone, in one of them
      // it is reached before the last. Steps: [timepoint index, value]; the last step releases.
      const rounds: readonly (readonly (readonly [0 | 1 | 2, number])[])[] = [
        [
          [2, 1],
          [1, 1],
          [1, 2],
          [0, 1],
        ],
        [
          [0, 1],
          [1, 1],
          [2, 1],
          [1, 2],
        ],
      ];
      const options = { timeoutMs: ctx.timeoutMs };
      for (const [r, steps] of rounds.entries()) {
        const target = ctx.buffer(32);
        const cb = ctx.record();
        cb.fill({ buffer: target }, 0x3c + r, 1);
        cb.end();
        const w = [ctx.semaphore(), ctx.semaphore(), ctx.semaphore()] as const;
        const s1 = ctx.semaphore();
        const s2 = ctx.semaphore();
        const waiters = [
          s1.wait(1, options),
          s2.wait(5, options),
          Fence.of({ semaphore: s2, value: 3 }).wait(options),
        ].map(track);
        ctx.device.queueExecute(
          ctx.queue(0),
          Fence.of(
            { semaphore: w[0], value: 1 },
            { semaphore: w[1], value: 2 },
            { semaphore: w[2], value: 1 },
          ),
          Fence.of({ semaphore: s1, value: 1 }, { semaphore: s2, value: 5 }),
          [cb],
        );
        for (const [i, [index, value]] of steps.entries()) {
          w[index].signal(value);
          if (i === steps.length - 1) break;
          const what = `round ${r}, after w${index + 1} reached ${value} (step ${i + 1} of ${steps.length})`;
          await delay(10);
          checkEqual(`${s1.value},${s2.value}`, '0,0', `signal payloads ${what}`);
          check(
            waiters.every((t) => !t.settled()),
            `no host waiter settled ${what}`,
          );
          checkArrayEqual(await ctx.read(target), filled(32, 0), `target ${what}`);
        }
        await Promise.all(waiters.map((t) => t.done));
        checkEqual(`${s1.value},${s2.value}`, '1,5', `round ${r}: signal payloads after the last wait`);
        checkArrayEqual(
          await ctx.read(target),
          filled(32, 0x3c + r),
          `round ${r}: target after the last wait`,
        );
      }
    },
  }),
  defineCase({
    id: 'semaphore.signal-satisfies-lower-waits',
    title:
      'one signal to 3 satisfies waits on 2 and 1 submitted before it, on two queues; nothing behind them runs earlier',
    tags: ['semaphore', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const s = ctx.semaphore();
      const x = ctx.buffer(16);
      const y = ctx.buffer(16);
      const doneX = ctx.fresh();
      const doneY = ctx.fresh();
      const barrier = ctx.fresh();
      ctx.device.queueFill(
        ctx.queue(0),
        Fence.of({ semaphore: s, value: 2 }),
        doneX.fence,
        { buffer: x },
        0x22,
        1,
      );
      ctx.device.queueFill(
        ctx.queue(1),
        Fence.of({ semaphore: s, value: 1 }),
        doneY.fence,
        { buffer: y },
        0x11,
        1,
      );
      ctx.device.queueBarrier(ctx.queue(1), Fence.of({ semaphore: s, value: 3 }), barrier.fence);
      await delay(10);
      checkEqual(
        `${doneX.semaphore.value},${doneY.semaphore.value},${barrier.semaphore.value}`,
        '0,0,0',
        'signals before s is signalled',
      );
      checkArrayEqual(await ctx.read(x), filled(16, 0), 'x before s is signalled');
      checkArrayEqual(await ctx.read(y), filled(16, 0), 'y before s is signalled');
      // The signal to 3 comes from the queue, submitted last.
      const cb = ctx.record();
      cb.end();
      ctx.device.queueExecute(ctx.queue(0), Fence.empty, Fence.of({ semaphore: s, value: 3 }), [cb]);
      await ctx.wait(Fence.join(doneX.fence, doneY.fence, barrier.fence));
      checkEqual(s.value, 3, 'payload of s');
      checkArrayEqual(await ctx.read(x), filled(16, 0x22), 'x (waited on 2)');
      checkArrayEqual(await ctx.read(y), filled(16, 0x11), 'y (waited on 1)');
    },
  }),
  defineCase({
    id: 'semaphore.host-signal-past-wait',
    title: 'a host signal past the waited value, made after the submission, releases the operation',
    tags: ['semaphore'],
    recordsCommands: false,
    async run(ctx) {
      const target = ctx.buffer(16);
      const w = ctx.semaphore();
      const done = ctx.fresh();
      const cb = ctx.record();
      cb.fill({ buffer: target }, 0x77, 1);
      cb.end();
      ctx.device.queueExecute(ctx.queue(0), Fence.of({ semaphore: w, value: 1 }), done.fence, [cb]);
      const barrier = ctx.fresh();
      ctx.device.queueBarrier(ctx.queue(1), Fence.of({ semaphore: w, value: 4 }), barrier.fence);
      await delay(5);
      w.signal(7);
      await ctx.wait(Fence.join(done.fence, barrier.fence));
      checkArrayEqual(await ctx.read(target), filled(16, 0x77), 'target');
      checkEqual(w.value, 7, 'payload of the wait semaphore');
    },
  }),
  defineCase({
    id: 'semaphore.nonzero-initial-value',
    title:
      'a semaphore created at 100 satisfies waits up to 100 at once and is signalled to 101 by an execute behind a host wait',
    tags: ['semaphore'],
    recordsCommands: false,
    async run(ctx) {
      const target = ctx.buffer(16);
      const s = ctx.semaphore(100);
      checkEqual(s.value, 100, 'initial payload');
      const reached = ctx.fresh();
      ctx.device.queueBarrier(ctx.queue(1), Fence.of({ semaphore: s, value: 100 }), reached.fence);
      await ctx.wait(reached.fence);
      const w = ctx.semaphore();
      const cb = ctx.record();
      cb.fill({ buffer: target }, 0x65, 1);
      cb.end();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: s, value: 101 }),
        [cb],
      );
      const after = ctx.fresh();
      ctx.device.queueBarrier(ctx.queue(1), Fence.of({ semaphore: s, value: 101 }), after.fence);
      await delay(10);
      checkEqual(s.value, 100, 'payload while the execute waits');
      checkEqual(after.semaphore.value, 0, 'a barrier waiting on 101, before the execute ran');
      w.signal(1);
      await ctx.wait(after.fence);
      checkEqual(s.value, 101, 'payload after the execute');
      checkArrayEqual(await ctx.read(target), filled(16, 0x65), 'target');
    },
  }),
  defineCase({
    id: 'semaphore.signal-already-passed',
    title:
      'an operation whose signal timepoint the host already passed (or reached) still runs, and leaves that semaphore alone',
    tags: ['semaphore', 'host-call'],
    recordsCommands: false,
    async run(ctx) {
      const q = ctx.queue(0);
      const s = ctx.semaphore();
      s.signal(5);
      // An execute signalling s at 3 and a fresh timepoint: the fresh one shows when it ran.
      const target = ctx.buffer(16);
      const cb = ctx.record();
      cb.fill({ buffer: target }, 0x44, 1);
      cb.end();
      const done = ctx.fresh();
      ctx.device.queueExecute(q, Fence.empty, done.fence.with(s, 3), [cb]);
      await ctx.wait(done.fence);
      checkArrayEqual(await ctx.read(target), filled(16, 0x44), 'the execute ran');
      // Host calls whose only signal is s at 2 and at 5 (equal to the payload): the callbacks run.
      for (const value of [2, 5]) {
        let ran!: () => void;
        const called = new Promise<void>((resolve) => {
          ran = resolve;
        });
        ctx.device.queueHostCall(q, Fence.empty, Fence.of({ semaphore: s, value }), () => ran());
        await within(ctx.timeoutMs, called, `a host call signalling s at ${value} (payload 5) ran`);
      }
      // A fill whose only signal is s at 4: poll its target until it ran.
      const polled = ctx.buffer(8);
      ctx.device.queueFill(q, Fence.empty, Fence.of({ semaphore: s, value: 4 }), { buffer: polled }, 0x99, 1);
      const deadline = performance.now() + ctx.timeoutMs;
      let bytes = await ctx.read(polled);
      while (bytes[0] !== 0x99 && performance.now() < deadline) {
        await delay(5);
        bytes = await ctx.read(polled);
      }
      checkArrayEqual(bytes, filled(8, 0x99), 'the fill signalling s at 4 ran');
      await delay(5);
      checkEqual(s.value, 5, 'payload of s (never lowered, never raised)');
      check(s.failure === undefined, `s did not fail (${String(s.failure?.message)})`);
    },
  }),
];
