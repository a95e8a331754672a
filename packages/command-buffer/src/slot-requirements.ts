/**
 * Per-slot requirements of indirect refs (seed 000, § Validation): while recording, every command that
 * names a binding-table slot adds to that slot's requirements; at submission the binding table is
 * checked against them in O(slots used), never by walking the commands (./submission-validation).
 *
 * Per used slot, in first-use order: one row of a compact Int32Array (`rows`, `Col.COUNT` words a
 * row) and one entry of a Float64Array (`end`, which may exceed int32). The row's columns:
 * - `SLOT`: the slot index;
 * - `USAGE`: the usage bits of every command, OR-ed (plus DISPATCH_ANY for dispatch bindings);
 * - `end[k]`: the highest end offset any command uses, relative to the slot's binding offset (a ref
 *   whose length is omitted contributes its offset; indirect parameters contribute offset + 12);
 * - `OFFSET_ALIGN`: LCM of the commands' offset alignments; the binding's offset must be a multiple of it
 *   (each command's relative offset was checked against its own alignment at record time, so the
 *   absolute offset binding.offset + offset meets every command's alignment);
 * - `LENGTH_ALIGN`: LCM of the pattern lengths of fills that run to the end of the slot; the bytes
 *   visible through the slot must be a multiple of it, so that the fill's resolved length is.
 */
import { growTypedArray } from '@keel/hal/driver';
import { DISPATCH_ANY, lcm } from './usage-requirement';

/** A slot's accumulated requirements, as reported by `DeferredCommandBuffer.slotRequirements()`. */
export interface SlotRequirement {
  readonly slot: number;
  /** BufferUsage bits every command needs. */
  readonly usage: number;
  /** True when a dispatch binds the slot: the buffer needs DISPATCH_STORAGE or DISPATCH_UNIFORM. */
  readonly dispatchBinding: boolean;
  /** Bytes the slot's binding range must hold (highest end offset of any command). */
  readonly minByteLength: number;
  /** The binding's offset must be a multiple of this. */
  readonly offsetAlignment: number;
  /** The binding range's length must be a multiple of this (fills to the end of the slot). */
  readonly lengthAlignment: number;
}

/** The columns of a row of `SlotRequirements.rows` (a TS enum: inlined by bundlers). */
export enum Col {
  SLOT,
  USAGE,
  OFFSET_ALIGN,
  LENGTH_ALIGN,
  COUNT,
}

/**
 * Slots below this are found through a slot-indexed array (at most this many int32), higher ones
 * through a Map: memory and time follow the slots used, never the highest slot number (a capacity
 * allows slots up to 2^31 - 2).
 */
const DENSE_SLOTS = 4096;

export class SlotRequirements {
  /** Number of distinct slots used. */
  count = 0;
  /** Highest slot used, -1 when none. */
  maxSlot = -1;
  /**
   * Rows [0, count) in first-use order, `Col.COUNT` int32 words each (int32, so that submission's
   * alignment checks are integer `%`, not a float64 fmod); read by ./submission-validation.
   */
  rows = new Int32Array(8 * Col.COUNT);
  /** Each row's END (may exceed int32), by row. */
  end = new Float64Array(8);
  /** slot → row + 1 (0: unused) for slots below DENSE_SLOTS; grown to the highest such slot used. */
  #index = new Int32Array(8);
  /** slot → row for slots from DENSE_SLOTS on (made at the first one). */
  #sparse: Map<number, number> | undefined;

  /** Adds one command's requirements for `slot`. `lengthAlign` 1 means no length rule. */
  add(slot: number, usage: number, end: number, offsetAlign: number, lengthAlign: number): void {
    const index = this.#index;
    let k =
      slot < index.length ? index[slot]! - 1 : slot < DENSE_SLOTS ? -1 : (this.#sparse?.get(slot) ?? -1);
    if (k < 0) k = this.#insert(slot);
    const r = this.rows;
    const i = k * Col.COUNT;
    r[i + Col.USAGE]! |= usage;
    if (end > this.end[k]!) this.end[k] = end;
    r[i + Col.OFFSET_ALIGN] = lcm(r[i + Col.OFFSET_ALIGN]!, offsetAlign);
    r[i + Col.LENGTH_ALIGN] = lcm(r[i + Col.LENGTH_ALIGN]!, lengthAlign);
  }

  /** Notes that `slot` is used without tracking requirements (validation off). */
  note(slot: number): void {
    if (slot > this.maxSlot) this.maxSlot = slot;
  }

  #insert(slot: number): number {
    const k = this.count;
    if (slot >= DENSE_SLOTS) {
      this.#sparse ??= new Map();
      this.#sparse.set(slot, k);
    } else if (slot >= this.#index.length) {
      this.#index = growTypedArray(this.#index, this.#index.length, slot + 1);
    }
    const i = k * Col.COUNT;
    if (i === this.rows.length) {
      this.rows = growTypedArray(this.rows, i, i + Col.COUNT);
      this.end = growTypedArray(this.end, k, k + 1);
    }
    // A new row: usage and end stay 0 (rows past `count` are never written), alignments 1.
    const r = this.rows;
    r[i] = slot;
    r[i + Col.OFFSET_ALIGN] = r[i + Col.LENGTH_ALIGN] = 1;
    if (slot < DENSE_SLOTS) this.#index[slot] = k + 1;
    this.count = k + 1;
    this.note(slot);
    return k;
  }

  /** The accumulated requirements, one object per used slot in first-use order (for tests and plans). */
  toArray(): SlotRequirement[] {
    const out: SlotRequirement[] = [];
    const r = this.rows;
    for (let k = 0; k < this.count; k++) {
      const i = k * Col.COUNT;
      const usage = r[i + Col.USAGE]!;
      out.push({
        slot: r[i]!,
        usage: usage & ~DISPATCH_ANY,
        dispatchBinding: (usage & DISPATCH_ANY) !== 0,
        minByteLength: this.end[k]!,
        offsetAlignment: r[i + Col.OFFSET_ALIGN]!,
        lengthAlignment: r[i + Col.LENGTH_ALIGN]!,
      });
    }
    return out;
  }
}
