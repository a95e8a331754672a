/**
 * A binding table supplies the concrete buffers for the indirect slots of a reusable command buffer at
 * submission: entry i substitutes slot i, as if the commands had been recorded with it. The device keeps
 * the table and the buffers it names alive until the execution that uses them completes; the caller may
 * reuse, change or drop the array and its entries right after `queueExecute` returns: the execution uses
 * the table as it was at the call (`snapshotBindingTable`, for device authors).
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
 * The first `length` entries of `table` as they are now (driver kit): a new array of new entries, so
 * a caller changing the array or an entry after `queueExecute` returned (an entry's buffer, offset or
 * length) changes nothing about an execution that runs later. Empty entries stay undefined.
 */
export function snapshotBindingTable(table: BindingTable, length = table.length): (Binding | undefined)[] {
  const copy = new Array<Binding | undefined>(length);
  for (let i = 0; i < length; i++) {
    const e = table[i];
    copy[i] =
      e === undefined || e === null ? undefined : { buffer: e.buffer, offset: e.offset, length: e.length };
  }
  return copy;
}
