import { BufferUsage, type StructureBindings, slotRef, TO_END } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCommandBuffer, NoopSink } from '../src/index';
import { fixtureDevice } from './fixtures/fixture-device';
import { expectKeelError } from './helpers';
import { ResolvingSink } from './structure-sinks';

const device = fixtureDevice();
const ALL = BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS;
const exe = device.executable(
  [{ name: 'axpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] }],
  'kernels',
);

/** The structure as a RecordingSink sees it through ResolvingSink without a table (slots as numbers). */
const structure = (cb: ReturnType<typeof createCommandBuffer>) => ResolvingSink.record(cb);

describe('replayStructure', () => {
  it('hands over direct refs as buffers and slot refs as slot indices with relative ranges', () => {
    const weights = device.buffer(1024, ALL, 'weights');
    const params = device.buffer(64, ALL, 'params');
    const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 3 });
    cb.begin();
    cb.beginDebugGroup('step');
    cb.fill(slotRef(0, 16, 32), 0xab, 1);
    cb.fill(slotRef(2), 0x0102, 2);
    cb.fill({ buffer: weights, offset: 1000 }, 0, 4);
    cb.update(new Uint32Array([1, 2]), slotRef(1, 8));
    cb.copy({ buffer: weights, offset: 64, length: 32 }, slotRef(1, 128));
    cb.barrier();
    cb.dispatch(exe, 'axpy', {
      workgroupCount: [4, 2, 1],
      constants: [7, 1],
      bindings: [slotRef(0, 32), { buffer: weights, offset: 256 }],
    });
    cb.dispatch(exe, 'axpy', {
      indirect: slotRef(2, 16),
      constants: [3, 4],
      bindings: [{ buffer: params }, slotRef(1, 0, 64)],
    });
    cb.endDebugGroup();
    cb.end();

    expect(structure(cb)).toEqual([
      { op: 'beginDebugGroup', label: 'step' },
      { op: 'fill', target: 0, offset: 16, length: 32, pattern: 0xab, patternLength: 1 },
      { op: 'fill', target: 2, offset: 0, length: TO_END, pattern: 0x0102, patternLength: 2 },
      { op: 'fill', target: weights, offset: 1000, length: 24, pattern: 0, patternLength: 4 },
      { op: 'update', target: 1, offset: 8, length: 8, data: new Uint8Array([1, 0, 0, 0, 2, 0, 0, 0]) },
      { op: 'copy', source: weights, sourceOffset: 64, target: 1, targetOffset: 128, length: 32 },
      { op: 'barrier' },
      {
        op: 'dispatch',
        executable: exe,
        entry: 0,
        workgroupCount: [4, 2, 1],
        constants: [7, 1],
        bindings: [
          { buffer: 0, offset: 32, length: TO_END },
          { buffer: weights, offset: 256, length: 768 },
        ],
      },
      {
        op: 'dispatchIndirect',
        executable: exe,
        entry: 0,
        params: 2,
        paramsOffset: 16,
        constants: [3, 4],
        bindings: [
          { buffer: params, offset: 0, length: 64 },
          { buffer: 1, offset: 0, length: 64 },
        ],
      },
      { op: 'endDebugGroup' },
    ]);
    // The same again (payload views are made once), and no table is needed for it.
    expect(structure(cb)).toEqual(structure(cb));
  });

  it('is FAILED_PRECONDITION before end() and works on a consumed one-shot buffer', () => {
    const cb = createCommandBuffer(device, { label: 'cb' });
    expectKeelError(
      () => cb.replayStructure(new ResolvingSink(new NoopSink())),
      'FAILED_PRECONDITION',
      "command buffer 'cb': replayStructure() called in state 'initial'; call end() first",
    );
    cb.begin();
    cb.barrier();
    expectKeelError(
      () => cb.replayStructure(new ResolvingSink(new NoopSink())),
      'FAILED_PRECONDITION',
      "command buffer 'cb': replayStructure() called in state 'recording'; call end() first",
    );
    cb.end();
    cb.validateSubmission();
    cb.markSubmitted();
    expect(cb.state).toBe('consumed');
    expect(structure(cb)).toEqual([{ op: 'barrier' }]);
  });

  it('reuses one bindings object and clears it afterwards; sink errors propagate', () => {
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
    const seen: StructureBindings[] = [];
    const sink = Object.assign(new ResolvingSink(new NoopSink()), {
      dispatch(
        _e: unknown,
        _n: number,
        _x: number,
        _y: number,
        _z: number,
        _c: Uint32Array,
        b: StructureBindings,
      ) {
        seen.push(b);
      },
    });
    cb.replayStructure(sink);
    cb.replay(new NoopSink(), [{ buffer: a }]);
    cb.replayStructure(sink);
    expect(seen).toHaveLength(4);
    for (const b of seen) expect(b).toBe(seen[0]);
    expect(seen[0]!.count).toBe(0);
    expect(seen[0]!.refs.every((r) => r === undefined)).toBe(true);

    const failing = Object.assign(new ResolvingSink(new NoopSink()), {
      dispatch() {
        throw new Error('sink failed');
      },
    });
    expect(() => cb.replayStructure(failing)).toThrow('sink failed');
    expect(seen[0]!.refs.every((r) => r === undefined)).toBe(true);
    expect(structure(cb)).toHaveLength(2);
  });
});
