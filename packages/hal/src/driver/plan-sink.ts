/**
 * The structural-replay side (a `CommandSink<StructureRef>`) of a device plan builder (driver kit): receives `replayStructure`'s commands,
 * turns every buffer argument into a ref of one RefTableBuilder (one encoding, ref-table.ts), and hands
 * the device narrow hooks with ref indices instead of raw refs. Dispatches arrive as one reused
 * DispatchArgs (valid only during the hook, like replayStructure's own arguments).
 */
import type { Buffer } from '../buffer';
import type { CommandBindings, CommandSink, StructureRef } from '../command-sink';
import type { Executable } from '../executable';
import { RefTableBuilder } from './ref-table';

/** One dispatch as a plan builder receives it (reused: valid only during `onDispatch`). */
export interface DispatchArgs {
  executable: Executable;
  entry: number;
  /** Workgroup counts of a direct dispatch (0 for an indirect one). */
  x: number;
  y: number;
  z: number;
  /** An indirect dispatch's parameters (undefined for a direct one) and their offset. */
  params: StructureRef | undefined;
  paramsOffset: number;
  constants: Uint32Array;
  bindings: CommandBindings<StructureRef>;
}

const NO_CONSTANTS = new Uint32Array(0);
const NO_BINDINGS: CommandBindings<StructureRef> = { count: 0, buffers: [], offsets: [], lengths: [] };

export abstract class PlanSink<B extends Buffer> implements CommandSink<StructureRef> {
  declare readonly refs: RefTableBuilder<B>;
  readonly #args: DispatchArgs = {
    executable: undefined as unknown as Executable,
    entry: 0,
    x: 0,
    y: 0,
    z: 0,
    params: undefined,
    paramsOffset: 0,
    constants: NO_CONSTANTS,
    bindings: NO_BINDINGS,
  };

  constructor(accept: (buffer: Buffer, what: string) => B) {
    this.refs = new RefTableBuilder(accept);
  }

  /** A fill of ref `ref` (its range is the fill's). */
  protected abstract onFill(ref: number, pattern: number, patternLength: 1 | 2 | 4): void;
  /** An update of ref `ref` with the first `length` bytes of `source` (the replayer's: copy them). */
  protected abstract onUpdate(source: Uint8Array, ref: number, length: number): void;
  /** A copy from ref `source` to ref `target` (equal lengths). */
  protected abstract onCopy(source: number, target: number): void;
  /** A direct (`args.params` undefined) or indirect dispatch. */
  protected abstract onDispatch(args: DispatchArgs): void;

  fill(
    target: StructureRef,
    offset: number,
    length: number,
    pattern: number,
    patternLength: 1 | 2 | 4,
  ): void {
    this.onFill(this.refs.push(target, offset, length, 'fill target'), pattern, patternLength);
  }

  update(source: Uint8Array, target: StructureRef, offset: number, length: number): void {
    this.onUpdate(source, this.refs.push(target, offset, length, 'update target'), length);
  }

  copy(
    source: StructureRef,
    sourceOffset: number,
    target: StructureRef,
    targetOffset: number,
    length: number,
  ): void {
    const s = this.refs.push(source, sourceOffset, length, 'copy source');
    this.onCopy(s, this.refs.push(target, targetOffset, length, 'copy target'));
  }

  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: CommandBindings<StructureRef>,
  ): void {
    this.#dispatch(executable, entry, x, y, z, undefined, 0, constants, bindings);
  }

  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: StructureRef,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: CommandBindings<StructureRef>,
  ): void {
    this.#dispatch(executable, entry, 0, 0, 0, params, paramsOffset, constants, bindings);
  }

  #dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    params: StructureRef | undefined,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: CommandBindings<StructureRef>,
  ): void {
    const a = this.#args;
    a.executable = executable;
    a.entry = entry;
    a.x = x;
    a.y = y;
    a.z = z;
    a.params = params;
    a.paramsOffset = paramsOffset;
    a.constants = constants;
    a.bindings = bindings;
    try {
      this.onDispatch(a);
    } finally {
      a.executable = undefined as unknown as Executable;
      a.params = undefined;
      a.constants = NO_CONSTANTS;
      a.bindings = NO_BINDINGS;
    }
  }

  barrier(): void {}

  beginDebugGroup(_label: string): void {}

  endDebugGroup(): void {}
}
