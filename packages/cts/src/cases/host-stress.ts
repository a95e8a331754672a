/** Host calls and stress: ordering of host callbacks, a throwing callback, many submits, many commands. */
import { Fence } from '@keel/fence';
import { ErrorCode, KeelError } from '@keel/hal';
import { check, checkArrayEqual, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';

export const hostCallCases = [
  defineCase({
    id: 'host-call.ordered-by-fences',
    title: 'a host call runs after its wait and signals once it returned (sync and async callbacks)',
    tags: ['host-call'],
    recordsCommands: false,
    async run(ctx) {
      const target = ctx.buffer(16);
      const s = ctx.semaphore();
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const gate = ctx.semaphore();
      const events: string[] = [];
      ctx.device.queueFill(
        ctx.queue(0),
        Fence.of({ semaphore: gate, value: 1 }),
        at(1),
        { buffer: target },
        9,
        1,
      );
      ctx.device.queueHostCall(ctx.queue(1), at(1), at(2), () => {
        events.push(`sync sees payload ${s.value}`);
      });
      ctx.device.queueHostCall(ctx.queue(0), at(2), at(3), async () => {
        events.push('async start');
        await delay(10);
        events.push(`async end, payload ${s.value}`);
      });
      ctx.device.queueBarrier(ctx.queue(1), at(3), at(4));
      await delay(5);
      checkEqual(events.length, 0, 'no host call before its wait');
      gate.signal(1);
      await s.wait(4, { timeoutMs: ctx.timeoutMs });
      checkEqual(events.join(' | '), 'sync sees payload 1 | async start | async end, payload 2', 'events');
    },
  }),
  defineCase({
    id: 'host-call.throwing-fails-signal',
    title: 'a host call that throws (or rejects) fails its signal; later work behind it is aborted',
    tags: ['host-call'],
    recordsCommands: false,
    async run(ctx) {
      const s = ctx.semaphore();
      const t = ctx.semaphore();
      const u = ctx.semaphore();
      ctx.device.queueHostCall(ctx.queue(0), Fence.empty, Fence.of({ semaphore: s, value: 1 }), () => {
        throw new Error('cts: host call exploded');
      });
      ctx.device.queueHostCall(ctx.queue(0), Fence.empty, Fence.of({ semaphore: t, value: 1 }), async () => {
        await delay(1);
        throw new KeelError(ErrorCode.DATA_LOSS, 'cts: async host call rejected');
      });
      ctx.device.queueBarrier(
        ctx.queue(1),
        Fence.of({ semaphore: s, value: 1 }),
        Fence.of({ semaphore: u, value: 1 }),
      );
      for (const [name, sem, text] of [
        ['throwing', s, 'exploded'],
        ['rejecting', t, 'rejected'],
      ] as const) {
        let failed = false;
        try {
          await sem.wait(1, { timeoutMs: ctx.timeoutMs });
        } catch {
          failed = true;
        }
        check(failed, `${name} host call: its signal failed`);
        const failure = sem.failure;
        check(failure !== undefined && KeelError.is(failure), `${name}: the failure is a KeelError`);
        const messages = `${failure.message} ${String((failure.cause as Error | undefined)?.message ?? '')}`;
        check(messages.includes(text), `${name}: the failure carries the callback's error (${messages})`);
      }
      let aborted = false;
      try {
        await u.wait(1, { timeoutMs: ctx.timeoutMs });
      } catch {
        aborted = u.failure?.code === ErrorCode.ABORTED;
      }
      check(aborted, 'work behind the failed host call is aborted');
    },
  }),
];

export const stressCases = [
  defineCase({
    id: 'stress.rapid-one-shot-submits',
    title: '200 one-shot command buffers submitted back to back',
    tags: ['stress'],
    recordsCommands: true,
    async run(ctx) {
      const out = ctx.buffer(800);
      const s = ctx.semaphore();
      for (let i = 0; i < 200; i++) {
        const b = ctx.binder();
        const cb = ctx.record();
        cb.fill(b.ref(out, 4 * i, 4), i * 3 + 1, 4);
        cb.end();
        ctx.device.queueExecute(
          ctx.queue(i),
          Fence.of({ semaphore: s, value: i }),
          Fence.of({ semaphore: s, value: i + 1 }),
          [cb],
          [b.table()],
        );
      }
      await s.wait(200, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(
        await ctx.readU32(out),
        Uint32Array.from({ length: 200 }, (_, i) => i * 3 + 1),
        'words',
      );
    },
  }),
  defineCase({
    id: 'stress.ten-thousand-commands',
    title: 'one command buffer of 10 000 commands',
    tags: ['stress'],
    recordsCommands: true,
    async run(ctx) {
      const n = 10_000;
      const out = ctx.buffer(4 * n);
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      for (let i = 0; i < n; i++) cb.fill(b.ref(out, 4 * i, 4), i, 4);
      cb.end();
      checkEqual(cb.commandCount, n, 'commandCount');
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(
        await ctx.readU32(out),
        Uint32Array.from({ length: n }, (_, i) => i),
        'words',
      );
    },
  }),
];
