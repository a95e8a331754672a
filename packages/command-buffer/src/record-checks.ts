/**
 * Record-time validation of buffer references and values, and the buffer and range rules that
 * submission validation (./submission-validation) applies to binding-table entries too. The checks
 * build no string unless they fail: a rule that holds returns undefined, a broken one returns a
 * `Problem` (its code and wording), and the caller names the object (command buffer, operand or slot)
 * only then, so validation costs a few comparisons per reference.
 *
 * Codes: OUT_OF_RANGE for byte ranges outside a buffer and slots outside the binding capacity;
 * INVALID_ARGUMENT for malformed values, missing usage bits, misalignment and buffers of another device;
 * FAILED_PRECONDITION for buffers that are no longer live.
 */
import {
  type Buffer,
  type BufferRef,
  BufferUsage,
  type Device,
  describeBuffer,
  describeUsage,
  describeValue,
  ErrorCode,
  type IndirectBufferRef,
  KeelError,
} from '@keel/hal';
import { DISPATCH_ANY, describeRequirement, meetsUsage } from './usage-requirement';

const INVALID = ErrorCode.INVALID_ARGUMENT;
const OUT_OF_RANGE = ErrorCode.OUT_OF_RANGE;

/** A broken rule: its error code and its wording (without the name of the object). */
export type Problem = readonly [ErrorCode, string] | undefined;

/** Which operand of which command a reference is: names it in messages, picks its usage bits. */
export enum Role {
  FILL_TARGET,
  UPDATE_TARGET,
  COPY_SOURCE,
  COPY_TARGET,
  DISPATCH_BINDING,
  INDIRECT_PARAMS,
}

/** The usage bits each role needs, indexed by role. */
export const ROLE_USAGE: readonly number[] = [
  BufferUsage.TRANSFER_TARGET,
  BufferUsage.TRANSFER_TARGET,
  BufferUsage.TRANSFER_SOURCE,
  BufferUsage.TRANSFER_TARGET,
  DISPATCH_ANY,
  BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
];

const ROLE_NAMES = ['fill target', 'update target', 'copy source', 'copy target'];

/** What record-time checks need to know about the command buffer. */
export interface RecordContext {
  readonly device: Device;
  readonly bindingCapacity: number;
  /** "command buffer 'step'" or "command buffer": how messages name the command buffer. */
  readonly name: string;
}

/** "fill target", "dispatch 'matmul' binding 2", ...: the operand, for messages. */
export function describeRole(role: Role, index: number, entry: string): string {
  return role < Role.DISPATCH_BINDING
    ? ROLE_NAMES[role]!
    : `dispatch '${entry}' ${role === Role.DISPATCH_BINDING ? `binding ${index}` : 'indirect parameters'}`;
}

/** True for a non-negative safe integer (a byte offset or length). */
export function isByteCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** True when `ref` names a binding-table slot (hal's rule: `slot` is a number). */
export function refIsIndirect(ref: BufferRef): ref is IndirectBufferRef {
  return typeof (ref as IndirectBufferRef).slot === 'number';
}

/** "was released by queueDealloca" or "was destroyed": why a buffer is not live, for messages. */
export function deadReason(buffer: Buffer): string {
  return buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
}

/**
 * The first rule `buffer` breaks for a command buffer of `device` that needs `required` usage: same
 * device (INVALID_ARGUMENT), live (FAILED_PRECONDITION), usage bits (INVALID_ARGUMENT). `need` goes
 * between the usage and "(has ...)" in the message.
 */
export function bufferProblem(buffer: Buffer, device: Device, required: number, need: string): Problem {
  if (buffer.device !== device) return [INVALID, `${describeBuffer(buffer)} belongs to another device`];
  if (buffer.state !== 'live') {
    return [
      ErrorCode.FAILED_PRECONDITION,
      `${describeBuffer(buffer)} ${deadReason(buffer)} and cannot be used`,
    ];
  }
  if (!meetsUsage(buffer.usage, required)) {
    return [
      INVALID,
      `${describeBuffer(buffer)} lacks ${describeRequirement(required)} usage${need} (has ${describeUsage(buffer.usage)})`,
    ];
  }
}

/** "`what` must be a non-negative integer" unless `value` is a byte count. */
export function countProblem(what: string, value: unknown): Problem {
  if (!isByteCount(value))
    return [INVALID, `${what} must be a non-negative integer, got ${describeValue(value)}`];
}

/** "`what` N is past the end of buffer ..." when `offset` is beyond `buffer`. */
export function pastEndProblem(what: string, offset: number, buffer: Buffer): Problem {
  if (offset > buffer.byteLength) {
    return [OUT_OF_RANGE, `${what} ${offset} is past the end of ${describeBuffer(buffer)}`];
  }
}

/** "`what` [a, b) leaves buffer ..." when the range is not inside `buffer`. */
export function leavesProblem(what: string, offset: number, length: number, buffer: Buffer): Problem {
  if (offset + length > buffer.byteLength) {
    return [OUT_OF_RANGE, `${what} [${offset}, ${offset + length}) leaves ${describeBuffer(buffer)}`];
  }
}

/** "`what` N is not a multiple of `align`" unless it is. */
function multipleProblem(what: string, value: number, align: number): Problem {
  if (value % align !== 0) return [INVALID, `${what} ${value} is not a multiple of ${align}`];
}

/**
 * Validates one reference at record time; throws a KeelError naming the command buffer and the operand.
 * `align` is the operand's offset alignment, and also its length alignment for fill, update and copy
 * operands (dispatch bindings and indirect parameters have no length rule). `fixedLength` >= 0 is the
 * length the command uses when the ref omits it (update: the payload size; copy: the copy length;
 * indirect parameters: 12); -1 means "to the end". `index` and `entry` name a dispatch operand.
 */
export function checkRef(
  ctx: RecordContext,
  ref: BufferRef,
  role: Role,
  align: number,
  fixedLength: number,
  index = 0,
  entry = '',
): void {
  const problem = refProblem(ctx, ref, role, align, fixedLength);
  if (problem !== undefined) {
    throw new KeelError(problem[0], `${ctx.name}: ${describeRole(role, index, entry)}: ${problem[1]}`);
  }
}

/**
 * The first rule `ref` breaks.
 *
 * - Both kinds: `offset` (default 0) and `length` (when given) are non-negative integers; `offset` is a
 *   multiple of the offset alignment; a given `length` is a multiple of the length alignment.
 * - Direct refs: the buffer is of this device, live and has the role's usage; the range (length
 *   omitted: to the end) lies inside the buffer, and the resolved length meets the length alignment.
 * - Indirect refs: `slot` is an integer below the binding capacity. Buffer, usage and range are checked
 *   per submission against the slot's accumulated requirements.
 */
function refProblem(
  ctx: RecordContext,
  ref: BufferRef,
  role: Role,
  align: number,
  fixedLength: number,
): Problem {
  if (ref === null || typeof ref !== 'object')
    return [INVALID, `expected a buffer ref, got ${describeValue(ref)}`];
  const lengthAlign = role < Role.DISPATCH_BINDING ? align : 1;
  const offset = ref.offset ?? 0;
  const length = ref.length ?? (fixedLength >= 0 ? fixedLength : undefined);
  // Each rule is tested inline (this runs per ref while recording); only a broken one calls a helper.
  if (!isByteCount(offset)) return countProblem('offset', offset);
  if (length !== undefined && !isByteCount(length)) return countProblem('length', length);
  if (refIsIndirect(ref)) {
    const slot = ref.slot;
    if (!Number.isInteger(slot) || slot < 0) {
      return [INVALID, `binding slot must be a non-negative integer, got ${describeValue(slot)}`];
    }
    if (slot >= ctx.bindingCapacity) {
      return [OUT_OF_RANGE, `binding slot ${slot} is outside the binding capacity of ${ctx.bindingCapacity}`];
    }
    if (offset % align !== 0) {
      return [INVALID, `offset ${offset} in binding slot ${slot} is not a multiple of ${align}`];
    }
    if (length !== undefined && length % lengthAlign !== 0)
      return multipleProblem('length', length, lengthAlign);
    return;
  }
  const buffer = ref.buffer;
  if (buffer === null || typeof buffer !== 'object') {
    return [INVALID, `a buffer ref needs a buffer or a binding slot, got ${describeValue(buffer)}`];
  }
  const required = ROLE_USAGE[role]!;
  if (buffer.device !== ctx.device || buffer.state !== 'live' || !meetsUsage(buffer.usage, required)) {
    return bufferProblem(buffer, ctx.device, required, '');
  }
  const byteLength = buffer.byteLength;
  if (offset > byteLength) return pastEndProblem('offset', offset, buffer);
  const resolved = length ?? byteLength - offset;
  if (offset + resolved > byteLength) return leavesProblem('range', offset, resolved, buffer);
  if (offset % align !== 0) return multipleProblem('offset', offset, align);
  if (resolved % lengthAlign !== 0) return multipleProblem('length', resolved, lengthAlign);
}

/** True when `value` is a 32-bit integer in [-2^31, 2^32), as dispatch constants must be. */
export function isU32Like(value: number): boolean {
  return Number.isInteger(value) && value >= -0x80000000 && value <= 0xffffffff;
}
