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
import { type BindingTable, type Device, describeBuffer, ErrorCode, KeelError } from '@keel/hal';
import { fail, precondition, STATE_NAMES, State, type Stateful } from './lifecycle';
import {
  bufferProblem,
  countProblem,
  deadReason,
  isByteCount,
  leavesProblem,
  type Problem,
  pastEndProblem,
} from './record-checks';
import type { RecordedCommands } from './recorded-commands';
import { Col, type SlotRequirements } from './slot-requirements';
import { meetsUsage } from './usage-requirement';

const INVALID = ErrorCode.INVALID_ARGUMENT;

/** Throws the FAILED_PRECONDITION a command buffer in state `st` (not executable) gets at submission. */
export function notSubmittable(subject: Stateful): never {
  if (subject.st === State.CONSUMED) {
    throw precondition(`${subject.name}: a one-shot command buffer cannot be submitted twice`);
  }
  throw precondition(
    `${subject.name}: cannot be submitted in state '${STATE_NAMES[subject.st]}'; record it and call end() first`,
  );
}

/** What submission validation reads: the recorder's state, recorded form and slot requirements. */
export interface SubmissionSubject extends Stateful {
  readonly rec: RecordedCommands;
  readonly slots: SlotRequirements;
  readonly device: Device;
  readonly validation: boolean;
}

/**
 * Validates a submission of `bindingTable` to the command buffer `subject` records (see
 * DeferredCommandBuffer.validateSubmission). With validation off only the state and the table's length
 * are checked.
 */
export function validateSubmission(subject: SubmissionSubject, bindingTable: BindingTable | undefined): void {
  if (subject.st !== State.EXECUTABLE) notSubmittable(subject);
  const slots = subject.slots;
  const maxSlot = slots.maxSlot;
  if (maxSlot >= 0) {
    if (bindingTable === undefined || bindingTable === null) {
      fail(
        subject,
        `recorded commands use binding slots (up to slot ${maxSlot}) but no binding table was given`,
      );
    }
    if (bindingTable.length <= maxSlot) {
      fail(
        subject,
        `binding table has ${bindingTable.length} entries but recorded commands use slot ${maxSlot}`,
      );
    }
  }
  if (!subject.validation) return;
  if (maxSlot >= 0 && bindingTable !== undefined) {
    const rows = slots.rows;
    const ends = slots.end;
    const device = subject.device;
    for (let k = 0; k < slots.count; k++) {
      const i = k * Col.COUNT;
      const slot = rows[i]!;
      const binding = bindingTable[slot];
      const buffer = binding?.buffer;
      // Fast path, inline (this runs per used slot on every submission): every rule holds. Otherwise
      // slotProblem finds the first broken rule.
      if (buffer !== undefined && buffer !== null) {
        const offset = binding!.offset ?? 0;
        const length = binding!.length ?? buffer.byteLength - offset;
        if (
          buffer.device === device &&
          buffer.state === 'live' &&
          meetsUsage(buffer.usage, rows[i + Col.USAGE]!) &&
          isByteCount(offset) &&
          isByteCount(length) &&
          offset + length <= buffer.byteLength &&
          length >= ends[k]! &&
          offset % rows[i + Col.OFFSET_ALIGN]! === 0 &&
          length % rows[i + Col.LENGTH_ALIGN]! === 0
        ) {
          continue;
        }
      }
      const problem = slotProblem(slots, k, binding, device);
      if (problem !== undefined) {
        throw new KeelError(problem[0], `${subject.name}: binding slot ${slot}: ${problem[1]}`);
      }
    }
  }
  const buffers = subject.rec.buffers.list;
  for (let i = 0; i < buffers.length; i++) {
    const buffer = buffers[i]!;
    if (buffer.state !== 'live') {
      throw precondition(
        `${subject.name}: ${describeBuffer(buffer)}, referenced directly by recorded commands, ${deadReason(buffer)}`,
      );
    }
  }
}

/**
 * The first rule the table entry `binding` of the `k`th used slot breaks: an entry is present; its
 * buffer belongs to `device`, is live and has the accumulated usage; its offset and length are integers
 * inside the buffer; the range holds `end` bytes; its offset and length meet the alignments.
 */
function slotProblem(
  slots: SlotRequirements,
  k: number,
  binding: BindingTable[number] | undefined,
  device: Device,
): Problem {
  const rows = slots.rows;
  const i = k * Col.COUNT;
  if (binding === undefined || binding === null) {
    return [INVALID, 'no binding, but recorded commands use the slot'];
  }
  const buffer = binding.buffer;
  if (buffer === undefined || buffer === null) return [INVALID, 'the binding has no buffer'];
  const offset = binding.offset ?? 0;
  const given = binding.length;
  const length = given ?? buffer.byteLength - offset;
  const problem =
    bufferProblem(buffer, device, rows[i + Col.USAGE]!, ' that recorded commands need') ??
    countProblem('binding offset', offset) ??
    pastEndProblem('binding offset', offset, buffer) ??
    countProblem('binding length', length) ??
    leavesProblem('binding range', offset, length, buffer);
  if (problem !== undefined) return problem;
  const end = slots.end[k]!;
  if (length < end) {
    const range =
      offset === 0 && given === undefined
        ? `${describeBuffer(buffer)} is`
        : `binding range [${offset}, ${offset + length}) of ${describeBuffer(buffer)} is ${length} bytes,`;
    return [ErrorCode.OUT_OF_RANGE, `${range} smaller than the ${end} bytes recorded commands use`];
  }
  const offsetAlign = rows[i + Col.OFFSET_ALIGN]!;
  if (offset % offsetAlign !== 0) {
    return [
      INVALID,
      `binding offset ${offset} is not a multiple of ${offsetAlign}, the alignment recorded commands need`,
    ];
  }
  const lengthAlign = rows[i + Col.LENGTH_ALIGN]!;
  if (length % lengthAlign !== 0) {
    return [
      INVALID,
      `binding range of ${length} bytes is not a multiple of ${lengthAlign}, which fills to the end of the slot need`,
    ];
  }
}
