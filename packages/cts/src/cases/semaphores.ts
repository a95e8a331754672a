/** Semaphores through the queue: signal, wait, cross-queue order, smaller values, failure propagation. */
import { Fence } from '@keel/fence';
import { ErrorCode, KeelError } from '@keel/hal';
import { causedBy, check, checkArrayEqual, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';

const filled = (n: number, v: number) => new Uint8Array(n).fill(v);

export const semaphoreCases = [
  defineCase({
    id: 'semaphore.submit-and-signal',
    title: 'an execute signals its signal fence once its commands ran',
    tags: ['semaphore'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(64);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target), 0x5a, 1);
      cb.end();
      const s = ctx.semaphore();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.empty,
        Fence.of({ semaphore: s, value: 1 }),
        [cb],
        [b.table()],
      );
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      checkEqual(s.value, 1, 'signal payload');
      checkArrayEqual(await ctx.read(target), filled(64, 0x5a), 'target');
    },
  }),
  defineCase({
    id: 'semaphore.submit-behind-wait',
    title: 'an execute behind an unsignalled wait holds its signal until the wait is signalled',
    tags: ['semaphore'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(64);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target), 0x33, 1);
      cb.end();
      const w = ctx.semaphore();
      const s = ctx.semaphore();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: s, value: 1 }),
        [cb],
        [b.table()],
      );
      await delay(20);
      checkEqual(s.value, 0, 'signal payload while the wait is pending');
      checkArrayEqual(await ctx.read(target), filled(64, 0), 'target before the wait is signalled');
      w.signal(1);
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(await ctx.read(target), filled(64, 0x33), 'target after');
    },
  }),
  defineCase({
    id: 'semaphore.cross-queue-wait-before-signal',
    title: 'an operation on one queue waits for a signal submitted later on another queue',
    tags: ['semaphore', 'multi-queue'],
    recordsCommands: true,
    async run(ctx) {
      const a = ctx.buffer(256);
      const c = ctx.buffer(256);
      const s = ctx.semaphore();
      // Submitted first on queue 1: copy a → c once s reaches 1.
      const b1 = ctx.binder();
      const copy = ctx.record();
      copy.copy(b1.ref(a, 0, 256), b1.ref(c, 0, 256));
      copy.end();
      ctx.device.queueExecute(
        ctx.queue(1),
        Fence.of({ semaphore: s, value: 1 }),
        Fence.of({ semaphore: s, value: 2 }),
        [copy],
        [b1.table()],
      );
      await delay(5);
      checkEqual(s.value, 0, 'payload before the signalling submission');
      // Submitted second on queue 0: fill a, signal 1.
      const b0 = ctx.binder();
      const fill = ctx.record();
      fill.fill(b0.ref(a), 0xa1b2c3d4, 4);
      fill.end();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.empty,
        Fence.of({ semaphore: s, value: 1 }),
        [fill],
        [b0.table()],
      );
      await s.wait(2, { timeoutMs: ctx.timeoutMs });
      const expected = new Uint32Array(64).fill(0xa1b2c3d4);
      checkArrayEqual(await ctx.readU32(c), expected, 'copy target');
    },
  }),
  defineCase({
    id: 'semaphore.wait-smaller-values',
    title: 'waits on values at or below the payload are already satisfied',
    tags: ['semaphore'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(16);
      const s = ctx.semaphore();
      s.signal(5);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target), 7, 1);
      cb.end();
      const done = ctx.semaphore();
      const b2 = ctx.semaphore();
      const b3 = ctx.semaphore();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.of({ semaphore: s, value: 3 }),
        Fence.of({ semaphore: done, value: 1 }),
        [cb],
        [b.table()],
      );
      // Each operation signals its own timeline: unordered operations must not share one.
      ctx.device.queueBarrier(
        ctx.queue(1),
        Fence.of({ semaphore: s, value: 5 }).with(done, 1),
        Fence.of({ semaphore: b2, value: 1 }),
      );
      ctx.device.queueBarrier(
        ctx.queue(0),
        Fence.of({ semaphore: s, value: 0 }),
        Fence.of({ semaphore: b3, value: 1 }),
      );
      await Fence.of(
        { semaphore: done, value: 1 },
        { semaphore: b2, value: 1 },
        { semaphore: b3, value: 1 },
      ).wait({
        timeoutMs: ctx.timeoutMs,
      });
      checkArrayEqual(await ctx.read(target), filled(16, 7), 'target');
    },
  }),
  defineCase({
    id: 'semaphore.failed-wait-aborts',
    title: 'a failed wait semaphore fails the signal with ABORTED and the original cause; nothing runs',
    tags: ['semaphore'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(32);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target), 0xff, 1);
      cb.end();
      const w = ctx.semaphore();
      const s = ctx.semaphore();
      const t = ctx.semaphore();
      ctx.device.queueExecute(
        ctx.queue(0),
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: s, value: 1 }),
        [cb],
        [b.table()],
      );
      // A transfer behind the same wait, and a chain behind the failed signal.
      ctx.device.queueFill(
        ctx.queue(1),
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: t, value: 1 }),
        { buffer: target },
        1,
        1,
      );
      const u = ctx.semaphore();
      ctx.device.queueBarrier(
        ctx.queue(0),
        Fence.of({ semaphore: s, value: 1 }),
        Fence.of({ semaphore: u, value: 1 }),
      );
      const cause = new KeelError(ErrorCode.DATA_LOSS, 'cts: the producer failed');
      w.fail(cause);
      for (const [name, sem] of [
        ['execute signal', s],
        ['fill signal', t],
        ['chained barrier signal', u],
      ] as const) {
        let failure: KeelError | undefined;
        try {
          await sem.wait(1, { timeoutMs: ctx.timeoutMs });
        } catch (error) {
          failure = sem.failure;
          check(KeelError.is(error), `${name}: wait rejects with a KeelError`);
        }
        check(failure !== undefined, `${name}: the semaphore failed`);
        checkEqual(failure.code, ErrorCode.ABORTED, `${name}: failure code`);
        check(causedBy(failure, cause), `${name}: the failure's cause chain holds the original error`);
      }
      checkArrayEqual(await ctx.read(target), filled(32, 0), 'target (nothing ran)');
    },
  }),
];
