/**
 * A device buffer: a range of device memory with usage and memory-type bits. Buffers are created by a
 * device (`createBuffer`, owned by the caller until `destroy()`) or by queue-ordered allocation
 * (`queueAlloca`, usable only between the alloca's signal and the dealloca, see `state`).
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { ALL_MEMORY_BITS, ALL_USAGE_BITS, type BufferUsage, type MemoryType } from './buffer-usage';
import type { Device } from './device';
import { invalid } from './driver/invalid';
import { QueueAffinity } from './queue-affinity';

/**
 * Where a buffer lives: the queues it is meant for and the pool that backs it. `pool` names the pool
 * kind for queue-allocated buffers ('tlsf', 'ring', 'passthrough') and is undefined for device buffers.
 */
export interface BufferPlacement {
  readonly affinity: QueueAffinity;
  readonly pool?: string | undefined;
  /** True when the buffer came from `queueAlloca` and must be released with `queueDealloca`. */
  readonly queueAllocated: boolean;
}

/**
 * Lifetime of a buffer:
 * - `live`: usable (for a queue-allocated buffer: in commands ordered after the alloca's signal);
 * - `deallocated`: a `queueDealloca` was issued; any further use is FAILED_PRECONDITION;
 * - `destroyed`: `destroy()` was called (or its device was destroyed); any use is FAILED_PRECONDITION.
 */
export type BufferState = 'live' | 'deallocated' | 'destroyed';

export interface Buffer {
  readonly device: Device;
  readonly byteLength: number;
  readonly usage: BufferUsage;
  readonly memoryType: MemoryType;
  readonly placement: BufferPlacement;
  readonly state: BufferState;
  /** Optional name used in error messages. */
  readonly label?: string | undefined;
  /**
   * Releases a device buffer. Work already submitted that uses it keeps it alive until it completes.
   * For a queue-allocated buffer this is FAILED_PRECONDITION: use `queueDealloca`.
   */
  destroy(): void;
}

/** Parameters of `createBuffer` and `queueAlloca`. */
export interface BufferParams {
  readonly usage: BufferUsage;
  /** Defaults to the device's preferred type (DEVICE_LOCAL, plus HOST_VISIBLE on unified memory). */
  readonly memoryType?: MemoryType;
  /**
   * Queues the buffer is used on: the placement affinity. Defaults to ANY for `createBuffer`, and to the
   * alloca's own queue for `queueAlloca`.
   */
  readonly affinity?: QueueAffinity;
  readonly label?: string;
}

/** "buffer 'weights' (256 bytes)" or "buffer (256 bytes)": how messages name a buffer. */
export function describeBuffer(buffer: Pick<Buffer, 'byteLength' | 'label'>): string {
  return buffer.label === undefined
    ? `buffer (${buffer.byteLength} bytes)`
    : `buffer '${buffer.label}' (${buffer.byteLength} bytes)`;
}

/**
 * Throws FAILED_PRECONDITION unless `buffer` is live. `what` names the use, e.g. "copy source".
 */
export function assertBufferLive(buffer: Buffer, what: string): void {
  if (buffer.state !== 'live') {
    const why = buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
    throw new KeelError(
      ErrorCode.FAILED_PRECONDITION,
      `${what}: ${describeBuffer(buffer)} ${why} and cannot be used`,
    );
  }
}

/**
 * Checks the BufferParams of `createBuffer`/`queueAlloca` (INVALID_ARGUMENT naming `what`): an object
 * (a plain bag; not an array), `usage` an integer of defined BufferUsage bits only, `memoryType` (when
 * given) an integer of defined MemoryType bits only, `affinity` (when given) a valid 32-bit mask (see
 * QueueAffinity), `label` (when given) a string. Returns the usage. Shared by every device, so they
 * refuse the same params.
 */
export function checkBufferParams(params: BufferParams, what: string): number {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw invalid(
      `${what}: params must be an object { usage, memoryType?, affinity?, label? }, got ${describeValue(params)}`,
    );
  }
  const usage = params.usage;
  if (!isBits(usage, ALL_USAGE_BITS)) {
    throw invalid(
      `${what}: params.usage must be BufferUsage bits (an integer made of bits in 0x${ALL_USAGE_BITS.toString(16)}), got ${describeValue(usage)}`,
    );
  }
  const memoryType = params.memoryType;
  if (memoryType !== undefined && !isBits(memoryType, ALL_MEMORY_BITS)) {
    throw invalid(
      `${what}: params.memoryType must be MemoryType bits (an integer made of bits in 0x${ALL_MEMORY_BITS.toString(16)}), got ${describeValue(memoryType)}`,
    );
  }
  const affinity = params.affinity;
  if (affinity !== undefined) QueueAffinity.check(affinity, `${what}: params.affinity`);
  const label = params.label;
  if (label !== undefined && typeof label !== 'string') {
    throw invalid(`${what}: params.label must be a string, got ${describeValue(label)}`);
  }
  return usage;
}

/** INVALID_ARGUMENT unless `byteLength` (of `createBuffer`) is an integer in [0, maxBufferSize]. */
export function checkBufferByteLength(byteLength: unknown, maxBufferSize: number, what: string): number {
  if (typeof byteLength !== 'number' || !Number.isInteger(byteLength) || byteLength < 0) {
    throw invalid(`${what}: byteLength must be a non-negative integer, got ${describeValue(byteLength)}`);
  }
  if (byteLength > maxBufferSize) {
    throw invalid(`${what}: byteLength ${byteLength} exceeds the device's maxBufferSize of ${maxBufferSize}`);
  }
  return byteLength;
}

/** True when `value` is a non-negative integer with no bit outside `defined`. */
function isBits(value: unknown, defined: number): value is number {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= 0 &&
    value <= 0xffffffff &&
    (value & ~defined) === 0
  );
}
