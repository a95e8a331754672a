/**
 * One sink type: `replay` and `replayStructure` call the same hal CommandSink interface, so the
 * package's sinks serve both walks: a `RecordingSink<StructureRef>` records `replayStructure` directly
 * (what the test-side ResolvingSink adapter reconstructs), a `NoopSink` takes either, and a sink written
 * once for structural refs receives only Buffers from `replay`.
 */
import {
  type Buffer,
  BufferUsage,
  type CommandBindings,
  type CommandSink,
  type StructureRef,
  slotRef,
  TO_END,
} from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCommandBuffer, NoopSink, RecordingSink } from '../src/index';
import { fixtureDevice } from './fixtures/fixture-device';
import { ResolvingSink } from './structure-sinks';

const device = fixtureDevice();
const ALL = BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS;
const exe = device.executable(
  [{ name: 'axpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] }],
  'kernels',
);

function recorded() {
  const weights = device.buffer(1024, ALL, 'weights');
  const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 3 });
  cb.begin();
  cb.fill(slotRef(2), 0x0102, 2);
  cb.update(new Uint32Array([1, 2]), slotRef(1, 8));
  cb.copy({ buffer: weights, offset: 64, length: 32 }, slotRef(1, 128));
  cb.dispatch(exe, 'axpy', {
    workgroupCount: [4, 2, 1],
    constants: [7, 1],
    bindings: [slotRef(0, 32), { buffer: weights, offset: 256 }],
  });
  cb.dispatch(exe, 'axpy', {
    indirect: slotRef(2, 16),
    constants: [3, 4],
    bindings: [{ buffer: weights }, slotRef(1, 0, 64)],
  });
  cb.end();
  return { cb, weights };
}

describe('one sink type for replay and replayStructure', () => {
  it('RecordingSink<StructureRef> records replayStructure as the contract states it', () => {
    const { cb, weights } = recorded();
    const sink = new RecordingSink<StructureRef>();
    cb.replayStructure(sink);
    expect(sink.commands).toEqual(ResolvingSink.record(cb));
    expect(sink.commands[0]).toEqual({
      op: 'fill',
      target: 2,
      offset: 0,
      length: TO_END,
      pattern: 0x0102,
      patternLength: 2,
    });
    expect(sink.commands[3]).toMatchObject({
      op: 'dispatch',
      bindings: [
        { buffer: 0, offset: 32, length: TO_END },
        { buffer: weights, offset: 256, length: 768 },
      ],
    });
  });

  it('a structural sink used for replay receives only resolved Buffers and concrete lengths', () => {
    const { cb } = recorded();
    const a = device.buffer(4096, ALL, 'a');
    const table = [{ buffer: a }, { buffer: a, offset: 1024 }, { buffer: a, offset: 2048, length: 256 }];
    const refs: StructureRef[] = [];
    const lengths: number[] = [];
    const base = new NoopSink();
    const sink: CommandSink<StructureRef> = Object.assign(base, {
      fill(target: StructureRef, _o: number, length: number) {
        refs.push(target);
        lengths.push(length);
      },
      dispatch(
        _e: unknown,
        _n: number,
        _x: number,
        _y: number,
        _z: number,
        _c: Uint32Array,
        b: CommandBindings<StructureRef>,
      ) {
        for (let i = 0; i < b.count; i++) {
          refs.push(b.buffers[i]!);
          lengths.push(b.lengths[i]!);
        }
      },
    });
    cb.replay(sink, table);
    expect(refs.length).toBe(3);
    expect(refs.every((r) => typeof r !== 'number')).toBe(true);
    expect(lengths).toEqual([256, 4096 - 32, 768]);
    // The same sink object takes the structural walk: slot indices and TO_END arrive.
    refs.length = 0;
    lengths.length = 0;
    cb.replayStructure(sink);
    expect(refs.slice(0, 2)).toEqual([2, 0]);
    expect(lengths.slice(0, 2)).toEqual([TO_END, TO_END]);
  });

  it('replay into RecordingSink<StructureRef> equals replay into RecordingSink', () => {
    const { cb } = recorded();
    const a = device.buffer(4096, ALL, 'a');
    const table = [{ buffer: a }, { buffer: a, offset: 1024 }, { buffer: a, offset: 2048, length: 256 }];
    const structural = new RecordingSink<StructureRef>();
    const resolved = new RecordingSink<Buffer>();
    cb.replay(structural, table);
    cb.replay(resolved, table);
    expect(structural.commands).toEqual(resolved.commands);
    expect(resolved.commands).toHaveLength(5);
  });
});
