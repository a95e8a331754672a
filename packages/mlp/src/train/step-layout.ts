/**
 * How the training step's buffers reach its command buffer: every buffer of the StepProgram is an
 * indirect reference (a binding-table slot), so one recording serves every step.
 *
 * - Parameters (`w{i}`, `b{i}`), the batch (`x`, `labels`) and the loss each get a slot of their own:
 *   parameters are the same resident buffers every step; the batch and the loss alternate between two
 *   buffers (double buffering).
 * - The temporaries (activations, their gradients, the per-row loss) are packed into one transient
 *   arena, one slot: each temporary is a fixed sub-range `slotRef(arena, offset, bytes)`, and each
 *   step binds a fresh queue-ordered allocation there (IREE's stream dialect packs an execution's
 *   transients the same way: one alloca per step instead of one per tensor).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { type IndirectBufferRef, slotRef } from '@keel/hal';
import type { StepProgram } from '../step-program';

/** Offset alignment of temporaries in the arena (at least the device's storage offset alignment). */
export const ARENA_ALIGNMENT = 256;

export interface StepLayout {
  /** Binding-table length. */
  readonly slotCount: number;
  /** Parameter buffer names (`w0`, `b0`, `w1`, ...) in slot order: parameter i is slot i. */
  readonly params: readonly string[];
  /** Byte sizes of the parameters, by slot. */
  readonly paramBytes: readonly number[];
  readonly xSlot: number;
  readonly labelsSlot: number;
  readonly lossSlot: number;
  readonly arenaSlot: number;
  readonly xBytes: number;
  readonly labelsBytes: number;
  /** Bytes of one step's transient arena. */
  readonly arenaBytes: number;
  /** The indirect reference a dispatch binds for the program buffer `name`. */
  ref(name: string): IndirectBufferRef;
}

const roundUp = (value: number, alignment: number): number => Math.ceil(value / alignment) * alignment;

/**
 * Lays out `program`'s buffers. `alignment` is the device's minStorageBufferOffsetAlignment (the arena
 * uses at least ARENA_ALIGNMENT). Throws INVALID_ARGUMENT for a program without the buffers the
 * training step has (x, labels, loss).
 */
export function planStepLayout(program: StepProgram, alignment: number): StepLayout {
  const align = Math.max(ARENA_ALIGNMENT, alignment);
  const params = program.buffers.filter((b) => b.role === 'param');
  const byName = new Map(program.buffers.map((b) => [b.name, b]));
  const bytesOf = (name: string): number => {
    const b = byName.get(name);
    if (b === undefined) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `step layout: the program has no buffer '${name}'`);
    }
    return b.bytes;
  };
  const xBytes = bytesOf('x');
  const labelsBytes = bytesOf('labels');
  bytesOf('loss');
  const refs = new Map<string, IndirectBufferRef>();
  for (const [i, b] of params.entries()) refs.set(b.name, slotRef(i));
  const xSlot = params.length;
  const labelsSlot = xSlot + 1;
  const lossSlot = xSlot + 2;
  const arenaSlot = xSlot + 3;
  refs.set('x', slotRef(xSlot));
  refs.set('labels', slotRef(labelsSlot));
  refs.set('loss', slotRef(lossSlot));
  let arenaBytes = 0;
  for (const b of program.buffers) {
    if (b.role !== 'temp') continue;
    refs.set(b.name, slotRef(arenaSlot, arenaBytes, b.bytes));
    arenaBytes = roundUp(arenaBytes + b.bytes, align);
  }
  return {
    slotCount: arenaSlot + 1,
    params: params.map((b) => b.name),
    paramBytes: params.map((b) => b.bytes),
    xSlot,
    labelsSlot,
    lossSlot,
    arenaSlot,
    xBytes,
    labelsBytes,
    arenaBytes,
    ref(name: string): IndirectBufferRef {
      const ref = refs.get(name);
      if (ref === undefined) {
        throw new KeelError(ErrorCode.INVALID_ARGUMENT, `step layout: the program has no buffer '${name}'`);
      }
      return ref;
    },
  };
}
