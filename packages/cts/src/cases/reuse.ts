/**
 * Reuse: resubmission with new bindings, mixed refs, pipelined transient memory, lifetime of tables,
 * high slots of sparse tables.
 */
import { Fence } from '@keel/fence';
import { type Buffer, BufferUsage, type CommandBuffer } from '@keel/hal';
import { check, checkArrayEqual } from '../assertions';
import { defineCase } from '../case';
import { delay, f32Bits } from '../context';

export const reuseCases = [
  defineCase({
    id: 'reuse.resubmit-different-bindings',
    title: 'a reusable command buffer resubmitted with different bindings (direct: the same, twice)',
    tags: ['reuse', 'dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('scaleAndOffset');
      const n = 200;
      const x = ctx.buffer(n * 4);
      const y = ctx.buffer(n * 4);
      const data = Float32Array.from({ length: n }, (_, i) => i);
      await ctx.write(x, data);
      await ctx.write(y, data);
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      cb.dispatch(exe, 'scale_and_offset', {
        workload: [n],
        constants: [f32Bits(2), f32Bits(1), n],
        bindings: [b.ref(x)],
      });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      if (b.mode === 'slots') {
        await ctx.execute([cb], [b.tableFor([y])]);
        checkArrayEqual(
          await ctx.readF32(x),
          Float32Array.from(data, (v) => 2 * v + 1),
          'first binding',
        );
        checkArrayEqual(
          await ctx.readF32(y),
          Float32Array.from(data, (v) => 2 * v + 1),
          'second binding',
        );
        // And back to the first one, with a sub-range binding (offset/length on the table entry).
        await ctx.execute([cb], [[{ buffer: x, offset: 0, length: 64 * 4 }]]);
        const expected = Float32Array.from(data, (v, i) => (i < 64 ? 2 * (2 * v + 1) + 1 : 2 * v + 1));
        checkArrayEqual(await ctx.readF32(x), expected, 'first binding, sub-range');
      } else {
        await ctx.execute([cb]);
        checkArrayEqual(
          await ctx.readF32(x),
          Float32Array.from(data, (v) => 2 * (2 * v + 1) + 1),
          'applied twice',
        );
      }
    },
  }),
  defineCase({
    id: 'reuse.mixed-direct-and-indirect',
    title: 'one dispatch mixing direct refs and binding-table slots',
    tags: ['reuse', 'dispatch'],
    recordsCommands: false,
    async run(ctx) {
      const exe = await ctx.executable('add');
      const n = 130;
      const a = ctx.buffer(n * 4);
      const b1 = ctx.buffer(n * 4);
      const b2 = ctx.buffer(n * 4);
      const out = ctx.buffer(n * 4);
      const av = Float32Array.from({ length: n }, (_, i) => i);
      await ctx.write(a, av);
      await ctx.write(
        b1,
        Float32Array.from({ length: n }, () => 0.5),
      );
      await ctx.write(
        b2,
        Float32Array.from({ length: n }, () => 100),
      );
      const cb = ctx.record('reusable');
      cb.dispatch(exe, 'add', {
        workload: [n],
        constants: [n],
        bindings: [{ buffer: a }, { slot: 1 }, { slot: 0, offset: 0 }],
      });
      cb.end();
      await ctx.execute([cb], [[{ buffer: out }, { buffer: b1 }]]);
      checkArrayEqual(
        await ctx.readF32(out),
        Float32Array.from(av, (v) => v + 0.5),
        'with b1',
      );
      await ctx.execute([cb], [[{ buffer: out }, { buffer: b2 }]]);
      checkArrayEqual(
        await ctx.readF32(out),
        Float32Array.from(av, (v) => v + 100),
        'with b2',
      );
    },
  }),
  defineCase({
    id: 'reuse.alloca-execute-dealloca-pipelined',
    title: 'alloca → execute → dealloca pipelined 100 times on one timeline',
    tags: ['reuse', 'alloca', 'stress'],
    recordsCommands: true,
    async run(ctx) {
      const out = ctx.buffer(400);
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      // In slots mode one reusable command buffer serves every iteration; direct mode records each.
      let shared: CommandBuffer | undefined;
      if (ctx.refs === 'slots') {
        shared = ctx.record('reusable');
        shared.fill({ slot: 0 }, 0, 4);
        shared.barrier();
        shared.update(new Uint32Array([0xfeed0000]), { slot: 0, offset: 4, length: 4 });
        shared.barrier();
        shared.copy({ slot: 0, offset: 4, length: 4 }, { slot: 1 });
        shared.end();
      }
      let v = 0;
      for (let i = 0; i < 100; i++) {
        const t = ctx.device.queueAlloca(q, at(v), at(v + 1), { usage: BufferUsage.DEFAULT }, 64);
        let cb: CommandBuffer;
        let table: { buffer: Buffer; offset?: number; length?: number }[] | undefined;
        if (shared !== undefined) {
          cb = shared;
          table = [{ buffer: t }, { buffer: out, offset: 4 * i, length: 4 }];
        } else {
          cb = ctx.record();
          cb.fill({ buffer: t }, 0, 4);
          cb.barrier();
          cb.update(new Uint32Array([0xfeed0000 + i]), { buffer: t, offset: 4, length: 4 });
          cb.barrier();
          cb.copy({ buffer: t, offset: 4, length: 4 }, { buffer: out, offset: 4 * i, length: 4 });
          cb.end();
        }
        ctx.device.queueExecute(q, at(v + 1), at(v + 2), [cb], [table]);
        ctx.device.queueDealloca(q, at(v + 2), at(v + 3), t);
        v += 3;
      }
      await s.wait(v, { timeoutMs: ctx.timeoutMs });
      const expected = Uint32Array.from({ length: 100 }, (_, i) => (shared ? 0xfeed0000 : 0xfeed0000 + i));
      checkArrayEqual(await ctx.readU32(out), expected, 'one word per iteration');
    },
  }),
  defineCase({
    id: 'reuse.table-kept-alive',
    title: 'the binding table, its buffers and the command buffer live until completion without the caller',
    tags: ['reuse'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('negateDouble');
      const n = 256;
      const out = ctx.buffer(n * 4);
      const w = ctx.semaphore();
      const s = ctx.semaphore();
      // Everything but `out` goes out of scope (and the input buffer is destroyed) before the wait.
      await (async () => {
        const input = ctx.device.createBuffer({
          byteLength: n * 4,
          usage: BufferUsage.DEFAULT,
          label: 'dropped input',
        });
        await ctx.write(
          input,
          Int32Array.from({ length: n }, (_, i) => i + 1),
        );
        const b = ctx.binder();
        const cb = ctx.record();
        cb.dispatch(exe, 'double', { workload: [n], constants: [n], bindings: [b.ref(input), b.ref(out)] });
        cb.end();
        const table = b.table();
        ctx.device.queueExecute(
          ctx.queue(0),
          Fence.of({ semaphore: w, value: 1 }),
          Fence.of({ semaphore: s, value: 1 }),
          [cb],
          table === undefined ? undefined : [table],
        );
        input.destroy();
        if (table !== undefined) (table as unknown[]).length = 0; // the caller reuses its array
      })();
      // Tempt the device to hand the input's memory out again, and collect garbage if we may.
      const churn: Buffer[] = [];
      for (let i = 0; i < 8; i++) churn.push(ctx.buffer(n * 4));
      for (const c of churn) await ctx.write(c, new Uint8Array(n * 4).fill(0xee));
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      await delay(5);
      w.signal(1);
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(
        await ctx.readI32(out),
        Int32Array.from({ length: n }, (_, i) => 2 * (i + 1)),
        'output',
      );
    },
  }),
  defineCase({
    id: 'reuse.table-snapshot-at-call',
    title:
      'a binding table is taken as it was at the call: entries changed afterwards (buffer, offset, length) do not reach an execution that waits',
    tags: ['reuse'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(64);
      const other = ctx.buffer(64);
      const cb = ctx.record('reusable');
      cb.fill({ slot: 0 }, 0x5a, 1);
      cb.end();
      const gate = ctx.fresh();
      const done = ctx.fresh();
      const entry: { buffer: Buffer; offset?: number; length?: number } = {
        buffer: target,
        offset: 16,
        length: 32,
      };
      const table = [entry];
      // The execute waits on a host semaphore: it runs after the changes below.
      ctx.device.queueExecute(ctx.queue(0), gate.fence, done.fence, [cb], [table]);
      entry.buffer = other;
      entry.offset = 0;
      entry.length = 8;
      table[0] = { buffer: other };
      gate.semaphore.signal(1);
      await ctx.wait(done.fence);
      const expected = new Uint8Array(64);
      expected.fill(0x5a, 16, 48);
      checkArrayEqual(await ctx.read(target), expected, 'the buffer and range the table named at the call');
      checkArrayEqual(await ctx.read(other), new Uint8Array(64), 'the buffer named after the call');
    },
  }),
  defineCase({
    id: 'reuse.high-slots',
    title:
      'slots 2^30 and 2^31 - 2 of a sparse table (length 2^31 - 1) cost what the slots used cost: run at once, also behind a host semaphore',
    tags: ['reuse', 'dispatch'],
    recordsCommands: false,
    async run(ctx) {
      // Any slot below the capacity (< 2^31) is legal; a table for it is a sparse array. Recording,
      // validating, snapshotting and resolving it must not take time or memory in the slot number.
      const started = performance.now();
      const high = 2 ** 30;
      const top = 2 ** 31 - 2;
      const exe = await ctx.executable('add');
      const n = 16;
      const a = ctx.buffer(n * 4);
      const b = ctx.buffer(n * 4);
      const out = ctx.buffer(n * 4);
      const other = ctx.buffer(n * 4);
      await ctx.write(
        a,
        Float32Array.from({ length: n }, (_, i) => i),
      );
      await ctx.write(
        b,
        Float32Array.from({ length: n }, () => 100),
      );
      const cb = ctx.device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 ** 31 - 1 });
      cb.begin();
      cb.dispatch(exe, 'add', {
        workload: [n],
        constants: [n],
        bindings: [{ slot: high }, { slot: 1 }, { slot: top }],
      });
      cb.end();
      const table: { buffer: Buffer }[] = [];
      table[1] = { buffer: b };
      table[high] = { buffer: a };
      table[top] = { buffer: out };
      const gate = ctx.fresh();
      const done = ctx.fresh();
      // Waits on a host semaphore: the device keeps the table's entries (the caller changes it below).
      ctx.device.queueExecute(ctx.queue(0), gate.fence, done.fence, [cb], [table]);
      table[top] = { buffer: other };
      gate.semaphore.signal(1);
      await ctx.wait(done.fence);
      const sum = Float32Array.from({ length: n }, (_, i) => i + 100);
      checkArrayEqual(await ctx.readF32(out), sum, 'output through slot 2^31 - 2 as bound at the call');
      await ctx.execute([cb], [table]);
      checkArrayEqual(await ctx.readF32(other), sum, 'output through slot 2^31 - 2, rebound');
      const elapsed = performance.now() - started;
      check(
        elapsed < ctx.timeoutMs,
        `high slots took ${Math.round(elapsed)} ms (limit ${ctx.timeoutMs} ms): cost grows with the slot number`,
      );
    },
  }),
];
