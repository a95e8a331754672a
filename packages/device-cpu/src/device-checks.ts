/**
 * Argument checks of the CPU device's queue operations. Every check throws a KeelError naming the
 * operation and the rule; none has side effects.
 */
import { Fence } from '@keel/fence';
import {
  assertBufferLive,
  type BufferRef,
  type Device,
  describeBuffer,
  describeUsage,
  ErrorCode,
  hasAllBits,
  KeelError,
  resolveRange,
} from '@keel/hal';
import { CpuBuffer } from './cpu-buffer';

export function invalid(message: string): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message);
}

/** `fence` must be a Fence (use Fence.empty for none). */
export function checkFence(fence: unknown, what: string, role: 'wait' | 'signal'): Fence {
  if (fence instanceof Fence) return fence;
  throw invalid(`${what}: ${role} must be a Fence (use Fence.empty for none), got ${String(fence)}`);
}

/** A direct ref resolved against its buffer. */
export interface CheckedRef {
  readonly buffer: CpuBuffer;
  readonly offset: number;
  readonly length: number;
}

/**
 * Checks a direct ref: a live buffer of `device` with `usage`, and a range inside it (the length
 * defaults to `defaultLength` when given, else to the end of the buffer).
 */
export function checkRef(
  device: Device,
  ref: BufferRef,
  usage: number,
  what: string,
  defaultLength?: number,
): CheckedRef {
  if (ref === null || typeof ref !== 'object')
    throw invalid(`${what}: expected a buffer ref { buffer, offset?, length? }`);
  const buffer = (ref as { buffer?: unknown }).buffer;
  if (buffer === undefined && typeof (ref as { slot?: unknown }).slot === 'number') {
    throw invalid(
      `${what}: queue operations take direct refs; binding-table slots exist only in command buffers`,
    );
  }
  if (!(buffer instanceof CpuBuffer))
    throw invalid(`${what}: ${String(buffer)} is not a buffer of a cpu device`);
  if (buffer.device !== device) throw invalid(`${what}: ${describeBuffer(buffer)} belongs to another device`);
  assertBufferLive(buffer, what);
  if (!hasAllBits(buffer.usage, usage)) {
    throw invalid(
      `${what}: ${describeBuffer(buffer)} has usage ${describeUsage(buffer.usage)}, the operation needs ${describeUsage(usage)}`,
    );
  }
  const withDefault =
    ref.length === undefined && defaultLength !== undefined
      ? { offset: ref.offset, length: defaultLength }
      : ref;
  const { offset, length } = resolveRange(withDefault, buffer, what);
  return { buffer, offset, length };
}

/** `view` must be an ArrayBufferView; returns its bytes. */
export function bytesOf(view: unknown, what: string): Uint8Array {
  if (!ArrayBuffer.isView(view)) throw invalid(`${what}: expected an ArrayBufferView, got ${String(view)}`);
  return view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
