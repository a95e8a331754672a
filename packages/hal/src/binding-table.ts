/**
 * A binding table supplies the concrete buffers for the indirect slots of a reusable command buffer at
 * submission: entry i substitutes slot i, as if the commands had been recorded with it. The device keeps
 * the table and the buffers it names alive until the execution that uses them completes; the caller may
 * reuse, change or drop the array and its entries right after `queueExecute` returns: the execution uses
 * the table as it was at the call (`snapshotBindingTable`, for device authors). A slot may be any integer
 * below the command buffer's `bindingCapacity` (< 2^31): what a submission costs follows the slots the
 * commands use, never the highest slot number.
 */
import type { Buffer } from './buffer';

export interface Binding {
  readonly buffer: Buffer;
  /** Byte offset added to every command's slot-relative offset. Defaults to 0. */
  readonly offset?: number;
  /** Bytes of the buffer visible through the slot; omitted means to the end. */
  readonly length?: number;
}

export type BindingTable = readonly (Binding | undefined)[];

/**
 * The entries of `table` at `slots` as they are now (driver kit): a new array indexed by slot like
 * `table`, with a new entry for each of those slots that has one (an entry's buffer, offset and length),
 * so a caller changing the array or an entry after `queueExecute` returned changes nothing about an
 * execution that runs later. `slots` are the slots the command buffer uses (a device plan's list, or
 * `slotsUsedBy`); other entries are left out. Costs O(slots.length), whatever the table's length or the
 * highest slot: a table for slot 2^30 is a sparse array of length 2^30 + 1, and so is its copy.
 */
export function snapshotBindingTable(table: BindingTable, slots: ArrayLike<number>): (Binding | undefined)[] {
  const copy: (Binding | undefined)[] = [];
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k]!;
    const e = table[slot];
    if (e !== undefined && e !== null) copy[slot] = { buffer: e.buffer, offset: e.offset, length: e.length };
  }
  return copy;
}
