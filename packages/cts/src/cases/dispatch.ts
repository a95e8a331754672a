/**
 * Dispatch: constants and bindings, zero and many workgroups, several entry points, indirect counts,
 * and the exports a device's executables report (fields, workload → workgroup count).
 */
import { type Buffer, BufferUsage, ErrorCode, type ExportDescriptor } from '@keel/hal';
import { check, checkArrayEqual, checkEqual, expectKeelError } from '../assertions';
import { defineCase } from '../case';
import type { CtsContext } from '../context';
import { f32Bits } from '../context';
import { CTS_KERNEL_EXPORTS, CTS_WORKGROUP_SIZE, type CtsKernelName, WORKGROUP_ID_MARKER } from '../kernels';

const INDIRECT = BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS;

/** Checks the records `workgroup_ids` wrote for a [x, y, z] dispatch, and that nothing else changed. */
export async function checkWorkgroupIds(
  ctx: CtsContext,
  out: Buffer,
  count: readonly [number, number, number],
  sentinel: number,
): Promise<void> {
  const words = await ctx.readU32(out);
  const [cx, cy, cz] = count;
  const expected = new Uint32Array(words.length).fill(sentinel);
  for (let z = 0; z < cz; z++) {
    for (let y = 0; y < cy; y++) {
      for (let x = 0; x < cx; x++) {
        const at = 4 * (x + cx * (y + cy * z));
        expected[at] = x;
        expected[at + 1] = y;
        expected[at + 2] = z;
        expected[at + 3] = WORKGROUP_ID_MARKER;
      }
    }
  }
  checkArrayEqual(words, expected, `workgroup ids of [${count.join(', ')}]`);
}

export const dispatchCases = [
  defineCase({
    id: 'dispatch.constants-and-bindings',
    title: 'dispatches receive their constants and bindings (with offsets)',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const n = 1000;
      const absExe = await ctx.executable('abs');
      const scaleExe = await ctx.executable('scaleAndOffset');
      const input = Float32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -i : i) / 4);
      const align = Math.max(16, ctx.device.info.limits.minStorageBufferOffsetAlignment);
      const src = ctx.buffer(align + n * 4);
      const dst = ctx.buffer(n * 4);
      await ctx.write(src, input, align);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.dispatch(absExe, 'abs', {
        workload: [n],
        constants: [n],
        bindings: [b.ref(src, align, n * 4), b.ref(dst)],
      });
      cb.barrier();
      cb.dispatch(scaleExe, 0, {
        workgroupCount: [Math.ceil(n / CTS_WORKGROUP_SIZE), 1, 1],
        constants: new Uint32Array([f32Bits(2.5), f32Bits(-1), n]),
        bindings: [b.ref(dst)],
      });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      const out = await ctx.readF32(dst);
      const expected = Float32Array.from(input, (v) => Math.fround(Math.fround(Math.abs(v) * 2.5) - 1));
      checkArrayEqual(out, expected, 'scale_and_offset(abs(input))');
    },
  }),
  defineCase({
    id: 'dispatch.zero-workgroups',
    title: 'a dispatch of zero workgroups touches nothing',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('workgroupIds');
      const out = ctx.buffer(256);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(out), 0xabababab, 4);
      cb.barrier();
      for (const count of [
        [0, 1, 1],
        [3, 0, 2],
        [1, 1, 0],
        [0, 0, 0],
      ] as const) {
        cb.dispatch(exe, 'workgroup_ids', { workgroupCount: count, bindings: [b.ref(out)] });
      }
      cb.end();
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(await ctx.readU32(out), new Uint32Array(64).fill(0xabababab), 'target');
    },
  }),
  defineCase({
    id: 'dispatch.multi-workgroup-ids',
    title: 'a [4, 3, 2] dispatch runs each workgroup once with its id and the count',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('workgroupIds');
      const out = ctx.buffer(4 * 4 * 30);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(out), 0xffffffff, 4);
      cb.barrier();
      cb.dispatch(exe, 'workgroup_ids', { workgroupCount: [4, 3, 2], bindings: [b.ref(out)] });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      await checkWorkgroupIds(ctx, out, [4, 3, 2], 0xffffffff);
    },
  }),
  defineCase({
    id: 'dispatch.several-entry-points',
    title: 'two entry points of one executable in one command buffer',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('negateDouble');
      checkEqual(exe.exports.length, 2, 'export count');
      checkEqual(exe.lookupExport('double').index, 1, "index of 'double'");
      const n = 300;
      const input = Int32Array.from({ length: n }, (_, i) => i - 100);
      const a = ctx.buffer(n * 4);
      const c = ctx.buffer(n * 4);
      const d = ctx.buffer(n * 4);
      await ctx.write(a, input);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.dispatch(exe, 'negate', { workload: [n], constants: [n], bindings: [b.ref(a), b.ref(c)] });
      cb.barrier();
      cb.dispatch(exe, 1, { workload: [n], constants: [n], bindings: [b.ref(c), b.ref(d)] });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      checkArrayEqual(
        await ctx.readI32(c),
        Int32Array.from(input, (v) => -v),
        'negate',
      );
      checkArrayEqual(
        await ctx.readI32(d),
        Int32Array.from(input, (v) => -2 * v),
        'double(negate)',
      );
    },
  }),
  defineCase({
    id: 'dispatch.indirect-static',
    title: 'an indirect dispatch reads its workgroup count from a buffer written before the submission',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('workgroupIds');
      const params = ctx.buffer(32, INDIRECT);
      await ctx.write(params, Uint32Array.from([3, 2, 1]), 16);
      const out = ctx.buffer(4 * 4 * 10);
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      cb.dispatch(exe, 'workgroup_ids', { indirect: b.ref(params, 16, 12), bindings: [b.ref(out)] });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      await checkWorkgroupIds(ctx, out, [3, 2, 1], 0);
      // A new count takes effect at the next submission of the same command buffer.
      await ctx.write(params, Uint32Array.from([1, 1, 2]), 16);
      const out2 = ctx.buffer(4 * 4 * 10);
      if (b.mode === 'direct') await ctx.write(out, new Uint8Array(out.byteLength));
      const table = b.mode === 'slots' ? [b.tableFor([params, out2])] : [undefined];
      await ctx.execute([cb], table);
      await checkWorkgroupIds(ctx, b.mode === 'slots' ? out2 : out, [1, 1, 2], 0);
    },
  }),
  defineCase({
    id: 'dispatch.indirect-written-by-earlier-command',
    title: 'an indirect dispatch reads a count written by an earlier command of the same command buffer',
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      const exe = await ctx.executable('workgroupIds');
      const params = ctx.buffer(16, INDIRECT);
      await ctx.write(params, Uint32Array.from([1, 1, 1]));
      const out = ctx.buffer(4 * 4 * 12);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.update(Uint32Array.from([2, 3, 2]), b.ref(params, 0, 12));
      cb.barrier();
      cb.dispatch(exe, 'workgroup_ids', { indirect: b.ref(params, 0, 12), bindings: [b.ref(out)] });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      await checkWorkgroupIds(ctx, out, [2, 3, 2], 0);
    },
  }),
  defineCase({
    id: 'dispatch.export-fields',
    title:
      "an executable's exports report the declared name, index, bindingCount, constantCount and workgroupSize; workgroupCount is ceil(workload / workgroupSize) by default, the declared function otherwise, and dispatches by workload use it",
    tags: ['dispatch'],
    recordsCommands: true,
    async run(ctx) {
      for (const kernel of Object.keys(CTS_KERNEL_EXPORTS) as CtsKernelName[]) {
        const declared = CTS_KERNEL_EXPORTS[kernel];
        const exe = await ctx.executable(kernel);
        checkEqual(exe.exports.length, declared.length, `${kernel}: export count`);
        declared.forEach((want, i) => {
          const got = exe.exports[i]!;
          const what = `${kernel} export ${i}`;
          checkEqual(got.index, i, `${what}: index`);
          checkEqual(got.name, want.name, `${what}: name`);
          checkEqual(got.bindingCount, want.bindingCount, `${what}: bindingCount`);
          checkEqual(got.constantCount, want.constantCount, `${what}: constantCount`);
          checkArrayEqual(got.workgroupSize, want.workgroupSize ?? [1, 1, 1], `${what}: workgroupSize`);
          check(exe.lookupExport(want.name) === got, `${what}: lookupExport by name`);
          check(exe.lookupExport(i) === got, `${what}: lookupExport by index`);
        });
        expectKeelError(
          () => exe.lookupExport('no_such_export'),
          ErrorCode.NOT_FOUND,
          `${kernel}: unknown name`,
        );
        expectKeelError(
          () => exe.lookupExport(declared.length),
          ErrorCode.NOT_FOUND,
          `${kernel}: index past the end`,
        );
      }
      // The default count: ceil(workload[i] / workgroupSize[i]), missing dimensions 1.
      const abs = (await ctx.executable('abs')).lookupExport('abs');
      checkArrayEqual(abs.workgroupCount([1000]), [16, 1, 1], 'abs: workgroupCount([1000])');
      checkArrayEqual(abs.workgroupCount([64]), [1, 1, 1], 'abs: workgroupCount([64])');
      checkArrayEqual(abs.workgroupCount([65, 3]), [2, 3, 1], 'abs: workgroupCount([65, 3])');
      checkArrayEqual(abs.workgroupCount([]), [1, 1, 1], 'abs: workgroupCount([])');
      const ids = await ctx.executable('workgroupIds');
      checkArrayEqual(
        ids.exports[0]!.workgroupCount([3, 2, 2]),
        [3, 2, 2],
        'workgroup_ids: workgroupCount([3, 2, 2])',
      );
      // A declared count function is the export's (seed 004: the backend decides the count).
      const [idsExport] = CTS_KERNEL_EXPORTS.workgroupIds;
      const custom: ExportDescriptor = {
        ...idsExport!,
        workgroupCount: (workload) => [workload[0] ?? 1, 2, 1],
      };
      const customExe = await ctx.device.createExecutable(ctx.handle.kernels('workgroupIds', [custom]));
      checkArrayEqual(customExe.exports[0]!.workgroupCount([3]), [3, 2, 1], 'a declared workgroupCount([3])');
      // Dispatches by workload run the count the export computes.
      const byDefault = ctx.buffer(4 * 4 * 14);
      const byCustom = ctx.buffer(4 * 4 * 8);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(byDefault), 0xffffffff, 4);
      cb.fill(b.ref(byCustom), 0xffffffff, 4);
      cb.barrier();
      cb.dispatch(ids, 'workgroup_ids', { workload: [3, 2, 2], bindings: [b.ref(byDefault)] });
      cb.dispatch(customExe, 'workgroup_ids', { workload: [3], bindings: [b.ref(byCustom)] });
      cb.end();
      await ctx.execute([cb], [b.table()]);
      await checkWorkgroupIds(ctx, byDefault, [3, 2, 2], 0xffffffff);
      await checkWorkgroupIds(ctx, byCustom, [3, 2, 1], 0xffffffff);
    },
  }),
];
