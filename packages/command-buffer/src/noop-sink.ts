/**
 * A sink that ignores every command: for measuring replay itself, and for dry runs. It accepts refs as
 * `replayStructure` passes them (a Buffer or a slot index), so one NoopSink serves `replay` and
 * `replayStructure` alike.
 */
import type { CommandBindings, CommandSink, Executable, StructureRef } from '@keel/hal';

export class NoopSink implements CommandSink<StructureRef> {
  fill(
    _target: StructureRef,
    _offset: number,
    _length: number,
    _pattern: number,
    _patternLength: 1 | 2 | 4,
  ): void {}
  update(_source: Uint8Array, _target: StructureRef, _offset: number, _length: number): void {}
  copy(
    _source: StructureRef,
    _sourceOffset: number,
    _target: StructureRef,
    _targetOffset: number,
    _length: number,
  ): void {}
  dispatch(
    _executable: Executable,
    _entry: number,
    _x: number,
    _y: number,
    _z: number,
    _constants: Uint32Array,
    _bindings: CommandBindings<StructureRef>,
  ): void {}
  dispatchIndirect(
    _executable: Executable,
    _entry: number,
    _params: StructureRef,
    _paramsOffset: number,
    _constants: Uint32Array,
    _bindings: CommandBindings<StructureRef>,
  ): void {}
  barrier(): void {}
  beginDebugGroup(_label: string): void {}
  endDebugGroup(): void {}
}
