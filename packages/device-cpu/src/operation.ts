/**
 * One queue operation as the CPU device tracks it: the driver kit's QueueRecord (hal/driver) plus the
 * CPU's state, from the call (WAITING, registered on its wait fence) through READY and RUNNING to
 * DONE (signal signalled or failed, buffers released). One object per operation carries every kind's
 * payload, and the objects are pooled (hal/driver RecordPool, owned by the run loop): a record's
 * callback is bound once when it is made, and its arrays (retained buffers, plans, the binding entries
 * snapshotted at the call, the resolved tables of a sync run) are reused by its later operations, so a
 * warm queue call allocates no record, no closure and no array.
 *
 * Arrays are filled up to their own counts and never shortened: shortening a V8 array to 0 and
 * growing it again reallocates it. `reset()` clears the slots used (a pooled record keeps nothing
 * alive) and drops arrays that a large operation grew past what a pooled record should keep.
 */
import type { KeelError } from '@keel/fence';
import type { CommandBuffer } from '@keel/hal';
import { QueueRecord } from '@keel/hal/driver';
import type { CpuBuffer } from './cpu-buffer';
import { type CpuPlan, NO_ENTRY } from './cpu-plan';
import type { PlanRuntime } from './executor';

/** Where an operation is: waiting for its wait fence, ready (in the run list), running, done. */
export enum OperationState {
  WAITING,
  READY,
  RUNNING,
  /** Completed, or in the pool. */
  DONE,
}

/** The device side an operation reports to. */
export interface OperationSink {
  operationReady(op: Operation, error: KeelError | undefined): void;
}

/** Binding entries (and float64 words of resolved tables) a pooled record keeps arrays for. */
const KEEP_ENTRIES = 1024;

const NO_COMMAND_BUFFERS: readonly CommandBuffer[] = Object.freeze([]);

export class Operation extends QueueRecord<CpuBuffer> {
  state = OperationState.DONE;
  /** "device 'cpu' queueFill": how messages name the operation (set by the device per use). */
  name = '';
  /** Buffers retained until completion (released exactly once): `buffers[0, bufferCount)`. */
  buffers: (CpuBuffer | undefined)[] = [];
  bufferCount = 0;
  /** Executes: sequence number on its queue's executors (workers or sync queue), -1 until it runs. */
  seq = -1;
  /** Executes: the plans of its command buffers, in order: `plans[0, planCount)`. */
  plans: (CpuPlan | undefined)[] = [];
  planCount = 0;
  /**
   * Executes: the binding entries its plans use, as they were at the call (the caller may change the
   * tables right after queueExecute returns): plan i's k-th used slot is entry `base_i + k`, where
   * base_i sums the used slots of the plans before it. `entryBuffers[e]` is NO_ENTRY when the table
   * had no entry there (or there was no table); `entryCount` entries are set.
   */
  entryBuffers: unknown[] = [];
  entryOffsets: (number | undefined)[] = [];
  entryLengths: (number | undefined)[] = [];
  entryCount = 0;
  /** Sync-mode executes: per plan, its runtime and its resolved table (exactly planCount long). */
  runtimes: (PlanRuntime | undefined)[] = [];
  resolved: Float64Array[] = [];
  /** In the run loop's list of pending operations (intrusive: no allocation per operation). */
  prev: Operation | undefined = undefined;
  next: Operation | undefined = undefined;

  declare readonly onReady: (error?: KeelError) => void;

  /** A record whose wait callback reports to `sink` (made by the run loop's pool, then reused). */
  constructor(sink: OperationSink) {
    super();
    this.onReady = (error?: KeelError) => sink.operationReady(this, error);
  }

  /** Retains `buffer` until the operation completes. */
  retainBuffer(buffer: CpuBuffer): void {
    buffer.retain();
    this.buffers[this.bufferCount++] = buffer;
  }

  /** Releases the retained buffers (once: the list is emptied). */
  releaseBuffers(): void {
    const buffers = this.buffers;
    const count = this.bufferCount;
    this.bufferCount = 0;
    for (let i = 0; i < count; i++) {
      const buffer = buffers[i]!;
      buffers[i] = undefined;
      buffer.unretain();
    }
  }

  /**
   * Snapshots a binding entry (a table's entry, or undefined/null for none) as entry `entryCount`:
   * reads its buffer, offset and length once. Returns the buffer when it is the device's kind of
   * buffer (to retain), else undefined.
   */
  addEntry(entry: { buffer: unknown; offset?: number; length?: number } | null | undefined): unknown {
    const e = this.entryCount++;
    if (entry === undefined || entry === null) {
      this.entryBuffers[e] = NO_ENTRY;
      this.entryOffsets[e] = undefined;
      this.entryLengths[e] = undefined;
      return undefined;
    }
    const buffer = entry.buffer;
    this.entryBuffers[e] = buffer;
    this.entryOffsets[e] = entry.offset;
    this.entryLengths[e] = entry.length;
    return buffer;
  }

  /** The command buffers a trace names (the caller's array is not kept: a copy when traced). */
  keepCommandBuffers(commandBuffers: readonly CommandBuffer[]): void {
    this.commandBuffers = this.trace ? commandBuffers.slice() : NO_COMMAND_BUFFERS;
  }

  override reset(): void {
    this.resetRecord();
    this.state = OperationState.DONE;
    this.seq = -1;
    this.releaseBuffers();
    const plans = this.plans;
    for (let i = 0; i < this.planCount; i++) plans[i] = undefined;
    this.planCount = 0;
    const entries = this.entryCount;
    this.entryCount = 0;
    if (entries > KEEP_ENTRIES) {
      this.entryBuffers = [];
      this.entryOffsets = [];
      this.entryLengths = [];
    } else {
      this.entryBuffers.fill(undefined, 0, entries);
    }
    const runtimes = this.runtimes;
    for (let i = 0; i < runtimes.length; i++) runtimes[i] = undefined;
    const resolved = this.resolved;
    for (let i = 0; i < resolved.length; i++) {
      if (resolved[i]!.length > KEEP_ENTRIES) {
        this.runtimes = [];
        this.resolved = [];
        break;
      }
    }
  }

  /** Fills the record in for one use: its name, and waiting. */
  begin(name: string): void {
    this.name = name;
    this.state = OperationState.WAITING;
  }
}
