/**
 * The receiving end of command replay: one sink interface for both walks a command buffer offers.
 * `CommandBuffer.replay(sink, table)` calls a `CommandSink` (= `CommandSink<Buffer>`) with every
 * reference resolved to a concrete buffer and absolute byte range; `CommandBuffer.replayStructure(sink)`
 * calls a `CommandSink<StructureRef>` with references as recorded (a slot ref as its slot index and
 * slot-relative range), so a device builds its own replay plan. One encoding of a buffer argument,
 * `(ref, offset, length)`, serves both: resolved replay is the case where every ref is a Buffer and no
 * length is TO_END. A sink of `CommandSink<StructureRef>` is also a `CommandSink` (it accepts every
 * Buffer). Arguments are positional so replay allocates nothing per command.
 *
 * Ownership: `source` views passed to `update` and the `constants`/`bindings` of a dispatch are owned
 * by the replayer and valid only during the call; a sink that needs them later copies them.
 */
import type { Buffer } from './buffer';
import type { Executable } from './executable';

/**
 * The length a structural ref carries when the command uses "the rest of the range the slot gets":
 * the binding's `length` (or the rest of its buffer after the binding's `offset`) minus the ref's
 * offset. Only slot refs carry it; a direct ref's omitted length was resolved at record time.
 */
export const TO_END = -1;

/**
 * A buffer argument as a sink receives it: a `Buffer` (every ref in `replay`; direct refs in
 * `replayStructure`), or a binding-table slot index (a number: `typeof ref === 'number'`; only
 * `replayStructure` passes these).
 */
export type StructureRef = Buffer | number;

/**
 * The bindings of one dispatch: binding i is `buffers[i]` (a Buffer, or in a structural replay possibly
 * a slot index) at `offsets[i]` with `lengths[i]` bytes (TO_END for a slot ref without a length), for
 * i < count. The replayer reuses one object across dispatches.
 */
export interface CommandBindings<Ref extends StructureRef = Buffer> {
  readonly count: number;
  readonly buffers: readonly Ref[];
  readonly offsets: ArrayLike<number>;
  readonly lengths: ArrayLike<number>;
}

/**
 * What a replay calls, command by command, in recorded order. `Ref` is `Buffer` for `replay` (refs
 * resolved: absolute offsets, concrete lengths) and `StructureRef` for `replayStructure`, where a slot
 * ref arrives as the slot index with an offset relative to the binding's offset and a concrete length,
 * or TO_END (fill targets and dispatch bindings recorded without a length); a direct ref arrives as its
 * Buffer with an absolute offset and a concrete length. Update, copy and indirect parameter lengths are
 * always concrete.
 */
export interface CommandSink<Ref extends StructureRef = Buffer> {
  fill(target: Ref, offset: number, length: number, pattern: number, patternLength: 1 | 2 | 4): void;
  /** Writes `source` (exactly `length` bytes, captured at record time) at `offset` of `target`. */
  update(source: Uint8Array, target: Ref, offset: number, length: number): void;
  copy(source: Ref, sourceOffset: number, target: Ref, targetOffset: number, length: number): void;
  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: CommandBindings<Ref>,
  ): void;
  /** Reads the workgroup count as three u32 (x, y, z) at `paramsOffset` of `params` when it executes. */
  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: Ref,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: CommandBindings<Ref>,
  ): void;
  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void;
  beginDebugGroup(label: string): void;
  endDebugGroup(): void;
}

/** @deprecated Use `CommandBindings` (the same shape). */
export type ResolvedBindings = CommandBindings<Buffer>;

/**
 * @deprecated Use `CommandBindings<StructureRef>`; `refs` is `buffers` under its old name (the
 * replayer passes one array under both names until devices have migrated).
 */
export type StructureBindings = CommandBindings<StructureRef> & { readonly refs: readonly StructureRef[] };

/** @deprecated Use `CommandSink<StructureRef>` (one sink type for `replay` and `replayStructure`). */
export type StructureSink = CommandSink<StructureRef>;
