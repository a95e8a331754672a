/**
 * A sink that records every replayed command as a plain object. For tests and debugging: it allocates
 * per command and copies the replayer-owned `source`, `constants` and `bindings` (which are valid only
 * during the call). `new RecordingSink()` takes `replay`'s resolved refs (concrete buffers, absolute
 * offsets); `new RecordingSink<StructureRef>()` also takes `replayStructure`'s refs as recorded (slot
 * indices where a slot ref was recorded, slot-relative offsets, TO_END lengths): one sink type for both.
 */
import type { Buffer, CommandBindings, CommandSink, Executable, StructureRef } from '@keel/hal';

/** One dispatch binding, as the sink received it. */
export interface ResolvedBinding<Ref extends StructureRef = Buffer> {
  readonly buffer: Ref;
  readonly offset: number;
  readonly length: number;
}

export type ResolvedCommand<Ref extends StructureRef = Buffer> =
  | {
      readonly op: 'fill';
      readonly target: Ref;
      readonly offset: number;
      readonly length: number;
      readonly pattern: number;
      readonly patternLength: 1 | 2 | 4;
    }
  | {
      readonly op: 'update';
      readonly target: Ref;
      readonly offset: number;
      readonly length: number;
      /** A copy of the bytes, as captured at record time. */
      readonly data: Uint8Array;
    }
  | {
      readonly op: 'copy';
      readonly source: Ref;
      readonly sourceOffset: number;
      readonly target: Ref;
      readonly targetOffset: number;
      readonly length: number;
    }
  | {
      readonly op: 'dispatch';
      readonly executable: Executable;
      readonly entry: number;
      readonly workgroupCount: readonly [number, number, number];
      readonly constants: readonly number[];
      readonly bindings: readonly ResolvedBinding<Ref>[];
    }
  | {
      readonly op: 'dispatchIndirect';
      readonly executable: Executable;
      readonly entry: number;
      readonly params: Ref;
      readonly paramsOffset: number;
      readonly constants: readonly number[];
      readonly bindings: readonly ResolvedBinding<Ref>[];
    }
  | { readonly op: 'barrier' }
  | { readonly op: 'beginDebugGroup'; readonly label: string }
  | { readonly op: 'endDebugGroup' };

function copyBindings<Ref extends StructureRef>(bindings: CommandBindings<Ref>): ResolvedBinding<Ref>[] {
  const out: ResolvedBinding<Ref>[] = [];
  for (let i = 0; i < bindings.count; i++) {
    out.push({ buffer: bindings.buffers[i]!, offset: bindings.offsets[i]!, length: bindings.lengths[i]! });
  }
  return out;
}

export class RecordingSink<Ref extends StructureRef = Buffer> implements CommandSink<Ref> {
  /** Commands received since construction or the last `clear()`, in order. */
  readonly commands: ResolvedCommand<Ref>[] = [];

  clear(): void {
    this.commands.length = 0;
  }

  fill(target: Ref, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void {
    this.commands.push({ op: 'fill', target, offset, length, pattern, patternLength });
  }

  update(source: Uint8Array, target: Ref, offset: number, length: number): void {
    this.commands.push({ op: 'update', target, offset, length, data: source.slice() });
  }

  copy(source: Ref, sourceOffset: number, target: Ref, targetOffset: number, length: number): void {
    this.commands.push({ op: 'copy', source, sourceOffset, target, targetOffset, length });
  }

  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: CommandBindings<Ref>,
  ): void {
    this.commands.push({
      op: 'dispatch',
      executable,
      entry,
      workgroupCount: [x, y, z],
      constants: Array.from(constants),
      bindings: copyBindings(bindings),
    });
  }

  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: Ref,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: CommandBindings<Ref>,
  ): void {
    this.commands.push({
      op: 'dispatchIndirect',
      executable,
      entry,
      params,
      paramsOffset,
      constants: Array.from(constants),
      bindings: copyBindings(bindings),
    });
  }

  barrier(): void {
    this.commands.push({ op: 'barrier' });
  }

  beginDebugGroup(label: string): void {
    this.commands.push({ op: 'beginDebugGroup', label });
  }

  endDebugGroup(): void {
    this.commands.push({ op: 'endDebugGroup' });
  }
}
