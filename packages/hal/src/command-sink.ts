/**
 * The receiving end of command replay. A command buffer replays its recorded commands, with every
 * reference resolved to a concrete buffer and absolute byte range, into a sink that a device implements
 * (e.g. by executing inline, or by encoding native commands). Arguments are positional so replay
 * allocates nothing per command.
 *
 * Ownership: `source` views passed to `update` and the `constants`/`bindings` of a dispatch are owned
 * by the replayer and valid only during the call; a sink that needs them later copies them.
 */
import type { Buffer } from './buffer';
import type { Executable } from './executable';

/**
 * The resolved bindings of one dispatch: binding i is bytes [offsets[i], offsets[i] + lengths[i]) of
 * buffers[i], for i < count. The replayer reuses one object across dispatches.
 */
export interface ResolvedBindings {
  readonly count: number;
  readonly buffers: readonly Buffer[];
  readonly offsets: ArrayLike<number>;
  readonly lengths: ArrayLike<number>;
}

export interface CommandSink {
  fill(target: Buffer, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void;
  /** Writes `source` (exactly `length` bytes, captured at record time) at `offset` of `target`. */
  update(source: Uint8Array, target: Buffer, offset: number, length: number): void;
  copy(source: Buffer, sourceOffset: number, target: Buffer, targetOffset: number, length: number): void;
  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
  ): void;
  /** Reads the workgroup count as three u32 (x, y, z) at `paramsOffset` of `params` when it executes. */
  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: Buffer,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: ResolvedBindings,
  ): void;
  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void;
  beginDebugGroup(label: string): void;
  endDebugGroup(): void;
}

/**
 * The length a structural ref carries when the command uses "the rest of the range the slot gets":
 * the binding's `length` (or the rest of its buffer after the binding's `offset`) minus the ref's
 * offset. Only slot refs carry it; a direct ref's omitted length was resolved at record time.
 */
export const TO_END = -1;

/**
 * A buffer argument of `CommandBuffer.replayStructure`, left unresolved: either the direct `Buffer` the
 * command was recorded with, or the binding-table slot index (a number: `typeof ref === 'number'`).
 */
export type StructureRef = Buffer | number;

/**
 * The unresolved bindings of one dispatch: binding i is `refs[i]` at `offsets[i]` with `lengths[i]`
 * bytes (TO_END for a slot ref without a length), for i < count. The replayer reuses one object.
 */
export interface StructureBindings {
  readonly count: number;
  readonly refs: readonly StructureRef[];
  readonly offsets: ArrayLike<number>;
  readonly lengths: ArrayLike<number>;
}

/**
 * The receiving end of `CommandBuffer.replayStructure`: the recorded commands, in order, with every
 * buffer argument as recorded rather than resolved through a binding table. A device uses it to build
 * its own replay plan once per command buffer (which refs are slots, with which slot-relative ranges).
 *
 * Refs: a direct ref arrives as its Buffer with an absolute offset and a concrete length. A slot ref
 * arrives as the slot index with an offset relative to the binding's offset and a concrete length, or
 * TO_END (fill targets and dispatch bindings recorded without a length). Update, copy and indirect
 * parameter lengths are always concrete. Ownership is as for CommandSink: `source`, `constants` and
 * `bindings` are the replayer's and valid only during the call.
 */
export interface StructureSink {
  fill(target: StructureRef, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void;
  update(source: Uint8Array, target: StructureRef, offset: number, length: number): void;
  copy(
    source: StructureRef,
    sourceOffset: number,
    target: StructureRef,
    targetOffset: number,
    length: number,
  ): void;
  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): void;
  /** The 12 bytes of workgroup count (x, y, z as u32) are at `paramsOffset` of `params`. */
  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: StructureRef,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): void;
  barrier(): void;
  beginDebugGroup(label: string): void;
  endDebugGroup(): void;
}
