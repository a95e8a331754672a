/**
 * The one queue-operation record of the driver kit: every kind's payload in one object, so a device's
 * queue calls fill a record instead of allocating per-kind objects. Devices extend it with their own
 * fields (CPU: retained buffers and plans; WebGPU: staging and error-scope state) and pool it
 * (record-pool.ts): `reset()` drops every reference the record holds (a device overrides it for its own
 * fields), and `generation` tells a use of a pooled record from the next one.
 *
 * `OpKind` numbers the kinds once for every device; `OP_NAMES[kind]` is the Device method that made it.
 */
import { Fence, type Registration } from '@keel/fence';
import type { BindingTable } from '../binding-table';
import type { Buffer } from '../buffer';
import type { CommandBuffer } from '../command-buffer';
import type { TraceRecorder } from './trace-recorder';

export const OpKind = {
  FILL: 0,
  UPDATE: 1,
  COPY: 2,
  READ: 3,
  WRITE: 4,
  BARRIER: 5,
  HOST_CALL: 6,
  EXECUTE: 7,
} as const;
export type OpKind = (typeof OpKind)[keyof typeof OpKind];

/** The Device method of each OpKind (index = kind). */
export const OP_NAMES: readonly string[] = Object.freeze([
  'queueFill',
  'queueUpdate',
  'queueCopy',
  'queueRead',
  'queueWrite',
  'queueBarrier',
  'queueHostCall',
  'queueExecute',
]);

const NO_COMMAND_BUFFERS: readonly CommandBuffer[] = Object.freeze([]);

/** One queue operation's arguments, as the queue front checked them. */
export class QueueRecord<B extends Buffer = Buffer> {
  kind: OpKind = OpKind.BARRIER;
  queue = 0;
  wait: Fence = Fence.empty;
  signal: Fence = Fence.empty;
  /** The registration on `wait` while the operation waits for it. */
  registration: Registration | undefined;

  // Transfers.
  target: B | undefined;
  targetOffset = 0;
  source: B | undefined;
  sourceOffset = 0;
  length = 0;
  pattern = 0;
  patternLength = 1;
  /** queueUpdate/queueWrite: the source bytes; queueRead: the host target bytes. */
  bytes: Uint8Array | undefined;
  /** queueHostCall's callback. */
  callback: (() => void | Promise<void>) | undefined;

  // Executes.
  commandBuffers: readonly CommandBuffer[] = NO_COMMAND_BUFFERS;
  tables: readonly (BindingTable | undefined)[] | undefined;

  // Tracing (trace-recorder.ts): set only while a trace records, so an untraced record pays nothing.
  /** The trace that records this operation (stamped by the queue front), else undefined. */
  trace: TraceRecorder | undefined;
  /** Epoch ms of the call (traceNow), 0 when not traced. */
  traceEnqueued = 0;
  /** Epoch ms of the moment its waits were reached and it started (0: not yet). */
  traceStarted = 0;

  // Pooling (record-pool.ts).
  /**
   * Counts the record's uses: RecordPool.acquire increments it. Code that may still hold the record
   * after its operation completed (a callback registered on a fence or a promise) keeps the generation
   * it saw and ignores the record once that changed.
   */
  generation = 0;
  /** True while the record sits in a pool's free list (a second release is ignored). */
  pooled = false;

  /**
   * Drops every reference the record holds before it goes back to its pool (RecordPool.release). The
   * kit's fields by default; a device that adds fields overrides it and calls `resetRecord()`.
   */
  reset(): void {
    this.resetRecord();
  }

  /** Drops every reference the kit's fields hold (a pooled record keeps nothing alive). */
  resetRecord(): void {
    this.wait = Fence.empty;
    this.signal = Fence.empty;
    this.registration = undefined;
    this.target = undefined;
    this.source = undefined;
    this.bytes = undefined;
    this.callback = undefined;
    this.commandBuffers = NO_COMMAND_BUFFERS;
    this.tables = undefined;
    this.trace = undefined;
  }

  /** The Device method that made the record ("queueFill", …). */
  get method(): string {
    return OP_NAMES[this.kind] ?? 'operation';
  }
}
