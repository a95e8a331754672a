/**
 * A sink that ignores every command: for measuring replay itself, and for dry runs.
 */
import type { Buffer, CommandSink, Executable, ResolvedBindings } from '@keel/hal';

export class NoopSink implements CommandSink {
  fill(
    _target: Buffer,
    _offset: number,
    _length: number,
    _pattern: number,
    _patternLength: 1 | 2 | 4,
  ): void {}
  update(_source: Uint8Array, _target: Buffer, _offset: number, _length: number): void {}
  copy(
    _source: Buffer,
    _sourceOffset: number,
    _target: Buffer,
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
    _bindings: ResolvedBindings,
  ): void {}
  dispatchIndirect(
    _executable: Executable,
    _entry: number,
    _params: Buffer,
    _paramsOffset: number,
    _constants: Uint32Array,
    _bindings: ResolvedBindings,
  ): void {}
  barrier(): void {}
  beginDebugGroup(_label: string): void {}
  endDebugGroup(): void {}
}
