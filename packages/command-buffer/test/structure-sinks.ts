/**
 * A test sink for `replayStructure`: it resolves each slot ref through a binding table exactly as hal's
 * CommandBuffer.replayStructure contract states and forwards to a CommandSink, so that the result can
 * be compared with `replay`. Without a table it forwards refs as they arrive (a slot index where a
 * buffer would be, TO_END lengths kept), so a RecordingSink behind it records the structure itself.
 */
import {
  type BindingTable,
  type Buffer,
  type CommandBuffer,
  type CommandSink,
  type Executable,
  type ResolvedBindings,
  type StructureBindings,
  type StructureRef,
  type StructureSink,
  TO_END,
} from '@keel/hal';
import { RecordingSink, type ResolvedCommand } from '../src/index';

/** Resolves structural refs through `table` (the formula of the contract) and forwards to `sink`. */
export class ResolvingSink implements StructureSink {
  private buffer: Buffer | undefined;
  private offset = 0;
  private length = 0;
  private readonly bindings = {
    count: 0,
    buffers: [] as Buffer[],
    offsets: [] as number[],
    lengths: [] as number[],
  };

  constructor(
    private readonly sink: CommandSink,
    private readonly table?: BindingTable,
  ) {}

  private resolve(ref: StructureRef, offset: number, length: number): void {
    if (typeof ref !== 'number' || this.table === undefined) {
      if (typeof ref !== 'number' && length === TO_END) throw new Error('a direct ref arrived with TO_END');
      this.buffer = ref as Buffer;
      this.offset = offset;
      this.length = length;
      return;
    }
    const entry = this.table[ref]!;
    const base = entry.offset ?? 0;
    this.buffer = entry.buffer;
    this.offset = base + offset;
    this.length = length === TO_END ? (entry.length ?? entry.buffer.byteLength - base) - offset : length;
  }

  /** What `commandBuffer.replayStructure` delivers, recorded (slot refs as their index), or resolved. */
  static record(commandBuffer: CommandBuffer, table?: BindingTable): ResolvedCommand[] {
    const sink = new RecordingSink();
    commandBuffer.replayStructure(new ResolvingSink(sink, table));
    return sink.commands;
  }

  private resolveBindings(bindings: StructureBindings): ResolvedBindings {
    const out = this.bindings;
    out.count = bindings.count;
    for (let i = 0; i < bindings.count; i++) {
      this.resolve(bindings.refs[i]!, bindings.offsets[i]!, bindings.lengths[i]!);
      out.buffers[i] = this.buffer!;
      out.offsets[i] = this.offset;
      out.lengths[i] = this.length;
    }
    return out;
  }

  fill(target: StructureRef, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4) {
    this.resolve(target, offset, length);
    this.sink.fill(this.buffer!, this.offset, this.length, pattern, patternLength);
  }
  update(source: Uint8Array, target: StructureRef, offset: number, length: number) {
    if (length === TO_END) throw new Error('an update arrived with TO_END');
    this.resolve(target, offset, length);
    this.sink.update(source, this.buffer!, this.offset, this.length);
  }
  copy(
    source: StructureRef,
    sourceOffset: number,
    target: StructureRef,
    targetOffset: number,
    length: number,
  ) {
    if (length === TO_END) throw new Error('a copy arrived with TO_END');
    this.resolve(source, sourceOffset, length);
    const s = this.buffer!;
    const so = this.offset;
    this.resolve(target, targetOffset, length);
    this.sink.copy(s, so, this.buffer!, this.offset, length);
  }
  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ) {
    this.sink.dispatch(executable, entry, x, y, z, constants, this.resolveBindings(bindings));
  }
  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: StructureRef,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ) {
    const resolved = this.resolveBindings(bindings);
    this.resolve(params, paramsOffset, 12);
    this.sink.dispatchIndirect(executable, entry, this.buffer!, this.offset, constants, resolved);
  }
  barrier() {
    this.sink.barrier();
  }
  beginDebugGroup(label: string) {
    this.sink.beginDebugGroup(label);
  }
  endDebugGroup() {
    this.sink.endDebugGroup();
  }
}
