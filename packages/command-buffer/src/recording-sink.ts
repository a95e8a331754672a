/**
 * A sink that records every replayed command as a plain object, with all references already resolved
 * (concrete buffers, absolute offsets). For tests and debugging: it allocates per command and copies
 * the replayer-owned `source`, `constants` and `bindings` (which are valid only during the call).
 */
import type { Buffer, CommandSink, Executable, ResolvedBindings } from '@keel/hal';

/** One dispatch binding, resolved. */
export interface ResolvedBinding {
  readonly buffer: Buffer;
  readonly offset: number;
  readonly length: number;
}

export type ResolvedCommand =
  | {
      readonly op: 'fill';
      readonly target: Buffer;
      readonly offset: number;
      readonly length: number;
      readonly pattern: number;
      readonly patternLength: 1 | 2 | 4;
    }
  | {
      readonly op: 'update';
      readonly target: Buffer;
      readonly offset: number;
      readonly length: number;
      /** A copy of the bytes, as captured at record time. */
      readonly data: Uint8Array;
    }
  | {
      readonly op: 'copy';
      readonly source: Buffer;
      readonly sourceOffset: number;
      readonly target: Buffer;
      readonly targetOffset: number;
      readonly length: number;
    }
  | {
      readonly op: 'dispatch';
      readonly executable: Executable;
      readonly entry: number;
      readonly workgroupCount: readonly [number, number, number];
      readonly constants: readonly number[];
      readonly bindings: readonly ResolvedBinding[];
    }
  | {
      readonly op: 'dispatchIndirect';
      readonly executable: Executable;
      readonly entry: number;
      readonly params: Buffer;
      readonly paramsOffset: number;
      readonly constants: readonly number[];
      readonly bindings: readonly ResolvedBinding[];
    }
  | { readonly op: 'barrier' }
  | { readonly op: 'beginDebugGroup'; readonly label: string }
  | { readonly op: 'endDebugGroup' };

function copyBindings(bindings: ResolvedBindings): ResolvedBinding[] {
  const out: ResolvedBinding[] = [];
  for (let i = 0; i < bindings.count; i++) {
    out.push({ buffer: bindings.buffers[i]!, offset: bindings.offsets[i]!, length: bindings.lengths[i]! });
  }
  return out;
}

export class RecordingSink implements CommandSink {
  /** Commands received since construction or the last `clear()`, in order. */
  readonly commands: ResolvedCommand[] = [];

  clear(): void {
    this.commands.length = 0;
  }

  fill(target: Buffer, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void {
    this.commands.push({ op: 'fill', target, offset, length, pattern, patternLength });
  }

  update(source: Uint8Array, target: Buffer, offset: number, length: number): void {
    this.commands.push({ op: 'update', target, offset, length, data: source.slice() });
  }

  copy(source: Buffer, sourceOffset: number, target: Buffer, targetOffset: number, length: number): void {
    this.commands.push({ op: 'copy', source, sourceOffset, target, targetOffset, length });
  }

  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
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
    params: Buffer,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
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
