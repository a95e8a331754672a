/**
 * Record-time checks of a dispatch (see DeferredCommandBuffer.dispatch): the workgroup count (explicit,
 * or computed now from a workload through the export's `workgroupCount`) fits the device's
 * maxWorkgroupCount; binding and constant counts match the export; constants are 32-bit integers; each
 * binding and the indirect parameters pass checkRef. Like ./record-checks, nothing builds a string
 * unless a check fails. All errors are INVALID_ARGUMENT except those checkRef documents and a
 * KeelError thrown by `workgroupCount`, whose code is kept.
 */
import {
  type BufferRef,
  describeValue,
  ErrorCode,
  type Executable,
  type ExecutableExport,
  KeelError,
  type WorkgroupCount,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { fail } from './lifecycle';
import { checkRef, isU32Like, type RecordContext, Role } from './record-checks';

/** Bytes an indirect dispatch reads: x, y, z as u32. */
export const INDIRECT_PARAMS_BYTES = 12;

/** What dispatch checks read from the recorder, besides RecordContext: the device limits they apply. */
export interface DispatchCheckContext extends RecordContext {
  readonly maxWorkgroupCount: readonly [number, number, number];
  /** The device's minStorageBufferOffsetAlignment (1 when the device gives none). */
  readonly storageAlignment: number;
}

/** INVALID_ARGUMENT "<command buffer>: dispatch '<export>'<rule>" (`rule` starts with ': ' or ' '). */
export function dispatchFail(ctx: RecordContext, exp: ExecutableExport, rule: string): never {
  fail(ctx, `dispatch '${exp.name}'${rule}`);
}

/** "[1, 2]": a workload, for messages. */
function describeWorkload(workload: readonly number[]): string {
  return `[${workload.join(', ')}]`;
}

/** "<command buffer>: dispatch of export 'e' of executable 'mlp'" (or "of an executable without a label"). */
function describeWorkloadDispatch(ctx: RecordContext, executable: Executable, exp: ExecutableExport): string {
  const label = executable.label;
  return `${ctx.name}: dispatch of export '${exp.name}' of ${label === undefined ? 'an executable without a label' : `executable '${label}'`}`;
}

/** INVALID_ARGUMENT naming the dispatch by workload of `exp` of `executable`, and the rule. */
function workloadFail(
  ctx: RecordContext,
  executable: Executable,
  exp: ExecutableExport,
  rule: string,
): never {
  throw invalid(`${describeWorkloadDispatch(ctx, executable, exp)}: ${rule}`);
}

/**
 * The export's workgroupCount(workload), checked: the workload is an array of non-negative safe
 * integers, the call's exception becomes a KeelError naming the executable and the export (its code
 * if it is a KeelError, else INVALID_ARGUMENT; cause = the exception), and the result must be three
 * non-negative integers. Record time only (not a replay path).
 */
export function countFromWorkload(
  ctx: RecordContext,
  executable: Executable,
  exp: ExecutableExport,
  workload: readonly number[],
): WorkgroupCount {
  if (!Array.isArray(workload)) {
    workloadFail(
      ctx,
      executable,
      exp,
      `workload must be an array of non-negative integers, got ${describeValue(workload)}`,
    );
  }
  for (let i = 0; i < workload.length; i++) {
    const v: unknown = workload[i];
    if (!Number.isSafeInteger(v) || (v as number) < 0) {
      workloadFail(
        ctx,
        executable,
        exp,
        `workload[${i}] must be a non-negative safe integer, got ${describeValue(v)}`,
      );
    }
  }
  if (typeof exp.workgroupCount !== 'function') {
    workloadFail(
      ctx,
      executable,
      exp,
      `workgroupCount is not a function (${describeValue(exp.workgroupCount)})`,
    );
  }
  let count: unknown;
  try {
    count = exp.workgroupCount(workload);
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
    throw new KeelError(
      KeelError.is(error) ? error.code : ErrorCode.INVALID_ARGUMENT,
      `${describeWorkloadDispatch(ctx, executable, exp)}: workgroupCount(${describeWorkload(workload)}) threw ${detail}`,
      { cause: error },
    );
  }
  if (
    !Array.isArray(count) ||
    count.length !== 3 ||
    !count.every((c: unknown) => Number.isSafeInteger(c) && (c as number) >= 0)
  ) {
    const got = Array.isArray(count)
      ? `[${count.map((c: unknown) => describeValue(c)).join(', ')}]`
      : describeValue(count);
    workloadFail(
      ctx,
      executable,
      exp,
      `workgroupCount(${describeWorkload(workload)}) must return three non-negative integers [x, y, z], got ${got}`,
    );
  }
  return count as unknown as WorkgroupCount;
}

/** " (computed from workload [..])" or "": where a bad workgroup count came from, for messages. */
function fromWorkload(workload: readonly number[] | undefined): string {
  return workload === undefined ? '' : ` (computed from workload ${describeWorkload(workload)})`;
}

/** Each of the three counts is an integer in [0, the device's maxWorkgroupCount[i]]. */
function checkWorkgroupCount(
  ctx: DispatchCheckContext,
  exp: ExecutableExport,
  count: readonly number[],
  workload: readonly number[] | undefined,
): void {
  const max = ctx.maxWorkgroupCount;
  for (let i = 0; i < 3; i++) {
    const c = count[i]!;
    if (!Number.isInteger(c) || c < 0) {
      dispatchFail(
        ctx,
        exp,
        `: workgroup count ${'xyz'[i]} must be a non-negative integer, got ${describeValue(c)}${fromWorkload(workload)}`,
      );
    }
    if (c > max[i]!) {
      dispatchFail(
        ctx,
        exp,
        `: workgroup count ${'xyz'[i]} = ${c} exceeds the device's maxWorkgroupCount[${i}] of ${max[i]}${fromWorkload(workload)}`,
      );
    }
  }
}

/**
 * The checks of one dispatch with validation on (the executable's device is checked by the caller):
 * the workgroup count (`count`, when `params` is undefined) or the indirect parameters ref (12 bytes: a given length must be 12), binding and
 * constant counts against the export, constant values, and every binding ref.
 */
export function checkDispatch(
  ctx: DispatchCheckContext,
  exp: ExecutableExport,
  count: readonly number[] | undefined,
  workload: readonly number[] | undefined,
  params: BufferRef | undefined,
  bindings: readonly BufferRef[],
  constants: Uint32Array | readonly number[] | undefined,
): void {
  const name = exp.name;
  if (params === undefined) {
    checkWorkgroupCount(ctx, exp, count!, workload);
  } else {
    const given = params?.length;
    if (given !== undefined && given !== INDIRECT_PARAMS_BYTES) {
      dispatchFail(
        ctx,
        exp,
        ` indirect parameters: length ${given} is not the 12 bytes (x, y, z as u32) an indirect dispatch reads`,
      );
    }
    checkRef(ctx, params, Role.INDIRECT_PARAMS, 4, INDIRECT_PARAMS_BYTES, 0, name);
  }
  if (!Array.isArray(bindings)) dispatchFail(ctx, exp, ': bindings must be an array of buffer refs');
  if (bindings.length !== exp.bindingCount) {
    dispatchFail(ctx, exp, `: ${bindings.length} binding(s) given, the export takes ${exp.bindingCount}`);
  }
  const constantCount = constants === undefined ? 0 : constants.length;
  if (constantCount !== exp.constantCount) {
    dispatchFail(ctx, exp, `: ${constantCount} constant(s) given, the export takes ${exp.constantCount}`);
  }
  if (constants !== undefined && !(constants instanceof Uint32Array)) {
    for (let i = 0; i < constantCount; i++) {
      const c = constants[i]!;
      if (!isU32Like(c)) {
        dispatchFail(
          ctx,
          exp,
          ` constant ${i}: ${describeValue(c)} is not a 32-bit integer (bit-cast floats first)`,
        );
      }
    }
  }
  const align = ctx.storageAlignment;
  for (let i = 0; i < bindings.length; i++) {
    checkRef(ctx, bindings[i]!, Role.DISPATCH_BINDING, align, -1, i, name);
  }
}
