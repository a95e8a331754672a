/**
 * The compact form of a recorded command buffer that CPU queues execute (a "plan"). It is built once per
 * command buffer (at its first submission) and shipped once to every worker of a queue; each submission
 * then only sends the resolved binding table (`ResolvedTable`), so submission cost does not grow with
 * the command count.
 *
 * Layout (all little-endian typed arrays, in one SharedArrayBuffer in task mode):
 * - `commands`: CMD_STRIDE int32 per command, field meaning per opcode (see Cmd below);
 * - `refs`: REF_STRIDE float64 per buffer reference: [source, offset, length], in the driver kit's one
 *   encoding (@keel/hal/driver ref-table.ts), slots renumbered densely: `source` ≥ 0 is the plan's
 *   `source`-th used slot (its table slot is the CpuPlan's `slots[source]`); `source` < 0 is
 *   direct buffer `-source - 1`. `length` −1 means "to the end of
 *   the binding" (only for slots; direct refs are resolved at record time);
 * - `bindingRefs`: ref indices of dispatch bindings, `bindCount` per dispatch from `bindStart`;
 * - `constants`: u32 constants of dispatches;
 * - `data`: payloads of update commands.
 */
/** Opcodes. */
export enum Opcode {
  FILL = 1,
  UPDATE = 2,
  COPY = 3,
  DISPATCH = 4,
  DISPATCH_INDIRECT = 5,
  BARRIER = 6,
}

/** int32 fields per command. */
export const CMD_STRIDE = 10;
/** float64 fields per reference (the driver kit's REF_STRIDE, restated: the worker bundle stays small). */
export const REF_STRIDE = 3;
/** float64 fields per resolved table entry: [slab index, absolute byte offset, byte length]. */
export const RESOLVED_STRIDE = 3;

/**
 * Field offsets within a command record.
 * FILL:     [op, ref, pattern, patternLength]
 * UPDATE:   [op, ref, dataStart, length]
 * COPY:     [op, sourceRef, targetRef]
 * DISPATCH: [op, executable, entry, x, y, z, constStart, constCount, bindStart, bindCount]
 * DISPATCH_INDIRECT: [op, executable, entry, paramsRef, indirectIndex, -, constStart, constCount,
 *                     bindStart, bindCount]
 * BARRIER:  [op]
 * Opcodes lay out their own fields, so offsets repeat across them.
 */
// biome-ignore-start lint/suspicious/noDuplicateEnumValues: per-opcode layouts share offsets
export enum Field {
  OP = 0,
  REF = 1,
  PATTERN = 2,
  PATTERN_LENGTH = 3,
  DATA_START = 2,
  DATA_LENGTH = 3,
  SOURCE = 1,
  TARGET = 2,
  EXECUTABLE = 1,
  ENTRY = 2,
  X = 3,
  Y = 4,
  Z = 5,
  PARAMS_REF = 3,
  INDIRECT_INDEX = 4,
  CONST_START = 6,
  CONST_COUNT = 7,
  BIND_START = 8,
  BIND_COUNT = 9,
}
// biome-ignore-end lint/suspicious/noDuplicateEnumValues: per-opcode layouts share offsets

/** The arrays of a plan; structured-cloneable (the SharedArrayBuffers are shared, not copied). */
export interface PlanArrays {
  readonly commandCount: number;
  /** Distinct table slots the plan uses: entries [0, slotCount) of a resolved table, ascending by slot. */
  readonly slotCount: number;
  /** Direct buffers: entries [slotCount, slotCount + directCount) of a resolved table. */
  readonly directCount: number;
  /** Number of DISPATCH_INDIRECT commands (each needs 4 words of scratch when run by several workers). */
  readonly indirectCount: number;
  readonly commands: Int32Array;
  readonly refs: Float64Array;
  readonly bindingRefs: Int32Array;
  readonly constants: Uint32Array;
  readonly data: Uint8Array;
}

/** Bytes above which fills and copies are split into several work items. */
export const TRANSFER_CHUNK = 262_144; // 256 KiB

/** Most workgroups per dimension of one dispatch (the device limit `maxWorkgroupCount`). */
export const MAX_WORKGROUP_COUNT = 65535;

/** Most work items one dispatch may have (x·y·z), so that item indices stay within 31 bits. */
export const MAX_DISPATCH_ITEMS = 1 << 30;
