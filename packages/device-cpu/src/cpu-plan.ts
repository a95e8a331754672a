/**
 * The main thread's side of a plan: its arrays, the direct buffers its table entries name, and which
 * queues already have it. Also resolves an operation's binding entries (snapshotted at the call, see
 * operation.ts) into the per-submission form executors read, and encodes an execute operation's tables
 * for a task queue (one message per operation).
 */
import { invalid } from '@keel/hal/driver';
import { CpuBuffer } from './cpu-buffer';
import type { PlanRuntime } from './executor';
import { type PlanArrays, RESOLVED_STRIDE } from './plan-format';
import type { SlabTable } from './slab-table';

/** A plan as the main thread keeps it (made by cpu-planner.ts). */
export interface CpuPlan {
  readonly id: number;
  readonly arrays: PlanArrays;
  /** The direct buffers its table entries name (after the slots). */
  readonly direct: readonly CpuBuffer[];
  /** The table slots its commands use, ascending: resolved-table entry k is table slot `slots[k]`. */
  readonly slots: Int32Array;
  readonly oneShot: boolean;
  /** Bit q is set once queue q's workers received the plan. */
  shippedTo: number;
  /** The plan as the main thread runs it (sync mode), made on first use. */
  runtime: PlanRuntime | undefined;
}

/** Float64 words the resolved table of `plan` takes. */
export function resolvedLength(plan: CpuPlan): number {
  return (plan.arrays.slotCount + plan.arrays.directCount) * RESOLVED_STRIDE;
}

/** The binding entry of a used slot that the table did not have (or no table at all). */
export const NO_ENTRY: unique symbol = Symbol('no binding entry');

/**
 * An execute operation as table resolution reads it (an Operation): its plans, the binding entries its
 * plans use as they were at the call (plan i's k-th used slot is entry `base_i + k`, base_i summing the
 * used slots of the plans before it; NO_ENTRY where the table had none), and its name.
 */
export interface ExecuteBindings {
  readonly plans: readonly (CpuPlan | undefined)[];
  readonly planCount: number;
  readonly entryBuffers: readonly unknown[];
  readonly entryOffsets: readonly (number | undefined)[];
  readonly entryLengths: readonly (number | undefined)[];
  readonly name: string;
}

/**
 * Writes [slab index, absolute offset, byte length] of every table slot the plan uses (`plan.slots`, in
 * order; their entries are `op`'s from `base`), then of every direct buffer, into `out` from `at`
 * (resolvedLength(plan) words): O(slots used), whatever the slot numbers. Run when the operation is
 * about to execute (queue-allocated buffers have memory by then). FAILED_PRECONDITION for a buffer
 * without memory; INVALID_ARGUMENT for an entry that is not a buffer of this device, and for a used
 * slot that has no entry (both reachable only with validation off). Allocation-free unless it throws.
 */
export function resolveTableInto(
  out: Float64Array,
  at: number,
  plan: CpuPlan,
  op: ExecuteBindings,
  base: number,
  slabs: SlabTable,
  device: object,
): void {
  const what = op.name;
  const slotList = plan.slots;
  const slots = slotList.length;
  const direct = plan.direct;
  for (let e = 0; e < slots + direct.length; e++) {
    const o = at + e * RESOLVED_STRIDE;
    let buffer: CpuBuffer;
    let offset = 0;
    let length: number | undefined;
    if (e < slots) {
      const entry = op.entryBuffers[base + e];
      if (entry === NO_ENTRY) {
        // Every plan slot is used by a command (reachable with validation off: submissions are not
        // checked then, but a missing entry is still INVALID_ARGUMENT).
        throw invalid(
          `${what}: binding slot ${slotList[e]} is used by the command buffer but the binding table has no entry for it`,
        );
      }
      if (!(entry instanceof CpuBuffer) || entry.device !== device) {
        throw invalid(`${what}: binding slot ${slotList[e]} is not a buffer of this device`);
      }
      buffer = entry;
      offset = op.entryOffsets[base + e] ?? 0;
      length = op.entryLengths[base + e];
    } else {
      buffer = direct[e - slots]!;
    }
    const block = buffer.block;
    // No memory: resolve throws the reason.
    if (!block) buffer.resolve(`${what}: ${e < slots ? `binding slot ${slotList[e]}` : 'direct reference'}`);
    out[o] = slabs.indexOf(block!.slab.memory);
    out[o + 1] = block!.offset + offset;
    out[o + 2] = length ?? buffer.byteLength - offset;
  }
}

/**
 * The execute message of an operation about to be posted to a task queue's workers as operation `seq`,
 * in one Float64Array: [seq, plan count, then per plan (id, table words), then the tables back to
 * back]. Written into `reuse` when it has exactly the size needed (the caller posts the message, which
 * copies it, before encoding the next one), else into a new array. Throws the reason the operation
 * cannot run.
 */
export function encodeExecute(
  op: ExecuteBindings,
  seq: number,
  slabs: SlabTable,
  device: object,
  reuse: Float64Array | undefined,
): Float64Array {
  const plans = op.plans;
  const count = op.planCount;
  let size = 2 + 2 * count;
  for (let i = 0; i < count; i++) size += resolvedLength(plans[i]!);
  const out = reuse !== undefined && reuse.length === size ? reuse : new Float64Array(size);
  out[0] = seq;
  out[1] = count;
  let at = 2 + 2 * count;
  let base = 0;
  for (let i = 0; i < count; i++) {
    const plan = plans[i]!;
    const length = resolvedLength(plan);
    out[2 + 2 * i] = plan.id;
    out[3 + 2 * i] = length;
    resolveTableInto(out, at, plan, op, base, slabs, device);
    at += length;
    base += plan.slots.length;
  }
  return out;
}
