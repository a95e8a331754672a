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
