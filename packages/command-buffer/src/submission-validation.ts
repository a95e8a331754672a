/**
 * Submission validation (seed 000, § Validation): what `validateSubmission` checks before a device
 * enqueues a command buffer, in O(slots used + distinct direct buffers), never by walking the commands.
 * The state allows a submission; when any slot is used, a table is given that has an entry for the
 * highest one; with validation on, each used slot's entry meets the requirements the recorder
 * accumulated (a live buffer of this device, usage bits, range, alignments), and every directly
 * referenced buffer is still live.
 *
 * Promises: reads the table and the recorded form, changes nothing and allocates nothing unless it
 * throws; every error is a KeelError whose message names the command buffer, the slot or buffer, and
 * the rule (INVALID_ARGUMENT for a missing or wrong entry, OUT_OF_RANGE for ranges, FAILED_PRECONDITION
 * for the state and for buffers no longer live).
 */
import {
  type BindingTable,
  type Buffer,
  type Device,
  describeBuffer,
  describeUsage,
  describeValue,
  ErrorCode,
  KeelError,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { CONSUMED, EXECUTABLE, type LifecycleState, precondition, STATE_NAMES } from './lifecycle';
import type { RecordedCommands } from './recorded-commands';
import type { SlotRequirements } from './slot-requirements';
import { describeRequirement, meetsUsage } from './usage-requirement';

/** Throws the FAILED_PRECONDITION a command buffer in state `st` (not executable) gets at submission. */
export function notSubmittable(st: LifecycleState, name: string): never {
  if (st === CONSUMED) {
    throw precondition(`${name}: a one-shot command buffer cannot be submitted twice`);
  }
  throw precondition(
    `${name}: cannot be submitted in state '${STATE_NAMES[st]}'; record it and call end() first`,
  );
}

/** What submission validation reads: the recorder's state, recorded form and slot requirements. */
export interface SubmissionSubject {
  readonly st: LifecycleState;
  readonly rec: RecordedCommands;
  readonly slots: SlotRequirements;
  readonly device: Device;
  /** How messages name the command buffer. */
  readonly name: string;
  readonly validation: boolean;
}

/**
 * Validates a submission of `bindingTable` to the command buffer `subject` records (see
 * DeferredCommandBuffer.validateSubmission). With validation off only the state and the table's length
 * are checked.
 */
export function validateSubmission(subject: SubmissionSubject, bindingTable: BindingTable | undefined): void {
  const name = subject.name;
  if (subject.st !== EXECUTABLE) notSubmittable(subject.st, name);
  const slots = subject.slots;
  const maxSlot = slots.maxSlot;
  if (maxSlot >= 0) {
    if (bindingTable === undefined || bindingTable === null) {
      throw invalid(
        `${name}: recorded commands use binding slots (up to slot ${maxSlot}) but no binding table was given`,
      );
    }
    if (bindingTable.length <= maxSlot) {
      throw invalid(
        `${name}: binding table has ${bindingTable.length} entries but recorded commands use slot ${maxSlot}`,
      );
    }
  }
  if (!subject.validation) return;
  if (maxSlot >= 0 && bindingTable !== undefined) validateSlots(slots, bindingTable, subject.device, name);
  const buffers = subject.rec.buffers;
  for (let i = 0; i < buffers.length; i++) {
    const buffer = buffers[i]!;
    if (buffer.state !== 'live') {
      const why = buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
      throw precondition(
        `${name}: ${describeBuffer(buffer)}, referenced directly by recorded commands, ${why}`,
      );
    }
  }
}

/**
 * Checks every used slot of `slots` in `table` (whose length the caller already checked): an entry is present;
 * its buffer belongs to `device`, is live and has the accumulated usage; its offset and length are
 * integers inside the buffer; the range holds `end` bytes; its offset and length meet the alignments.
 * Throws a KeelError whose message starts with `name` and names the slot and the rule.
 */
export function validateSlots(
  slots: SlotRequirements,
  table: BindingTable,
  device: Device,
  name: string,
): void {
  const n = slots.count;
  for (let k = 0; k < n; k++) {
    const slot = slots.slots[k]!;
    const binding = table[slot];
    if (binding === undefined || binding === null) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        'no binding, but recorded commands use the slot',
      );
    }
    const buffer = binding.buffer;
    if (buffer === undefined || buffer === null) {
      throw slotError(name, slot, ErrorCode.INVALID_ARGUMENT, 'the binding has no buffer');
    }
    if (buffer.device !== device) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `${describeBuffer(buffer)} belongs to another device`,
      );
    }
    if (buffer.state !== 'live') {
      const why = buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
      throw slotError(
        name,
        slot,
        ErrorCode.FAILED_PRECONDITION,
        `${describeBuffer(buffer)} ${why} and cannot be used`,
      );
    }
    const usage = slots.usage[k]!;
    if (!meetsUsage(buffer.usage, usage)) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `${describeBuffer(buffer)} lacks ${describeRequirement(usage)} usage that recorded commands need (has ${describeUsage(buffer.usage)})`,
      );
    }
    const byteLength = buffer.byteLength;
    const offset = binding.offset ?? 0;
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `binding offset must be a non-negative integer, got ${describeValue(offset)}`,
      );
    }
    if (offset > byteLength) {
      throw slotError(
        name,
        slot,
        ErrorCode.OUT_OF_RANGE,
        `binding offset ${offset} is past the end of ${describeBuffer(buffer)}`,
      );
    }
    const given = binding.length;
    const length = given ?? byteLength - offset;
    if (!Number.isSafeInteger(length) || length < 0) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `binding length must be a non-negative integer, got ${describeValue(length)}`,
      );
    }
    if (offset + length > byteLength) {
      throw slotError(
        name,
        slot,
        ErrorCode.OUT_OF_RANGE,
        `binding range [${offset}, ${offset + length}) leaves ${describeBuffer(buffer)}`,
      );
    }
    const end = slots.end[k]!;
    if (length < end) {
      throw slotError(
        name,
        slot,
        ErrorCode.OUT_OF_RANGE,
        `${describeRange(buffer, offset, length, given)} smaller than the ${end} bytes recorded commands use`,
      );
    }
    const offsetAlign = slots.offsetAlign[k]!;
    if (offset % offsetAlign !== 0) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `binding offset ${offset} is not a multiple of ${offsetAlign}, the alignment recorded commands need`,
      );
    }
    const lengthAlign = slots.lengthAlign[k]!;
    if (length % lengthAlign !== 0) {
      throw slotError(
        name,
        slot,
        ErrorCode.INVALID_ARGUMENT,
        `binding range of ${length} bytes is not a multiple of ${lengthAlign}, which fills to the end of the slot need`,
      );
    }
  }
}

function slotError(name: string, slot: number, code: ErrorCode, rule: string): KeelError {
  return new KeelError(code, `${name}: binding slot ${slot}: ${rule}`);
}

/** "buffer 'x' (64 bytes) is" or "binding range [16, 80) of buffer 'x' (128 bytes) is 64 bytes," */
function describeRange(buffer: Buffer, offset: number, length: number, given: number | undefined): string {
  if (offset === 0 && given === undefined) return `${describeBuffer(buffer)} is`;
  return `binding range [${offset}, ${offset + length}) of ${describeBuffer(buffer)} is ${length} bytes,`;
}
