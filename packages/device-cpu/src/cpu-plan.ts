/**
 * The main thread's side of a plan: its arrays, the direct buffers its table entries name, and which
 * queues already have it. Also resolves a binding table into the per-submission form workers read, and
 * encodes an execute operation's tables for a task queue (one message per operation).
 */
import type { BindingTable } from '@keel/hal';
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

/**
 * Writes [slab index, absolute offset, byte length] of every table slot the plan uses (`plan.slots`, in
 * order), then of every direct buffer, into `out` from `at` (resolvedLength(plan) words): O(slots used),
 * whatever the slot numbers. Run when the operation is about to execute (queue-allocated buffers have
 * memory by then). FAILED_PRECONDITION for a buffer without memory; INVALID_ARGUMENT for an entry that
 * is not a buffer of this device, and for a used slot that has no entry (both reachable only with
 * validation off).
 */
export function resolveTableInto(
  out: Float64Array,
  at: number,
  plan: CpuPlan,
  table: BindingTable | undefined,
  slabs: SlabTable,
  device: object,
  what: string,
): void {
  const slotList = plan.slots;
  const slots = slotList.length;
  const direct = plan.direct;
  for (let e = 0; e < slots + direct.length; e++) {
    const o = at + e * RESOLVED_STRIDE;
    let buffer: CpuBuffer;
    let offset = 0;
    let length: number | undefined;
    if (e < slots) {
      const slot = slotList[e]!;
      const binding = table?.[slot];
      if (!binding || binding === null) {
        // Every plan slot is used by a command (reachable with validation off: submissions are not
        // checked then, but a missing entry is still INVALID_ARGUMENT).
        throw invalid(
          `${what}: binding slot ${slot} is used by the command buffer but the binding table has no entry for it`,
        );
      }
      if (!(binding.buffer instanceof CpuBuffer) || binding.buffer.device !== device) {
        throw invalid(`${what}: binding slot ${slot} is not a buffer of this device`);
      }
      buffer = binding.buffer;
      offset = binding.offset ?? 0;
      length = binding.length;
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

/** An execute operation as table encoding reads it: its plans, their tables and its name. */
export interface ExecuteTables {
  readonly plans: readonly CpuPlan[] | undefined;
  readonly tables: readonly (BindingTable | undefined)[] | undefined;
  readonly name: string;
}

/**
 * The execute message of an operation about to be posted to a task queue's workers as operation `seq`,
 * in one Float64Array: [seq, plan count, then per plan (id, table words), then the tables back to
 * back]. Throws the reason the operation cannot run.
 */
export function encodeExecute(
  op: ExecuteTables,
  seq: number,
  slabs: SlabTable,
  device: object,
): Float64Array {
  const plans = op.plans!;
  const tables = op.tables!;
  const count = plans.length;
  let size = 2 + 2 * count;
  for (let i = 0; i < count; i++) size += resolvedLength(plans[i]!);
  const out = new Float64Array(size);
  out[0] = seq;
  out[1] = count;
  let at = 2 + 2 * count;
  for (let i = 0; i < count; i++) {
    const plan = plans[i]!;
    const length = resolvedLength(plan);
    out[2 + 2 * i] = plan.id;
    out[3 + 2 * i] = length;
    resolveTableInto(out, at, plan, tables[i], slabs, device, op.name);
    at += length;
  }
  return out;
}
