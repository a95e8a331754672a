/**
 * Record-time validation of buffer references and values. The checks build no string unless they
 * fail: callers pass a role code (and a binding index and export name for dispatches) and the message is
 * composed only on the error path, so validation costs a few comparisons per reference.
 *
 * Codes: OUT_OF_RANGE for byte ranges outside a buffer and slots outside the binding capacity;
 * INVALID_ARGUMENT for malformed values, missing usage bits, misalignment and buffers of another device;
 * FAILED_PRECONDITION for buffers that are no longer live.
 */
import {
  type Buffer,
  type BufferRef,
  type Device,
  describeBuffer,
  describeUsage,
  describeValue,
  ErrorCode,
  type IndirectBufferRef,
  KeelError,
} from '@keel/hal';
import { describeRequirement, meetsUsage } from './usage-requirement';

/** Which operand of which command a reference is; names it in messages. */
export const Role = {
  FILL_TARGET: 0,
  UPDATE_TARGET: 1,
  COPY_SOURCE: 2,
  COPY_TARGET: 3,
  DISPATCH_BINDING: 4,
  INDIRECT_PARAMS: 5,
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** What record-time checks need to know about the command buffer. */
export interface RecordContext {
  readonly device: Device;
  readonly bindingCapacity: number;
  /** "command buffer 'step'" or "command buffer": how messages name the command buffer. */
  readonly name: string;
}

/** "fill target", "dispatch 'matmul' binding 2", ...: the operand, for messages. */
export function describeRole(role: Role, index: number, entry: string): string {
  switch (role) {
    case Role.FILL_TARGET:
      return 'fill target';
    case Role.UPDATE_TARGET:
      return 'update target';
    case Role.COPY_SOURCE:
      return 'copy source';
    case Role.COPY_TARGET:
      return 'copy target';
    case Role.DISPATCH_BINDING:
      return `dispatch '${entry}' binding ${index}`;
    default:
      return `dispatch '${entry}' indirect parameters`;
  }
}

/** True for a non-negative safe integer (a byte offset or length). */
export function isByteCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** True when `ref` names a binding-table slot (hal's rule: `slot` is a number). */
export function refIsIndirect(ref: BufferRef): ref is IndirectBufferRef {
  return typeof (ref as IndirectBufferRef).slot === 'number';
}

function fail(
  ctx: RecordContext,
  code: ErrorCode,
  role: Role,
  index: number,
  entry: string,
  rule: string,
): never {
  throw new KeelError(code, `${ctx.name}: ${describeRole(role, index, entry)}: ${rule}`);
}

/**
 * Throws unless `buffer` may be used by this command buffer with `required` usage: same device
 * (INVALID_ARGUMENT), live (FAILED_PRECONDITION), usage bits (INVALID_ARGUMENT).
 */
export function checkDirectBuffer(
  ctx: RecordContext,
  buffer: Buffer,
  required: number,
  role: Role,
  index: number,
  entry: string,
): void {
  if (buffer.device !== ctx.device) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `${describeBuffer(buffer)} belongs to another device`,
    );
  }
  if (buffer.state !== 'live') {
    const why = buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
    fail(
      ctx,
      ErrorCode.FAILED_PRECONDITION,
      role,
      index,
      entry,
      `${describeBuffer(buffer)} ${why} and cannot be used`,
    );
  }
  if (!meetsUsage(buffer.usage, required)) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `${describeBuffer(buffer)} lacks ${describeRequirement(required)} usage (has ${describeUsage(buffer.usage)})`,
    );
  }
}

/**
 * Validates one reference at record time.
 *
 * - Both kinds: `offset` (default 0) and `length` (when given) are non-negative integers; `offset` is a
 *   multiple of `offsetAlign`; a given `length` is a multiple of `lengthAlign` (0 or 1: no rule).
 *   `fixedLength` >= 0 is the length the command uses when the ref omits it (update: the payload size;
 *   copy: the copy length; indirect parameters: 12); -1 means "to the end".
 * - Direct refs: the buffer is of this device, live and has `required` usage; the range (length omitted:
 *   to the end) lies inside the buffer, and the resolved length is a multiple of `lengthAlign`.
 * - Indirect refs: `slot` is an integer below the binding capacity. Buffer, usage and range are checked
 *   per submission against the slot's accumulated requirements.
 */
export function checkRef(
  ctx: RecordContext,
  ref: BufferRef,
  required: number,
  offsetAlign: number,
  lengthAlign: number,
  role: Role,
  index: number,
  entry: string,
  fixedLength: number,
): void {
  if (ref === null || typeof ref !== 'object') {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `expected a buffer ref, got ${describeValue(ref)}`,
    );
  }
  const offset = ref.offset ?? 0;
  const length = ref.length ?? (fixedLength >= 0 ? fixedLength : undefined);
  if (!isByteCount(offset)) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `offset must be a non-negative integer, got ${describeValue(offset)}`,
    );
  }
  if (length !== undefined && !isByteCount(length)) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `length must be a non-negative integer, got ${describeValue(length)}`,
    );
  }
  if (refIsIndirect(ref)) {
    const slot = ref.slot;
    if (!Number.isInteger(slot) || slot < 0) {
      fail(
        ctx,
        ErrorCode.INVALID_ARGUMENT,
        role,
        index,
        entry,
        `binding slot must be a non-negative integer, got ${describeValue(slot)}`,
      );
    }
    if (slot >= ctx.bindingCapacity) {
      fail(
        ctx,
        ErrorCode.OUT_OF_RANGE,
        role,
        index,
        entry,
        `binding slot ${slot} is outside the binding capacity of ${ctx.bindingCapacity}`,
      );
    }
    if (offset % offsetAlign !== 0) {
      fail(
        ctx,
        ErrorCode.INVALID_ARGUMENT,
        role,
        index,
        entry,
        `offset ${offset} in binding slot ${slot} is not a multiple of ${offsetAlign}`,
      );
    }
    if (length !== undefined && lengthAlign > 1 && length % lengthAlign !== 0) {
      fail(
        ctx,
        ErrorCode.INVALID_ARGUMENT,
        role,
        index,
        entry,
        `length ${length} is not a multiple of ${lengthAlign}`,
      );
    }
    return;
  }
  const buffer = ref.buffer;
  if (buffer === null || typeof buffer !== 'object') {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `a buffer ref needs a buffer or a binding slot, got ${describeValue(buffer)}`,
    );
  }
  checkDirectBuffer(ctx, buffer, required, role, index, entry);
  const byteLength = buffer.byteLength;
  if (offset > byteLength) {
    fail(
      ctx,
      ErrorCode.OUT_OF_RANGE,
      role,
      index,
      entry,
      `offset ${offset} is past the end of ${describeBuffer(buffer)}`,
    );
  }
  const resolved = length ?? byteLength - offset;
  if (offset + resolved > byteLength) {
    fail(
      ctx,
      ErrorCode.OUT_OF_RANGE,
      role,
      index,
      entry,
      `range [${offset}, ${offset + resolved}) leaves ${describeBuffer(buffer)}`,
    );
  }
  if (offset % offsetAlign !== 0) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `offset ${offset} is not a multiple of ${offsetAlign}`,
    );
  }
  if (lengthAlign > 1 && resolved % lengthAlign !== 0) {
    fail(
      ctx,
      ErrorCode.INVALID_ARGUMENT,
      role,
      index,
      entry,
      `length ${resolved} is not a multiple of ${lengthAlign}`,
    );
  }
}

/** True when `value` is a 32-bit integer in [-2^31, 2^32), as dispatch constants must be. */
export function isU32Like(value: number): boolean {
  return Number.isInteger(value) && value >= -0x80000000 && value <= 0xffffffff;
}
