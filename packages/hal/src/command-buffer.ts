/**
 * The command-buffer contract (seed 000: reusable indirect command buffers). A command buffer records
 * commands once and is submitted with `queueExecute`; `reusable` buffers may be submitted many times,
 * each time with a binding table that substitutes its indirect slots. @keel/command-buffer implements
 * this interface; devices create them with `createCommandBuffer`.
 */
import type { BindingTable } from './binding-table';
import type { BufferRef } from './buffer-ref';
import type { CommandSink, StructureRef } from './command-sink';
import type { Device } from './device';
import type { Executable, WorkgroupCount } from './executable';
import type { QueueAffinity } from './queue-affinity';

export type CommandBufferMode = 'one-shot' | 'reusable';

export interface CommandBufferOptions {
  /** Defaults to 'one-shot'. A one-shot buffer submitted twice is FAILED_PRECONDITION. */
  readonly mode?: CommandBufferMode;
  /** Number of binding-table slots indirect refs may name (slot < bindingCapacity). Defaults to 0. */
  readonly bindingCapacity?: number;
  /** Queues it may be submitted to. Defaults to ANY. */
  readonly affinity?: QueueAffinity;
  /** Record- and submit-time validation; defaults to true. `false` skips it (trusted callers only). */
  readonly validation?: boolean;
  readonly label?: string;
}

/**
 * How a dispatch chooses its workgroup count: explicitly, from a workload through the export's
 * `workgroupCount` (evaluated at record time), or indirectly from 12 bytes (x, y, z as u32) read on the
 * device when the dispatch executes (the ref needs DISPATCH_INDIRECT_PARAMETERS usage).
 */
export type DispatchCount =
  | { readonly workgroupCount: WorkgroupCount }
  | { readonly workload: readonly number[] }
  | { readonly indirect: BufferRef };

export type DispatchConfig = DispatchCount & {
  /** 32-bit constants (numbers are stored as u32; bit-cast floats first). Count must match the export. */
  readonly constants?: Uint32Array | readonly number[];
  /** One ref per binding of the export; may be omitted when the export takes none. */
  readonly bindings?: readonly BufferRef[];
};

/**
 * Lifecycle: `initial` → begin() → `recording` → end() → `executable`. A one-shot buffer becomes
 * `consumed` once submitted.
 */
export type CommandBufferState = 'initial' | 'recording' | 'executable' | 'consumed';

export interface CommandBuffer {
  readonly device: Device;
  readonly mode: CommandBufferMode;
  readonly bindingCapacity: number;
  readonly affinity: QueueAffinity;
  readonly validation: boolean;
  readonly state: CommandBufferState;
  readonly label?: string | undefined;
  /** Commands recorded (debug-group markers included). */
  readonly commandCount: number;

  begin(): void;
  end(): void;
  /** Fills the range with `pattern`; offset and length are multiples of `patternLength`. */
  fill(target: BufferRef, pattern: number, patternLength: 1 | 2 | 4): void;
  /** Copies `source` (≤ 64 KiB) into the command buffer now; the bytes land when the command runs. */
  update(source: ArrayBufferView, target: BufferRef): void;
  /** Copies `source` to `target`; lengths must match when both are given; ranges of one buffer must not overlap. */
  copy(source: BufferRef, target: BufferRef): void;
  dispatch(executable: Executable, entry: string | number, config: DispatchConfig): void;
  barrier(): void;
  beginDebugGroup(label: string): void;
  endDebugGroup(): void;

  /**
   * Validates a submission in O(slots used): state (executable; one-shot not yet consumed), the table
   * is present and long enough, and each used slot holds a live buffer of this device with the usage,
   * range and alignment its commands need. Throws a KeelError naming the slot and the rule.
   */
  validateSubmission(bindingTable?: BindingTable): void;
  /**
   * Marks one submission: a one-shot buffer becomes `consumed` (a second submission is
   * FAILED_PRECONDITION). Devices call this from `queueExecute` after `validateSubmission`.
   */
  markSubmitted(): void;
  /** Replays every command into `sink`, resolving indirect refs through `bindingTable`. */
  replay(sink: CommandSink, bindingTable?: BindingTable): void;
  /**
   * Replays every command, in order, into `sink` with refs unresolved (see CommandSink): a direct
   * ref as its Buffer and absolute range, a slot ref as its slot index, slot-relative offset and length
   * (TO_END when it runs to the end of the slot's range). Needs no binding table and validates no
   * slot. `replay(sink, table)` equals this replay with every slot ref `(s, offset, length)` resolved
   * to `table[s].buffer`, `(table[s].offset ?? 0) + offset` and, for TO_END,
   * `(table[s].length ?? buffer.byteLength - (table[s].offset ?? 0)) - offset`.
   * Allocates nothing per command. FAILED_PRECONDITION before `end()`; a consumed one-shot buffer
   * still replays. For devices that build their own plan once (`devicePlan`).
   */
  replayStructure(sink: CommandSink<StructureRef>): void;
  /**
   * A device-owned replay plan cached on this command buffer under `key` (built once by `build`, e.g.
   * at the first submission); it lives as long as the command buffer. Command buffers are never re-recorded.
   */
  devicePlan<T>(key: object, build: (commandBuffer: CommandBuffer) => T): T;
}
