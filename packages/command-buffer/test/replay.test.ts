import { type BindingTable, BufferUsage, type CommandSink, type ResolvedBindings, slotRef } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCommandBuffer, NoopSink, RecordingSink } from '../src/index';
import { fixtureDevice } from './fixtures/fixture-device';
import { expectKeelError } from './helpers';

const device = fixtureDevice();
const U = BufferUsage;
const ALL = U.DEFAULT | U.DISPATCH_INDIRECT_PARAMETERS;

const exe = device.executable(
  [
    { name: 'axpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] },
    {
      name: 'tiles',
      bindingCount: 1,
      constantCount: 0,
      workgroupSize: [8, 8, 1],
      workgroupCount: (w) => [Math.ceil((w[0] ?? 1) / 16), Math.ceil((w[1] ?? 1) / 16), 1],
    },
  ],
  'kernels',
);

function replayed(cb: ReturnType<typeof createCommandBuffer>, table?: BindingTable) {
  const sink = new RecordingSink();
  cb.replay(sink, table);
  return sink.commands;
}

describe('replay', () => {
  it('resolves mixed direct and indirect refs through two different tables', () => {
    const weights = device.buffer(1024, ALL, 'weights');
    const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 3 });
    cb.begin();
    cb.beginDebugGroup('step');
    cb.fill(slotRef(0, 16, 32), 0xab, 1);
    cb.copy({ buffer: weights, offset: 64, length: 32 }, slotRef(1, 128));
    cb.barrier();
    cb.dispatch(exe, 'axpy', {
      workgroupCount: [4, 2, 1],
      constants: [7, -1],
      bindings: [slotRef(0, 32), { buffer: weights, offset: 256 }],
    });
    cb.fill(slotRef(2), 0x0102, 2);
    cb.endDebugGroup();
    cb.end();

    const a0 = device.buffer(512, ALL, 'a0');
    const a1 = device.buffer(512, ALL, 'a1');
    const b0 = device.buffer(4096, ALL, 'b0');
    const tableA: BindingTable = [
      { buffer: a0 },
      { buffer: a1, offset: 64 },
      { buffer: a1, offset: 256, length: 128 },
    ];
    const tableB: BindingTable = [
      { buffer: b0, offset: 1024, length: 512 },
      { buffer: b0 },
      { buffer: b0, offset: 2048 },
    ];
    cb.validateSubmission(tableA);
    cb.validateSubmission(tableB);

    expect(replayed(cb, tableA)).toEqual([
      { op: 'beginDebugGroup', label: 'step' },
      { op: 'fill', target: a0, offset: 16, length: 32, pattern: 0xab, patternLength: 1 },
      { op: 'copy', source: weights, sourceOffset: 64, target: a1, targetOffset: 192, length: 32 },
      { op: 'barrier' },
      {
        op: 'dispatch',
        executable: exe,
        entry: 0,
        workgroupCount: [4, 2, 1],
        constants: [7, 0xffffffff],
        bindings: [
          { buffer: a0, offset: 32, length: 480 },
          { buffer: weights, offset: 256, length: 768 },
        ],
      },
      { op: 'fill', target: a1, offset: 256, length: 128, pattern: 0x0102, patternLength: 2 },
      { op: 'endDebugGroup' },
    ]);
    expect(replayed(cb, tableB)).toEqual([
      { op: 'beginDebugGroup', label: 'step' },
      { op: 'fill', target: b0, offset: 1040, length: 32, pattern: 0xab, patternLength: 1 },
      { op: 'copy', source: weights, sourceOffset: 64, target: b0, targetOffset: 128, length: 32 },
      { op: 'barrier' },
      {
        op: 'dispatch',
        executable: exe,
        entry: 0,
        workgroupCount: [4, 2, 1],
        constants: [7, 0xffffffff],
        bindings: [
          { buffer: b0, offset: 1056, length: 480 },
          { buffer: weights, offset: 256, length: 768 },
        ],
      },
      { op: 'fill', target: b0, offset: 2048, length: 2048, pattern: 0x0102, patternLength: 2 },
      { op: 'endDebugGroup' },
    ]);
    expect(cb.commandCount).toBe(7);
  });

  it('captures update bytes and constants at record time', () => {
    const target = device.buffer(64, ALL, 't');
    const source = new Float32Array([1, 2, 3]);
    const constants = new Uint32Array([5, 6]);
    const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    cb.update(source, { buffer: target, offset: 4 });
    cb.update(new Uint8Array(source.buffer, 4, 8), slotRef(0, 8));
    cb.dispatch(exe, 'axpy', {
      workgroupCount: [1, 1, 1],
      constants,
      bindings: [{ buffer: target }, slotRef(0)],
    });
    cb.end();
    source.fill(0);
    constants.fill(0);
    const commands = replayed(cb, [{ buffer: target, offset: 16 }]);
    expect(commands[0]).toEqual({
      op: 'update',
      target,
      offset: 4,
      length: 12,
      data: new Uint8Array(new Float32Array([1, 2, 3]).buffer),
    });
    expect(commands[1]).toEqual({
      op: 'update',
      target,
      offset: 24,
      length: 8,
      data: new Uint8Array(new Float32Array([2, 3]).buffer),
    });
    expect(commands[2]).toMatchObject({ op: 'dispatch', constants: [5, 6] });
  });

  it('computes the workgroup count from the workload at record time', () => {
    let calls = 0;
    const counted = device.executable([
      {
        name: 'k',
        bindingCount: 0,
        constantCount: 0,
        workgroupCount: (w) => {
          calls++;
          return [w[0]! * 2, w[1]! + 1, 3];
        },
      },
    ]);
    const cb = createCommandBuffer(device, { mode: 'reusable' });
    cb.begin();
    cb.dispatch(exe, 'axpy', {
      workload: [1000],
      constants: [0, 0],
      bindings: [{ buffer: device.buffer(16) }, { buffer: device.buffer(16) }],
    });
    cb.dispatch(exe, 1, { workload: [100, 40], bindings: [{ buffer: device.buffer(16) }] });
    cb.dispatch(counted, 0, { workload: [5, 6], bindings: [] });
    cb.end();
    expect(calls).toBe(1);
    const commands = replayed(cb);
    replayed(cb);
    expect(calls).toBe(1);
    expect(commands.map((c) => (c.op === 'dispatch' ? c.workgroupCount : undefined))).toEqual([
      [16, 1, 1],
      [7, 3, 1],
      [10, 7, 3],
    ]);
  });

  it('replays an indirect dispatch as dispatchIndirect', () => {
    const params = device.buffer(64, ALL, 'params');
    const data = device.buffer(256, ALL, 'data');
    const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 2 });
    cb.begin();
    cb.dispatch(exe, 'tiles', { indirect: slotRef(1, 4), bindings: [slotRef(0)] });
    cb.dispatch(exe, 'tiles', {
      indirect: { buffer: params, offset: 12 },
      bindings: [{ buffer: data, offset: 16, length: 32 }],
    });
    cb.end();
    const table: BindingTable = [
      { buffer: data, offset: 32 },
      { buffer: params, offset: 48 },
    ];
    cb.validateSubmission(table);
    expect(replayed(cb, table)).toEqual([
      {
        op: 'dispatchIndirect',
        executable: exe,
        entry: 1,
        params,
        paramsOffset: 52,
        constants: [],
        bindings: [{ buffer: data, offset: 32, length: 224 }],
      },
      {
        op: 'dispatchIndirect',
        executable: exe,
        entry: 1,
        params,
        paramsOffset: 12,
        constants: [],
        bindings: [{ buffer: data, offset: 16, length: 32 }],
      },
    ]);
  });

  it('replays what validation: false recorded, as given', () => {
    const raw = device.buffer(64, U.NONE, 'raw');
    const cb = createCommandBuffer(device, { validation: false, mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    cb.fill({ buffer: raw, offset: 2, length: 3 }, 0x1ff, 1);
    cb.fill(slotRef(5, 1), 7, 1);
    cb.end();
    expect(
      replayed(cb, [undefined, undefined, undefined, undefined, undefined, { buffer: raw, offset: 8 }]),
    ).toEqual([
      { op: 'fill', target: raw, offset: 2, length: 3, pattern: 0x1ff, patternLength: 1 },
      { op: 'fill', target: raw, offset: 9, length: 55, pattern: 7, patternLength: 1 },
    ]);
    // A missing binding is still a KeelError at replay, never a TypeError.
    expectKeelError(
      () => cb.replay(new NoopSink(), []),
      'INVALID_ARGUMENT',
      'command buffer: binding slot 5: no binding at replay',
    );
  });

  it('reuses one bindings object and pre-made constant views, and clears buffers afterwards', () => {
    const seen: { bindings: ResolvedBindings; constants: Uint32Array }[] = [];
    const sink: CommandSink = Object.assign(new NoopSink(), {
      dispatch(
        _e: unknown,
        _n: number,
        _x: number,
        _y: number,
        _z: number,
        constants: Uint32Array,
        bindings: ResolvedBindings,
      ) {
        seen.push({ bindings, constants });
      },
    });
    const a = device.buffer(64, ALL);
    const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    cb.dispatch(exe, 'axpy', {
      workgroupCount: [1, 1, 1],
      constants: [1, 2],
      bindings: [slotRef(0), { buffer: a }],
    });
    cb.dispatch(exe, 'axpy', {
      workgroupCount: [1, 1, 1],
      constants: [3, 4],
      bindings: [{ buffer: a }, slotRef(0)],
    });
    cb.end();
    cb.replay(sink, [{ buffer: a }]);
    cb.replay(sink, [{ buffer: a }]);
    expect(seen).toHaveLength(4);
    expect(seen[1]!.bindings).toBe(seen[0]!.bindings);
    expect(seen[2]!.bindings).toBe(seen[0]!.bindings);
    expect(seen[2]!.constants).toBe(seen[0]!.constants);
    expect(seen[3]!.constants).toBe(seen[1]!.constants);
    expect(Array.from(seen[3]!.constants)).toEqual([3, 4]);
    expect(seen[0]!.bindings.count).toBe(0);
    expect(seen[0]!.bindings.buffers.every((b) => b === undefined)).toBe(true);
  });

  it('propagates sink errors and stays replayable', () => {
    const cb = createCommandBuffer(device, { mode: 'reusable' });
    cb.begin();
    cb.barrier();
    cb.end();
    const failing = Object.assign(new NoopSink(), {
      barrier() {
        throw new Error('sink failed');
      },
    });
    expect(() => cb.replay(failing)).toThrow('sink failed');
    expect(replayed(cb)).toEqual([{ op: 'barrier' }]);
  });
});
