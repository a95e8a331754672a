/**
 * The one buffer-or-slot reference encoding of device plans, and the builder of a plan's ref table.
 *
 * A ref is REF_STRIDE float64 values: [code, offset, length]. `code >= 0` is a binding-table slot (the
 * slot index itself); `code < 0` is a direct buffer, index `-code - 1` into the plan's buffer list. For
 * a slot, `offset` is relative to the binding's offset and `length` is concrete or TO_END (-1: to the
 * end of the binding's range); for a direct buffer both are absolute and concrete.
 */
import type { Buffer } from '../buffer';
import type { StructureRef } from '../command-sink';
import { TypedArrayBuilder } from './growable';

/** float64 values per ref: [code, offset, length]. */
export const REF_STRIDE = 3;

/** The code of direct buffer `index` (negative). */
export function directCode(index: number): number {
  return -index - 1;
}

/** True when `code` names a binding-table slot (its index is the code itself). */
export function isSlotCode(code: number): boolean {
  return code >= 0;
}

/** The direct buffer index of a (negative) `code`. */
export function directIndex(code: number): number {
  return -code - 1;
}

/**
 * Builds a plan's ref table from replayStructure refs: direct buffers are de-duplicated into `buffers`
 * (first use order), slots are collected in `slots`. `accept` checks a direct buffer (it throws for a
 * foreign one, naming `what`) and returns it as the device's buffer type.
 */
export class RefTableBuilder<B extends Buffer> {
  readonly values = new TypedArrayBuilder('Float64', 96);
  readonly buffers: B[] = [];
  /** Slots used (each once). */
  readonly slots = new Set<number>();
  /** The last pushed ref was a slot. */
  lastUsesSlot = false;
  readonly #index = new Map<B, number>();

  declare private readonly accept: (buffer: Buffer, what: string) => B;

  constructor(accept: (buffer: Buffer, what: string) => B) {
    this.accept = accept;
  }

  /** Refs pushed so far. */
  get count(): number {
    return this.values.length / REF_STRIDE;
  }

  /** Appends a ref; returns its index. */
  push(ref: StructureRef, offset: number, length: number, what: string): number {
    const index = this.count;
    let code: number;
    if (typeof ref === 'number') {
      this.slots.add(ref);
      code = ref;
      this.lastUsesSlot = true;
    } else {
      const buffer = this.accept(ref, what);
      let b = this.#index.get(buffer);
      if (b === undefined) {
        b = this.buffers.length;
        this.buffers.push(buffer);
        this.#index.set(buffer, b);
      }
      code = directCode(b);
      this.lastUsesSlot = false;
    }
    const v = this.values;
    v.push(code);
    v.push(offset);
    v.push(length);
    return index;
  }

  /**
   * The slots used, ascending, each once: what a plan resolves per submission (a slot is any integer
   * below the binding capacity, so a plan sizes its per-submission work by this list, never by the
   * highest slot).
   */
  usedSlots(): Int32Array {
    return Int32Array.from(this.slots).sort();
  }

  /** Drops the refs from index `count` on (their buffers and slots stay registered). */
  truncate(count: number): void {
    this.values.length = count * REF_STRIDE;
  }
}
