/**
 * Buffer references, as in IREE's HAL: a command names memory either directly (a concrete buffer,
 * retained by the command buffer) or indirectly (a binding-table slot, substituted at each submission).
 * `offset` defaults to 0; `length` omitted means "to the end of the buffer".
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { type Buffer, describeBuffer } from './buffer';
import { invalid } from './driver/invalid';

export interface DirectBufferRef {
  readonly buffer: Buffer;
  readonly offset?: number;
  readonly length?: number;
}

export interface IndirectBufferRef {
  /** Binding-table slot, below the command buffer's `bindingCapacity`. */
  readonly slot: number;
  readonly offset?: number;
  readonly length?: number;
}

export type BufferRef = DirectBufferRef | IndirectBufferRef;

/** A direct reference to `buffer` (whole buffer unless offset/length are given). */
export function bufferRef(buffer: Buffer, offset?: number, length?: number): DirectBufferRef {
  return { buffer, offset, length };
}

/** An indirect reference to binding-table slot `slot`. */
export function slotRef(slot: number, offset?: number, length?: number): IndirectBufferRef {
  return { slot, offset, length };
}

export function isIndirectRef(ref: BufferRef): ref is IndirectBufferRef {
  return typeof (ref as IndirectBufferRef).slot === 'number';
}

export function isDirectRef(ref: BufferRef): ref is DirectBufferRef {
  return (ref as DirectBufferRef).buffer !== undefined && (ref as DirectBufferRef).buffer !== null;
}

function checkByteCount(value: number, what: string, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${what}: ${name} must be a non-negative integer, got ${describeValue(value)}`);
  }
}

/**
 * Resolves `offset` and `length` of a reference against a buffer of `byteLength` bytes. Throws
 * INVALID_ARGUMENT for non-integer values and OUT_OF_RANGE when the range leaves the buffer.
 * `what` names the reference in messages (e.g. "fill target").
 */
export function resolveRange(
  ref: { readonly offset?: number | undefined; readonly length?: number | undefined },
  buffer: Pick<Buffer, 'byteLength' | 'label'>,
  what: string,
): { offset: number; length: number } {
  const offset = ref.offset ?? 0;
  checkByteCount(offset, what, 'offset');
  if (offset > buffer.byteLength) {
    throw new KeelError(
      ErrorCode.OUT_OF_RANGE,
      `${what}: offset ${offset} is past the end of ${describeBuffer(buffer)}`,
    );
  }
  const length = ref.length ?? buffer.byteLength - offset;
  checkByteCount(length, what, 'length');
  if (offset + length > buffer.byteLength) {
    throw new KeelError(
      ErrorCode.OUT_OF_RANGE,
      `${what}: range [${offset}, ${offset + length}) leaves ${describeBuffer(buffer)}`,
    );
  }
  return { offset, length };
}
