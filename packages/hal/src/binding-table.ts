/**
 * A binding table supplies the concrete buffers for the indirect slots of a reusable command buffer at
 * submission: entry i substitutes slot i, as if the commands had been recorded with it. The device keeps
 * the table and the buffers it names alive until the execution that uses them completes; the caller may
 * reuse or drop the array right after `queueExecute` returns.
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
