/**
 * Transfer edges (IREE's copy_buffer, update_buffer, fill_buffer and queue_transfer classes): queue
 * copies at byte-misaligned offsets with odd lengths, updates from views with a byteOffset to unaligned
 * targets, fills of tiny and odd-size buffers, and zero-length transfers. Every case checks the exact
 * bytes of the whole buffer (the bytes around each range keep a ramp that no transfer writes).
 */
import { Fence } from '@keel/fence';
import type { BufferRef } from '@keel/hal';
import { checkArrayEqual } from '../assertions';
import { defineCase } from '../case';
import { chain, readAll, settled, writeAll } from './chain';
import { expectFill, ramp } from './transfers';

const roundUp16 = (n: number) => Math.ceil(n / 16) * 16;

/** The bytes a view covers (its byteOffset and byteLength, whatever its element type). */
const bytesOf = (view: ArrayBufferView) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/** (source offset, target offset) pairs of the misaligned copies, and their lengths. */
const COPY_OFFSETS = [
  [1, 2],
  [3, 0],
  [0, 1],
] as const;
const COPY_LENGTHS = [1, 3, 31, 33, 4097] as const;

/**
 * Fills of tiny and odd-size buffers: [buffer size, offset, length (undefined: to the end), pattern,
 * pattern length]. Offsets and lengths are multiples of the pattern length (hal's rule).
 */
const ODD_FILLS: readonly (readonly [number, number, number | undefined, number, 1 | 2 | 4])[] = [
  [1, 0, 1, 0xa7, 1],
  [2, 0, 2, 0xab23, 2],
  [5, 0, 5, 0x07, 1],
  [5, 0, 4, 0xcafef00d, 4],
  [5, 1, undefined, 0x3c, 1],
  [7, 1, 6, 0x5c, 1],
  [7, 6, 1, 0x33, 1],
  [7, 2, 4, 0xab23, 2],
  [7, 3, undefined, 0x22, 1],
  [20, 16, 4, 0xab23cd45, 4],
  [20, 4, undefined, 0x01020304, 4],
  [20, 2, undefined, 0x3344, 2],
  [1040, 7, 1029, 0x19, 1],
  [1040, 2, 1030, 0xa1b2, 2],
  [1041, 13, undefined, 0xe1, 1],
];

function describeFill([size, offset, length, pattern, plen]: (typeof ODD_FILLS)[number]): string {
  return `fill of 0x${pattern.toString(16)}/${plen} at ${offset}, ${length ?? 'to the end'}, in ${size} bytes`;
}

function expectOddFill([size, offset, length, pattern, plen]: (typeof ODD_FILLS)[number]): Uint8Array {
  return expectFill(ramp(size, size), offset, length ?? size - offset, pattern, plen);
}

export const transferEdgeCases = [
  defineCase({
    id: 'transfer.queue-copy-unaligned',
    title:
      'queueCopy at byte-misaligned, differing offsets (1→2, 3→0, 0→1) with odd lengths (1 to 4097); the bytes around each range stay',
    tags: ['transfer', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      // One region per copy, 16-byte aligned, with at least 8 bytes after the copy's end.
      const regions: { at: number; from: number; to: number; length: number }[] = [];
      let total = 0;
      for (const length of COPY_LENGTHS) {
        for (const [from, to] of COPY_OFFSETS) {
          regions.push({ at: total, from, to, length });
          total += roundUp16(3 + length + 8);
        }
      }
      const source = ctx.buffer(total, undefined, 'copy source');
      const target = ctx.buffer(total, undefined, 'copy target');
      const src = ramp(total, 1);
      const base = ramp(total, 101); // differs from src at every index
      await writeAll(ctx, [
        [source, src],
        [target, base],
      ]);
      const c = chain(ctx, true);
      for (const [i, r] of regions.entries()) {
        const { queue, wait, signal } = c.next();
        ctx.device.queueCopy(
          queue,
          wait,
          signal,
          { buffer: source, offset: r.at + r.from, length: r.length },
          // Half the copies give the target length too; the others take the source's.
          i % 2 === 0
            ? { buffer: target, offset: r.at + r.to }
            : { buffer: target, offset: r.at + r.to, length: r.length },
        );
      }
      await c.done();
      const expected = base.slice();
      for (const r of regions)
        expected.set(src.subarray(r.at + r.from, r.at + r.from + r.length), r.at + r.to);
      const [out] = await readAll(ctx, [target]);
      for (const [i, r] of regions.entries()) {
        const end = i + 1 < regions.length ? regions[i + 1]!.at : total;
        checkArrayEqual(
          out!.subarray(r.at, end),
          expected.subarray(r.at, end),
          `queueCopy of ${r.length} bytes ${r.from}→${r.to} (region at ${r.at})`,
        );
      }
      checkArrayEqual(await ctx.read(source), src, 'the copy source');
    },
  }),
  defineCase({
    id: 'transfer.queue-update-source-views',
    title:
      'queueUpdate from views with a byteOffset (Uint8Array, Uint16Array, Float32Array, DataView) to unaligned target offsets and lengths, captured at the call',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const backing = ramp(64, 3);
      const ab = backing.buffer;
      const updates: readonly (readonly [string, ArrayBufferView, number, boolean])[] = [
        // [what, source view, target offset in its region, give the target length]
        ['Uint8Array at byte 3, 8 bytes', new Uint8Array(ab, 3, 8), 0, true],
        ['Uint8Array at byte 5, 8 bytes', new Uint8Array(ab, 5, 8), 4, false],
        ['Uint8Array at byte 1, 4 bytes', new Uint8Array(ab, 1, 4), 1, true],
        ['Uint8Array at byte 2, 5 bytes', new Uint8Array(ab, 2, 5), 3, false],
        ['Uint8Array at byte 7, 1 byte', new Uint8Array(ab, 7, 1), 1, true],
        ['Uint16Array at byte 2, 3 elements', new Uint16Array(ab, 2, 3), 5, true],
        ['Float32Array subarray at byte 8, 4 elements', new Float32Array(ab, 0, 6).subarray(2, 6), 17, false],
        ['DataView at byte 9, 7 bytes', new DataView(ab, 9, 7), 6, true],
      ];
      const stride = 32;
      const target = ctx.buffer(stride * updates.length);
      const base = ramp(target.byteLength, 77);
      await ctx.write(target, base);
      const expected = base.slice();
      for (const [i, [, view, to]] of updates.entries()) expected.set(bytesOf(view).slice(), i * stride + to);
      // Every update waits behind a host gate; the backing changes before the gate opens.
      const gate = ctx.fresh();
      const c = chain(ctx);
      const first = c.next();
      ctx.device.queueBarrier(first.queue, gate.fence, first.signal);
      for (const [i, [, view, to, withLength]] of updates.entries()) {
        const { queue, wait, signal } = c.next();
        const offset = i * stride + to;
        ctx.device.queueUpdate(
          queue,
          wait,
          signal,
          view,
          withLength ? { buffer: target, offset, length: view.byteLength } : { buffer: target, offset },
        );
      }
      backing.fill(0xee);
      gate.semaphore.signal(1);
      await c.done();
      const out = await ctx.read(target);
      for (const [i, [what]] of updates.entries()) {
        checkArrayEqual(
          out.subarray(i * stride, (i + 1) * stride),
          expected.subarray(i * stride, (i + 1) * stride),
          `queueUpdate from a ${what} (region at ${i * stride})`,
        );
      }
    },
  }),
  defineCase({
    id: 'transfer.update-source-views',
    title:
      'command-buffer updates from views with a byteOffset (Uint8Array, Uint16Array, Float32Array, DataView) write the bytes the view covered at record time',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const backing = ramp(64, 9);
      const ab = backing.buffer;
      const updates: readonly (readonly [string, ArrayBufferView, number])[] = [
        ['Uint8Array at byte 3, 8 bytes', new Uint8Array(ab, 3, 8), 4],
        ['Uint16Array at byte 2, 2 elements', new Uint16Array(ab, 2, 2), 16],
        ['Float32Array subarray at byte 8, 3 elements', new Float32Array(ab, 0, 5).subarray(2, 5), 24],
        ['DataView at byte 9, 12 bytes', new DataView(ab, 9, 12), 40],
      ];
      const target = ctx.buffer(64);
      const base = ramp(64, 200);
      await ctx.write(target, base);
      const expected = base.slice();
      for (const [, view, to] of updates) expected.set(bytesOf(view).slice(), to);
      const b = ctx.binder();
      const cb = ctx.record();
      for (const [, view, to] of updates) cb.update(view, b.ref(target, to, view.byteLength));
      cb.end();
      backing.fill(0xee);
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(await ctx.read(target), expected, 'target');
    },
  }),
  defineCase({
    id: 'transfer.fill-odd-sizes',
    title:
      'command-buffer fills of 1-, 2- and 4-byte patterns on tiny and odd-size buffers (1 to 1041 bytes), to their end, and over 256 bytes at an odd offset',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const targets = ODD_FILLS.map(([size], i) => ctx.buffer(size, undefined, `odd fill ${i}`));
      await writeAll(
        ctx,
        targets.map((t) => [t, ramp(t.byteLength, t.byteLength)] as const),
      );
      const b = ctx.binder();
      const cb = ctx.record();
      for (const [i, [, offset, length, pattern, plen]] of ODD_FILLS.entries()) {
        cb.fill(b.ref(targets[i]!, offset, length), pattern, plen);
      }
      cb.end();
      await ctx.execute([cb], [b.table()]);
      const out = await readAll(ctx, targets);
      for (const [i, fill] of ODD_FILLS.entries()) {
        checkArrayEqual(out[i]!, expectOddFill(fill), describeFill(fill));
      }
    },
  }),
  defineCase({
    id: 'transfer.queue-fill-odd-sizes',
    title:
      'queueFill of 1-, 2- and 4-byte patterns on tiny and odd-size buffers (1 to 1041 bytes), to their end, and over 256 bytes at an odd offset',
    tags: ['transfer', 'multi-queue'],
    recordsCommands: false,
    async run(ctx) {
      const targets = ODD_FILLS.map(([size], i) => ctx.buffer(size, undefined, `odd queue fill ${i}`));
      await writeAll(
        ctx,
        targets.map((t) => [t, ramp(t.byteLength, t.byteLength)] as const),
      );
      const c = chain(ctx, true);
      for (const [i, [, offset, length, pattern, plen]] of ODD_FILLS.entries()) {
        const { queue, wait, signal } = c.next();
        const ref =
          length === undefined ? { buffer: targets[i]!, offset } : { buffer: targets[i]!, offset, length };
        ctx.device.queueFill(queue, wait, signal, ref, pattern, plen);
      }
      await c.done();
      const out = await readAll(ctx, targets);
      for (const [i, fill] of ODD_FILLS.entries()) {
        checkArrayEqual(out[i]!, expectOddFill(fill), `queueFill: ${describeFill(fill)}`);
      }
    },
  }),
  defineCase({
    id: 'transfer.zero-length',
    title:
      'zero-length queueCopy, queueUpdate and queueFill (mid-buffer and at the end) signal and touch nothing',
    tags: ['transfer'],
    recordsCommands: false,
    async run(ctx) {
      const a = ctx.buffer(64);
      const c = ctx.buffer(61);
      const baseA = ramp(64, 5);
      const baseC = ramp(61, 50);
      await writeAll(ctx, [
        [a, baseA],
        [c, baseC],
      ]);
      const d = ctx.device;
      const q = ctx.queue(0);
      const e = Fence.empty;
      const ops: readonly (readonly [string, (signal: Fence) => void])[] = [
        [
          'queueCopy of length 0',
          (s) =>
            d.queueCopy(q, e, s, { buffer: a, offset: 3, length: 0 }, { buffer: c, offset: 5, length: 0 }),
        ],
        [
          'queueCopy of length 0, target length omitted',
          (s) => d.queueCopy(q, e, s, { buffer: a, offset: 8, length: 0 }, { buffer: c, offset: 9 }),
        ],
        [
          'queueCopy from the end to the end',
          (s) => d.queueCopy(q, e, s, { buffer: a, offset: 64 }, { buffer: c, offset: 61 }),
        ],
        [
          'queueUpdate of an empty Uint8Array',
          (s) => d.queueUpdate(q, e, s, new Uint8Array(0), { buffer: c, offset: 7 }),
        ],
        [
          'queueUpdate of an empty view with a byteOffset, length 0',
          (s) => d.queueUpdate(q, e, s, ramp(16).subarray(5, 5), { buffer: a, offset: 2, length: 0 }),
        ],
        [
          'queueUpdate at the end',
          (s) => d.queueUpdate(q, e, s, new Float32Array(0), { buffer: c, offset: 61 }),
        ],
        [
          'queueFill of length 0 at an odd offset',
          (s) => d.queueFill(q, e, s, { buffer: c, offset: 3, length: 0 }, 0xff, 1),
        ],
        [
          'queueFill of 4-byte patterns, length 0',
          (s) => d.queueFill(q, e, s, { buffer: a, offset: 8, length: 0 }, 0xffffffff, 4),
        ],
        ['queueFill at the end', (s) => d.queueFill(q, e, s, { buffer: c, offset: 61 }, 0xff, 1)],
      ];
      const fences = ops.map(([, submit]) => {
        const { fence } = ctx.fresh();
        submit(fence);
        return fence;
      });
      for (const [i, [what]] of ops.entries()) await settled(ctx, fences[i]!, what);
      const [outA, outC] = await readAll(ctx, [a, c]);
      checkArrayEqual(outA!, baseA, 'a (64 bytes) after the zero-length transfers');
      checkArrayEqual(outC!, baseC, 'c (61 bytes) after the zero-length transfers');
    },
  }),
  defineCase({
    id: 'transfer.zero-length-commands',
    title: 'zero-length command-buffer copies, updates and fills (mid-buffer and at the end) touch nothing',
    tags: ['transfer'],
    recordsCommands: true,
    async run(ctx) {
      const a = ctx.buffer(64);
      const c = ctx.buffer(64);
      const baseA = ramp(64, 6);
      const baseC = ramp(64, 60);
      await writeAll(ctx, [
        [a, baseA],
        [c, baseC],
      ]);
      const b = ctx.binder();
      const cb = ctx.record();
      const refs: readonly (readonly [BufferRef, BufferRef])[] = [
        [b.ref(a, 8, 0), b.ref(c, 12, 0)],
        [b.ref(a, 64, 0), b.ref(c, 64)], // at the end, the target's length omitted
      ];
      for (const [from, to] of refs) cb.copy(from, to);
      cb.copy(b.ref(a, 4, 0), b.ref(a, 32, 0)); // within one buffer
      cb.update(new Uint8Array(0), b.ref(c, 4));
      cb.update(new Uint32Array(8).subarray(3, 3), b.ref(c, 64, 0));
      cb.fill(b.ref(a, 4, 0), 0xffffffff, 4);
      cb.fill(b.ref(c, 64), 0xff, 1);
      cb.end();
      await ctx.execute([cb], [b.table()]);
      const [outA, outC] = await readAll(ctx, [a, c]);
      checkArrayEqual(outA!, baseA, 'a after the zero-length commands');
      checkArrayEqual(outC!, baseC, 'c after the zero-length commands');
    },
  }),
];
