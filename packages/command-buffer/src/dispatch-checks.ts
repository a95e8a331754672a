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
  BufferUsage,
  describeValue,
  ErrorCode,
  type Executable,
  type ExecutableExport,
  KeelError,
  type WorkgroupCount,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { checkRef, isU32Like, type RecordContext, Role } from './record-checks';
import { DISPATCH_ANY } from './usage-requirement';

/** Bytes an indirect dispatch reads: x, y, z as u32. */
export const INDIRECT_PARAMS_BYTES = 12;

/** What dispatch checks read from the recorder, besides RecordContext: the device limits they apply. */
export interface DispatchCheckContext extends RecordContext {
  readonly maxWorkgroupCount: readonly [number, number, number];
  /** The device's minStorageBufferOffsetAlignment (1 when the device gives none). */
  readonly storageAlignment: number;
}

/** True for a workgroup count that is an integer in [0, max]. */
function countFits(count: number, max: number): boolean {
  return Number.isInteger(count) && count >= 0 && count <= max;
}

/** "executable 'mlp'" (or "an executable without a label"), for messages. */
function describeExecutable(executable: Executable): string {
  return executable.label === undefined
    ? 'an executable without a label'
    : `executable '${executable.label}'`;
}

/** A workgroupCount result as messages show it: `[1, "2"]`-style for arrays, else describeValue. */
function describeCount(count: unknown): string {
  return Array.isArray(count)
    ? `[${count.map((c: unknown) => describeValue(c)).join(', ')}]`
    : describeValue(count);
}

/**
 * The export's workgroupCount(workload), checked: the workload is an array of non-negative safe
 * integers, the call's exception becomes a KeelError naming the executable and the export (its code
 * if it is a KeelError, else INVALID_ARGUMENT; cause = the exception), and the result must be three
 * non-negative integers. Record time only (not a replay path).
 */
export function countFromWorkload(
  ctx: DispatchCheckContext,
  executable: Executable,
  exp: ExecutableExport,
  workload: readonly number[],
): WorkgroupCount {
  const which = `${ctx.name}: dispatch of export '${exp.name}' of ${describeExecutable(executable)}`;
  if (!Array.isArray(workload)) {
    throw invalid(
      `${which}: workload must be an array of non-negative integers, got ${describeValue(workload)}`,
    );
  }
  for (let i = 0; i < workload.length; i++) {
    const v: unknown = workload[i];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw invalid(`${which}: workload[${i}] must be a non-negative safe integer, got ${describeValue(v)}`);
    }
  }
  if (typeof exp.workgroupCount !== 'function') {
    throw invalid(`${which}: workgroupCount is not a function (${describeValue(exp.workgroupCount)})`);
  }
  let count: unknown;
  try {
    count = exp.workgroupCount(workload);
  } catch (error) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
    throw new KeelError(
      KeelError.is(error) ? error.code : ErrorCode.INVALID_ARGUMENT,
      `${which}: workgroupCount([${workload.join(', ')}]) threw ${detail}`,
      { cause: error },
    );
  }
  if (
    !Array.isArray(count) ||
    count.length !== 3 ||
    !count.every((c: unknown) => typeof c === 'number' && Number.isSafeInteger(c) && c >= 0)
  ) {
    throw invalid(
      `${which}: workgroupCount([${workload.join(', ')}]) must return three non-negative integers [x, y, z], got ${describeCount(count)}`,
    );
  }
  return count as unknown as WorkgroupCount;
}

export function checkWorkgroupCount(
  ctx: DispatchCheckContext,
  exp: ExecutableExport,
  x: number,
  y: number,
  z: number,
  workload: readonly number[] | undefined,
): void {
  const max = ctx.maxWorkgroupCount;
  if (countFits(x, max[0]) && countFits(y, max[1]) && countFits(z, max[2])) return;
  const counts = [x, y, z];
  const from = workload === undefined ? '' : ` (computed from workload [${workload.join(', ')}])`;
  for (let i = 0; i < 3; i++) {
    const c = counts[i]!;
    const axis = 'xyz'[i]!;
    if (!Number.isInteger(c) || c < 0) {
      throw invalid(
        `${ctx.name}: dispatch '${exp.name}': workgroup count ${axis} must be a non-negative integer, got ${describeValue(c)}${from}`,
      );
    }
    if (c > max[i]!) {
      throw invalid(
        `${ctx.name}: dispatch '${exp.name}': workgroup count ${axis} = ${c} exceeds the device's maxWorkgroupCount[${i}] of ${max[i]}${from}`,
      );
    }
  }
}

/**
 * The checks of one dispatch with validation on (the executable's device is checked by the caller):
 * the workgroup count or the indirect parameters ref (12 bytes: a given length must be 12), binding and
 * constant counts against the export, constant values, and every binding ref.
 */
export function checkDispatch(
  ctx: DispatchCheckContext,
  exp: ExecutableExport,
  x: number,
  y: number,
  z: number,
  workload: readonly number[] | undefined,
  params: BufferRef | undefined,
  bindings: readonly BufferRef[],
  constants: Uint32Array | readonly number[] | undefined,
): void {
  if (params === undefined) {
    checkWorkgroupCount(ctx, exp, x, y, z, workload);
  } else {
    const given = params?.length;
    if (given !== undefined && given !== INDIRECT_PARAMS_BYTES) {
      throw invalid(
        `${ctx.name}: dispatch '${exp.name}' indirect parameters: length ${given} is not the 12 bytes (x, y, z as u32) an indirect dispatch reads`,
      );
    }
    checkRef(
      ctx,
      params,
      BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
      4,
      1,
      Role.INDIRECT_PARAMS,
      0,
      exp.name,
      INDIRECT_PARAMS_BYTES,
    );
  }
  if (!Array.isArray(bindings)) {
    throw invalid(`${ctx.name}: dispatch '${exp.name}': bindings must be an array of buffer refs`);
  }
  if (bindings.length !== exp.bindingCount) {
    throw invalid(
      `${ctx.name}: dispatch '${exp.name}': ${bindings.length} binding(s) given, the export takes ${exp.bindingCount}`,
    );
  }
  const constantCount = constants === undefined ? 0 : constants.length;
  if (constantCount !== exp.constantCount) {
    throw invalid(
      `${ctx.name}: dispatch '${exp.name}': ${constantCount} constant(s) given, the export takes ${exp.constantCount}`,
    );
  }
  if (constants !== undefined && !(constants instanceof Uint32Array)) {
    for (let i = 0; i < constantCount; i++) {
      const c = constants[i]!;
      if (!isU32Like(c)) {
        throw invalid(
          `${ctx.name}: dispatch '${exp.name}' constant ${i}: ${describeValue(c)} is not a 32-bit integer (bit-cast floats first)`,
        );
      }
    }
  }
  const align = ctx.storageAlignment;
  for (let i = 0; i < bindings.length; i++) {
    checkRef(ctx, bindings[i]!, DISPATCH_ANY, align, 1, Role.DISPATCH_BINDING, i, exp.name, -1);
  }
}
