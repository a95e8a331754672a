/**
 * Per-slot requirements of indirect refs (seed 000, § Validation): while recording, every command that
 * names a binding-table slot adds to that slot's requirements; at submission the binding table is
 * checked against them in O(slots used), never by walking the commands (./submission-validation).
 *
 * Per used slot, in compact parallel typed arrays (slot order = first use):
 * - `usage`: the usage bits of every command, OR-ed (plus DISPATCH_ANY for dispatch bindings);
 * - `end`: the highest end offset any command uses, relative to the slot's binding offset (a ref whose
 *   length is omitted contributes its offset; indirect parameters contribute offset + 12);
 * - `offsetAlign`: LCM of the commands' offset alignments; the binding's offset must be a multiple of it
 *   (each command's relative offset was checked against its own alignment at record time, so the
 *   absolute offset binding.offset + offset meets every command's alignment);
 * - `lengthAlign`: LCM of the pattern lengths of fills that run to the end of the slot; the bytes
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

export class SlotRequirements {
  /** Number of distinct slots used. */
  count = 0;
  /** Highest slot used, -1 when none. */
  maxSlot = -1;
  // Parallel arrays, entries [0, count) in first-use order; read by ./submission-validation.
  slots = new Int32Array(8);
  usage = new Int32Array(8);
  end = new Float64Array(8);
  offsetAlign = new Int32Array(8);
  lengthAlign = new Int32Array(8);
  /** slot → index + 1 into the arrays above (0: unused); grown to the highest slot used. */
  #index = new Int32Array(8);

  /** Adds one command's requirements for `slot`. `lengthAlign` 1 means no length rule. */
  add(slot: number, usage: number, end: number, offsetAlign: number, lengthAlign: number): void {
    let k = slot < this.#index.length ? this.#index[slot]! - 1 : -1;
    if (k < 0) k = this.#insert(slot);
    this.usage[k]! |= usage;
    if (end > this.end[k]!) this.end[k] = end;
    const oa = this.offsetAlign[k]!;
    if (oa !== offsetAlign) this.offsetAlign[k] = lcm(oa, offsetAlign);
    const la = this.lengthAlign[k]!;
    if (la !== lengthAlign) this.lengthAlign[k] = lcm(la, lengthAlign);
  }

  /** Notes that `slot` is used without tracking requirements (validation off). */
  note(slot: number): void {
    if (slot > this.maxSlot) this.maxSlot = slot;
  }

  #insert(slot: number): number {
    if (slot >= this.#index.length) this.#index = growTypedArray(this.#index, this.#index.length, slot + 1);
    const k = this.count;
    if (k === this.slots.length) {
      const n = k + 1;
      this.slots = growTypedArray(this.slots, k, n);
      this.usage = growTypedArray(this.usage, k, n);
      this.end = growTypedArray(this.end, k, n);
      this.offsetAlign = growTypedArray(this.offsetAlign, k, n);
      this.lengthAlign = growTypedArray(this.lengthAlign, k, n);
    }
    this.slots[k] = slot;
    this.usage[k] = 0;
    this.end[k] = 0;
    this.offsetAlign[k] = 1;
    this.lengthAlign[k] = 1;
    this.#index[slot] = k + 1;
    this.count = k + 1;
    if (slot > this.maxSlot) this.maxSlot = slot;
    return k;
  }

  /** The accumulated requirements, one object per used slot in first-use order (for tests and plans). */
  toArray(): SlotRequirement[] {
    const out: SlotRequirement[] = [];
    for (let k = 0; k < this.count; k++) {
      const usage = this.usage[k]!;
      out.push({
        slot: this.slots[k]!,
        usage: usage & ~DISPATCH_ANY,
        dispatchBinding: (usage & DISPATCH_ANY) !== 0,
        minByteLength: this.end[k]!,
        offsetAlignment: this.offsetAlign[k]!,
        lengthAlignment: this.lengthAlign[k]!,
      });
    }
    return out;
  }
}
