/**
 * Per-slot requirements of indirect refs (seed 000, § Validation): while recording, every command that
 * names a binding-table slot adds to that slot's requirements; at submission the binding table is
 * checked against them in O(slots used), never by walking the commands.
 *
 * Per used slot, in compact parallel typed arrays (slot order = first use):
 * - `usage`: the usage bits of every command, OR-ed (plus DISPATCH_ANY for dispatch bindings);
 * - `end`: the highest end offset any command uses, relative to the slot's binding offset (a ref whose
 *   length is omitted contributes its offset; indirect parameters contribute offset + 12);
 * - `offsetAlign`: LCM of the commands' offset alignments; the binding's offset must be a multiple of it
 *   (each command's relative offset was checked against its own alignment at record time, so the
 *   absolute offset binding.offset + offset meets every command's alignment);
 * - `lengthAlign`: LCM of the pattern lengths of fills that run to the end of the slot; the bytes
 *   visible through the slot must be a multiple of it, so that the fill's resolved length is.
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
import { growFloat64, growInt32 } from './growable';
import { DISPATCH_ANY, describeRequirement, lcm, meetsUsage } from './usage-requirement';

/** A slot's accumulated requirements, as reported by `DeferredCommandBuffer.slotRequirements()`. */
export interface SlotRequirement {
  readonly slot: number;
  /** BufferUsage bits every command needs. */
  readonly usage: number;
  /** True when a dispatch binds the slot: the buffer needs DISPATCH_STORAGE or DISPATCH_UNIFORM. */
  readonly dispatchBinding: boolean;
  /** Bytes the slot's binding range must hold (highest end offset of any command). */
  readonly minByteLength: number;
  /** The binding's offset must be a multiple of this. */
  readonly offsetAlignment: number;
  /** The binding range's length must be a multiple of this (fills to the end of the slot). */
  readonly lengthAlignment: number;
}

export class SlotRequirements {
  /** Number of distinct slots used. */
  count = 0;
  /** Highest slot used, -1 when none. */
  maxSlot = -1;
  private slots = new Int32Array(8);
  private usage = new Int32Array(8);
  private end = new Float64Array(8);
  private offsetAlign = new Int32Array(8);
  private lengthAlign = new Int32Array(8);
  /** slot → index + 1 into the arrays above (0: unused); grown to the highest slot used. */
  private index = new Int32Array(8);

  /** Adds one command's requirements for `slot`. `lengthAlign` 1 means no length rule. */
  add(slot: number, usage: number, end: number, offsetAlign: number, lengthAlign: number): void {
    let k = slot < this.index.length ? this.index[slot]! - 1 : -1;
    if (k < 0) k = this.insert(slot);
    this.usage[k]! |= usage;
    if (end > this.end[k]!) this.end[k] = end;
    const oa = this.offsetAlign[k]!;
    if (oa !== offsetAlign) this.offsetAlign[k] = lcm(oa, offsetAlign);
    const la = this.lengthAlign[k]!;
    if (la !== lengthAlign) this.lengthAlign[k] = lcm(la, lengthAlign);
  }

  /** Notes that `slot` is used without tracking requirements (validation off). */
  note(slot: number): void {
    if (slot > this.maxSlot) this.maxSlot = slot;
  }

  private insert(slot: number): number {
    if (slot >= this.index.length) this.index = growInt32(this.index, this.index.length, slot + 1);
    const k = this.count;
    if (k === this.slots.length) {
      const n = k + 1;
      this.slots = growInt32(this.slots, k, n);
      this.usage = growInt32(this.usage, k, n);
      this.end = growFloat64(this.end, k, n);
      this.offsetAlign = growInt32(this.offsetAlign, k, n);
      this.lengthAlign = growInt32(this.lengthAlign, k, n);
    }
    this.slots[k] = slot;
    this.usage[k] = 0;
    this.end[k] = 0;
    this.offsetAlign[k] = 1;
    this.lengthAlign[k] = 1;
    this.index[slot] = k + 1;
    this.count = k + 1;
    if (slot > this.maxSlot) this.maxSlot = slot;
    return k;
  }

  /**
   * Checks every used slot of `table` (whose length the caller already checked): an entry is present;
   * its buffer belongs to `device`, is live and has the accumulated usage; its offset and length are
   * integers inside the buffer; the range holds `end` bytes; its offset and length meet the alignments.
   * Throws a KeelError whose message starts with `name` and names the slot and the rule.
   */
  validate(table: BindingTable, device: Device, name: string): void {
    const n = this.count;
    for (let k = 0; k < n; k++) {
      const slot = this.slots[k]!;
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
      const usage = this.usage[k]!;
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
      const end = this.end[k]!;
      if (length < end) {
        throw slotError(
          name,
          slot,
          ErrorCode.OUT_OF_RANGE,
          `${describeRange(buffer, offset, length, given)} smaller than the ${end} bytes recorded commands use`,
        );
      }
      const offsetAlign = this.offsetAlign[k]!;
      if (offset % offsetAlign !== 0) {
        throw slotError(
          name,
          slot,
          ErrorCode.INVALID_ARGUMENT,
          `binding offset ${offset} is not a multiple of ${offsetAlign}, the alignment recorded commands need`,
        );
      }
      const lengthAlign = this.lengthAlign[k]!;
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

  /** The accumulated requirements, one object per used slot in first-use order (for tests and plans). */
  toArray(): SlotRequirement[] {
    const out: SlotRequirement[] = [];
    for (let k = 0; k < this.count; k++) {
      const usage = this.usage[k]!;
      out.push({
        slot: this.slots[k]!,
        usage: usage & ~DISPATCH_ANY,
        dispatchBinding: (usage & DISPATCH_ANY) !== 0,
        minByteLength: this.end[k]!,
        offsetAlignment: this.offsetAlign[k]!,
        lengthAlignment: this.lengthAlign[k]!,
      });
    }
    return out;
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
