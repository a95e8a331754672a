/** Transfers: fill patterns, update, copy, chains, barriers, host reads and writes. */
import { Fence } from '@keel/fence';
import { checkArrayEqual, checkEqual } from '../assertions';
import { defineCase } from '../case';
import { delay } from '../context';

/** Expected bytes of `base` after filling [offset, offset + length) with a little-endian pattern. */
export function expectFill(
  base: Uint8Array,
  offset: number,
  length: number,
  pattern: number,
  patternLength: number,
): Uint8Array {
  const out = base.slice();
  for (let i = 0; i < length; i++) out[offset + i] = (pattern >>> (8 * (i % patternLength))) & 0xff;
  return out;
}

/** `n` bytes of a ramp that differs by `seed` (never constant, so a shifted or stale byte shows). */
export function ramp(n: number, seed = 0): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff);
}

/** (patternLength, pattern, offset, length) combinations; offsets and lengths are multiples of the pattern. */
const FILLS: readonly (readonly [1 | 2 | 4, number, number, number])[] = [
  [1, 0xa5, 0, 256],
  [1, 0x01, 1, 1],
  [1, 0x7f, 3, 61],
  [2, 0xbeef, 0, 256],
  [2, 0x1234, 2, 6],
  [2, 0xff00, 14, 98],
  [4, 0xdeadbeef, 0, 256],
  [4, 0x01020304, 4, 4],
  [4, 0x80000001, 12, 200],
  [4, 0, 60, 0],
];

export const transferCases = [
  defineCase({
    id: 'transfer.fill-patterns',
    title: 'command-buffer fills of 1-, 2- and 4-byte patterns over sizes, offsets and alignments',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const b = ctx.binder();
      const cb = ctx.record();
      const targets = FILLS.map(([plen, pattern, offset, length], i) => {
        const target = ctx.buffer(256, undefined, `fill ${i}`);
        cb.fill(b.ref(target, offset, length), pattern, plen);
        return target;
      });
      cb.end();
      const base = ramp(256, 3);
      for (const target of targets) await ctx.write(target, base);
      await ctx.execute([cb], [b.table()]);
      for (let i = 0; i < FILLS.length; i++) {
        const [plen, pattern, offset, length] = FILLS[i]!;
        checkArrayEqual(
          await ctx.read(targets[i]!),
          expectFill(base, offset, length, pattern, plen),
          `fill ${i} (pattern 0x${pattern.toString(16)}/${plen}, offset ${offset}, length ${length})`,
        );
      }
    },
  }),
  defineCase({
    id: 'transfer.fill-to-end',
    title: 'a fill without a length runs to the end of the buffer (or of the slot range)',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(128);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target, 32), 0x0badf00d, 4);
      cb.end();
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(
        await ctx.read(target),
        expectFill(new Uint8Array(128), 32, 96, 0x0badf00d, 4),
        'target',
      );
    },
  }),
  defineCase({
    id: 'transfer.queue-fill-patterns',
    title: 'queueFill with 1-, 2- and 4-byte patterns over sizes, offsets and alignments',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const base = ramp(256, 11);
      const s = ctx.semaphore();
      let v = 0;
      const targets = [];
      for (const [plen, pattern, offset, length] of FILLS) {
        const target = ctx.buffer(256);
        await ctx.write(target, base);
        ctx.device.queueFill(
          ctx.queue(v),
          Fence.empty,
          Fence.of({ semaphore: s, value: ++v }),
          { buffer: target, offset, length },
          pattern,
          plen,
        );
        await s.wait(v, { timeoutMs: ctx.timeoutMs });
        targets.push(target);
      }
      for (let i = 0; i < FILLS.length; i++) {
        const [plen, pattern, offset, length] = FILLS[i]!;
        checkArrayEqual(
          await ctx.read(targets[i]!),
          expectFill(base, offset, length, pattern, plen),
          `queueFill ${i}`,
        );
      }
    },
  }),
  defineCase({
    id: 'transfer.update',
    title: 'command-buffer update writes the bytes captured at record time',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(128);
      const source = Uint32Array.from({ length: 8 }, (_, i) => 0x1000 + i);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.update(source, b.ref(target, 16, 32));
      cb.update(new Uint8Array([1, 2, 3, 4]), b.ref(target, 124, 4));
      cb.end();
      source.fill(0xdead); // changes after recording do not matter
      await ctx.execute([cb], [b.table()]);
      const out = await ctx.readU32(target);
      const expected = new Uint32Array(32);
      for (let i = 0; i < 8; i++) expected[4 + i] = 0x1000 + i;
      expected[31] = 0x04030201;
      checkArrayEqual(out, expected, 'target');
    },
  }),
  defineCase({
    id: 'transfer.queue-update-captures',
    title: 'queueUpdate captures the source at the call although its wait resolves later',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const target = ctx.buffer(64);
      const source = ramp(48, 5);
      const expected = new Uint8Array(64);
      expected.set(source, 8);
      const w = ctx.semaphore();
      const s = ctx.semaphore();
      ctx.device.queueUpdate(
        ctx.queue(0),
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: s, value: 1 }),
        source,
        { buffer: target, offset: 8 },
      );
      source.fill(0xee);
      await delay(2);
      w.signal(1);
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(await ctx.read(target), expected, 'target');
    },
  }),
  defineCase({
    id: 'transfer.copy',
    title: 'command-buffer copies between buffers and within one buffer (ranges apart)',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const a = ctx.buffer(256);
      const c = ctx.buffer(256);
      const data = ramp(256, 1);
      await ctx.write(a, data);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.copy(b.ref(a, 0, 64), b.ref(c, 128, 64));
      cb.copy(b.ref(a, 64, 32), b.ref(c, 4, 32));
      cb.copy(b.ref(a, 200, 20), b.ref(a, 100, 20));
      cb.end();
      await ctx.execute([cb], [b.table()]);
      const expectC = new Uint8Array(256);
      expectC.set(data.subarray(0, 64), 128);
      expectC.set(data.subarray(64, 96), 4);
      const expectA = data.slice();
      expectA.set(data.subarray(200, 220), 100);
      checkArrayEqual(await ctx.read(c), expectC, 'copy target');
      checkArrayEqual(await ctx.read(a), expectA, 'in-buffer copy');
    },
  }),
  defineCase({
    id: 'transfer.queue-copy',
    title: 'queueCopy between buffers, with offsets',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const a = ctx.buffer(512);
      const c = ctx.buffer(512);
      const data = ramp(512, 9);
      await ctx.write(a, data);
      const s = ctx.semaphore();
      ctx.device.queueCopy(
        ctx.queue(1),
        Fence.empty,
        Fence.of({ semaphore: s, value: 1 }),
        { buffer: a, offset: 8, length: 300 },
        { buffer: c, offset: 100 },
      );
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      const expected = new Uint8Array(512);
      expected.set(data.subarray(8, 308), 100);
      checkArrayEqual(await ctx.read(c), expected, 'target');
    },
  }),
  defineCase({
    id: 'transfer.chained-fill-copy-fill',
    title: 'queueFill → queueCopy → queueFill chained by fences across queues',
    tags: ['transfer', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const a = ctx.buffer(1024);
      const c = ctx.buffer(1024);
      const s = ctx.semaphore();
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const gate = ctx.semaphore();
      ctx.device.queueFill(
        ctx.queue(0),
        Fence.of({ semaphore: gate, value: 1 }),
        at(1),
        { buffer: a },
        0x11,
        1,
      );
      ctx.device.queueCopy(ctx.queue(1), at(1), at(2), { buffer: a }, { buffer: c });
      ctx.device.queueFill(ctx.queue(0), at(2), at(3), { buffer: a }, 0x22, 1);
      gate.signal(1);
      await s.wait(3, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(await ctx.read(c), new Uint8Array(1024).fill(0x11), 'copy saw the first fill');
      checkArrayEqual(await ctx.read(a), new Uint8Array(1024).fill(0x22), 'second fill ran last');
    },
  }),
  defineCase({
    id: 'transfer.barriers-keep-order',
    title: 'barriers order fill → copy → fill → copy inside one command buffer',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const n = 1 << 20; // large enough to be split across workers where a device does that
      const a = ctx.buffer(n);
      const c = ctx.buffer(n);
      const d = ctx.buffer(n);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(a), 0x11111111, 4);
      cb.barrier();
      cb.copy(b.ref(a, 0, n), b.ref(c, 0, n));
      cb.barrier();
      cb.fill(b.ref(a), 0x22222222, 4);
      cb.barrier();
      cb.copy(b.ref(a, 0, n / 2), b.ref(d, n / 2));
      cb.copy(b.ref(c, n / 2), b.ref(d, 0, n / 2));
      cb.end();
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(await ctx.read(c), new Uint8Array(n).fill(0x11), 'c = first fill');
      checkArrayEqual(await ctx.read(a), new Uint8Array(n).fill(0x22), 'a = second fill');
      const expectD = new Uint8Array(n);
      expectD.fill(0x11, 0, n / 2);
      expectD.fill(0x22, n / 2);
      checkArrayEqual(await ctx.read(d), expectD, 'd = halves after the last barrier');
    },
  }),
  defineCase({
    id: 'transfer.read-write',
    title: 'queueWrite and queueRead round-trip at offsets and odd sizes',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const buffer = ctx.buffer(8192);
      for (const [offset, length] of [
        [0, 1],
        [1, 7],
        [13, 4096],
        [8192 - 3, 3],
        [4, 0],
      ] as const) {
        const data = ramp(length, offset);
        await ctx.write(buffer, data, offset);
        const back = await ctx.read(buffer, offset, length);
        checkArrayEqual(back, data, `round trip at ${offset} (${length} bytes)`);
      }
      const typed = Float32Array.from([1.5, -2, 3.25]);
      await ctx.write(buffer, typed, 64);
      const f = await ctx.readF32(buffer, 64, 3);
      checkArrayEqual(f, typed, 'typed-array views');
      checkEqual((await ctx.read(buffer, 0, 1))[0], 0, 'first byte');
    },
  }),
  defineCase({
    id: 'transfer.host-side-length',
    title: 'an omitted length on the device side of update/write/read is the host array length',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const buffer = ctx.buffer(256);
      const q = ctx.queue(0);
      const s = ctx.semaphore();
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      ctx.device.queueFill(q, Fence.empty, at(1), { buffer }, 0xee, 1);
      ctx.device.queueUpdate(q, at(1), at(2), ramp(8, 1), { buffer, offset: 16 });
      ctx.device.queueWrite(q, at(2), at(3), ramp(8, 9), { buffer, offset: 32 });
      const head = new Uint8Array(48);
      ctx.device.queueRead(q, at(3), at(4), { buffer }, head);
      await s.wait(4, { timeoutMs: ctx.timeoutMs });
      const expected = new Uint8Array(48).fill(0xee);
      expected.set(ramp(8, 1), 16);
      expected.set(ramp(8, 9), 32);
      checkArrayEqual(head, expected, 'the first 48 bytes, read with no source length');
    },
  }),
];
