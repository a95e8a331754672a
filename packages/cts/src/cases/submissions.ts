/**
 * Submissions (IREE's command_buffer, semaphore_submission and dispatch_reuse classes): executes with
 * nothing to run still signal (and still wait), the command buffers of one queueExecute run in order, a
 * reusable command buffer listed twice runs twice, and an indirect dispatch reads its count at each
 * replay (zero included).
 */
import { Fence } from '@keel/fence';
import { type BindingTable, type Buffer, type BufferRef, BufferUsage, type CommandBuffer } from '@keel/hal';
import { checkArrayEqual, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';
import { chain, readAll, writeAll } from './chain';
import { checkWorkgroupIds } from './dispatch';
import { ramp } from './transfers';

export const submissionCases = [
  defineCase({
    id: 'submission.execute-nothing',
    title:
      'queueExecute with no command buffers, or only empty ones, signals its fence (after its wait, not before)',
    tags: ['semaphore'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const q = ctx.queue(0);
      const empty = (): CommandBuffer => {
        const cb = ctx.record();
        cb.end();
        return cb;
      };
      const none = ctx.fresh();
      d.queueExecute(q, Fence.empty, none.fence, []);
      await ctx.wait(none.fence);
      checkEqual(none.semaphore.value, 1, 'payload after an execute of no command buffers');
      const one = ctx.fresh();
      d.queueExecute(q, Fence.empty, one.fence, [empty()]);
      await ctx.wait(one.fence);
      checkEqual(one.semaphore.value, 1, 'payload after an execute of one empty command buffer');
      const two = ctx.fresh();
      d.queueExecute(q, Fence.empty, two.fence, [empty(), empty()], [undefined, []]);
      await ctx.wait(two.fence);
      checkEqual(two.semaphore.value, 1, 'payload after an execute of two empty command buffers');
      // Behind a wait, an execute of nothing still waits for it.
      const gate = ctx.fresh();
      const held = ctx.fresh();
      const heldEmpty = ctx.fresh();
      d.queueExecute(ctx.queue(1), gate.fence, held.fence, []);
      d.queueExecute(q, gate.fence, heldEmpty.fence, [empty()]);
      await delay(10);
      checkEqual(held.semaphore.value, 0, 'an execute of no command buffers behind an unsignalled wait');
      checkEqual(
        heldEmpty.semaphore.value,
        0,
        'an execute of an empty command buffer behind an unsignalled wait',
      );
      gate.semaphore.signal(1);
      await ctx.wait(Fence.join(held.fence, heldEmpty.fence));
    },
  }),
  defineCase({
    id: 'submission.command-buffers-in-order',
    title:
      'the command buffers of one queueExecute run in order without barriers between them (fill → copy → fill → copy)',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const n = 256 * 1024; // large enough to be split across workers where a device does that
      const a = ctx.buffer(n);
      const c = ctx.buffer(n);
      const e = ctx.buffer(n);
      const cbs: CommandBuffer[] = [];
      const tables: (BindingTable | undefined)[] = [];
      const each = (
        record: (cb: CommandBuffer, ref: (buffer: Buffer, length?: number) => BufferRef) => void,
      ) => {
        const b = ctx.binder();
        const cb = ctx.record();
        record(cb, (buffer, length) => b.ref(buffer, 0, length));
        cb.end();
        cbs.push(cb);
        tables.push(b.table());
      };
      each((cb, ref) => cb.fill(ref(a), 0x11111111, 4));
      each((cb, ref) => cb.copy(ref(a, n), ref(c)));
      each((cb, ref) => cb.fill(ref(a), 0x22222222, 4));
      each((cb, ref) => cb.copy(ref(c, n), ref(e)));
      await ctx.execute(cbs, tables);
      const [outA, outC, outE] = await readAll(ctx, [a, c, e]);
      checkArrayEqual(outA!, new Uint8Array(n).fill(0x22), 'a: the third command buffer ran last on it');
      checkArrayEqual(outC!, new Uint8Array(n).fill(0x11), 'c: the second saw the first, not the third');
      checkArrayEqual(outE!, new Uint8Array(n).fill(0x11), 'e: the fourth saw the second');
    },
  }),
  defineCase({
    id: 'submission.reusable-listed-twice',
    title:
      'a reusable command buffer listed twice in one queueExecute runs twice, the second run after the first (slots: also with two tables)',
    tags: ['reuse', 'transfer'],
    recordsCommands: true,
    async run(ctx) {
      // The command buffer shifts its buffer left by 4 bytes (through a scratch buffer): each run shows.
      const shifted = (bytes: Uint8Array, times: number) => {
        const out = bytes.slice();
        for (let t = 0; t < times; t++) out.copyWithin(0, 4, 64);
        return out;
      };
      const x = ctx.buffer(64);
      const scratch = ctx.buffer(64);
      const data = ramp(64, 21);
      await ctx.write(x, data);
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      cb.copy(b.ref(x, 4, 60), b.ref(scratch, 0, 60));
      cb.barrier();
      cb.copy(b.ref(scratch, 0, 60), b.ref(x, 0, 60));
      cb.end();
      const table = b.table();
      await ctx.execute([cb, cb], [table, table]);
      checkArrayEqual(
        await ctx.read(x),
        shifted(data, 2),
        'x after one execute listing the command buffer twice',
      );
      if (b.mode === 'slots') {
        // Two tables: each listing runs on its own buffers, once.
        const y = ctx.buffer(64);
        const other = ctx.buffer(64);
        const dataY = ramp(64, 99);
        await writeAll(ctx, [
          [x, data],
          [y, dataY],
        ]);
        await ctx.execute([cb, cb], [b.tableFor([x, scratch]), b.tableFor([y, other])]);
        const [outX, outY] = await readAll(ctx, [x, y]);
        checkArrayEqual(outX!, shifted(data, 1), 'x (first listing, its own table)');
        checkArrayEqual(outY!, shifted(dataY, 1), 'y (second listing, its own table)');
      }
    },
  }),
  defineCase({
    id: 'dispatch.indirect-count-per-replay',
    title:
      'a reusable indirect dispatch reads its count (at offset 4 of its buffer or slot) at each replay: 3·1·1, 0·1·1, 2·2·1, 2·1·0',
    tags: ['dispatch', 'reuse'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('workgroupIds');
      const params = ctx.buffer(32, BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS);
      const out = ctx.buffer(4 * 4 * 8);
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      cb.dispatch(exe, 'workgroup_ids', { indirect: b.ref(params, 4, 12), bindings: [b.ref(out)] });
      cb.end();
      const sentinel = 0x5eed5eed;
      const counts = [
        [3, 1, 1],
        [0, 1, 1],
        [2, 2, 1],
        [2, 1, 0],
      ] as const;
      for (const count of counts) {
        // Guard words around the count: a dispatch that reads from offset 0 or 8 sees other counts.
        const words = Uint32Array.from([7, ...count, 7, 7, 7, 7]);
        const c = chain(ctx);
        const write = c.next();
        ctx.device.queueWrite(write.queue, write.wait, write.signal, words, { buffer: params });
        const fill = c.next();
        ctx.device.queueFill(fill.queue, fill.wait, fill.signal, { buffer: out }, sentinel, 4);
        const run = c.next();
        ctx.device.queueExecute(run.queue, run.wait, run.signal, [cb], [b.table()]);
        await c.done();
        await checkWorkgroupIds(ctx, out, count, sentinel);
      }
    },
  }),
];
