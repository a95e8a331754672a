/**
 * Argument checks of queue operations, shared by devices (Device contract: argument errors throw a
 * KeelError synchronously, enqueue nothing, and name the operation and the broken rule). Only the
 * device-specific part is a parameter: which class its buffers are.
 *
 * Messages are `${what}: …` or `${what} ${role}: …`, where `what` names the operation (e.g.
 * "device 'cpu' queueCopy") and `role` the argument ("source", "target"). The checks build no string
 * and allocate nothing unless they throw: a checked range is written into a caller-owned ByteRange that
 * the caller reuses, so a device's hot path stays allocation-free.
 */
import { describeValue, ErrorCode, Fence, KeelError } from '@keel/fence';
import type { BindingTable } from './binding-table';
import { assertBufferLive, type Buffer, describeBuffer } from './buffer';
import { type DirectBufferRef, resolveRange } from './buffer-ref';
import { describeUsage, hasAllBits } from './buffer-usage';
import type { CommandBuffer } from './command-buffer';
import type { Device } from './device';
import { invalid } from './driver/invalid';
import { QueueAffinity } from './queue-affinity';

/** A byte range written by checkQueueRef: owned and reused by the caller. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** The class of a device's buffers (`instanceof` decides whether a buffer is the device's kind). */
export type BufferClass<B extends Buffer> = abstract new (...args: never[]) => B;

/**
 * True for a Fence, also one from another copy of @keel/fence (checked by shape: `onReached`,
 * `timepoints` (an array), `signal`).
 */
export function isFence(value: unknown): value is Fence {
  if (value instanceof Fence) return true;
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Partial<Fence>;
  return typeof f.onReached === 'function' && Array.isArray(f.timepoints) && typeof f.signal === 'function';
}

/** INVALID_ARGUMENT unless `wait` and `signal` are Fences ("… wait must be a Fence …"). */
export function checkQueueFences(wait: unknown, signal: unknown, what: string): void {
  if (!isFence(wait)) throw notAFence(wait, what, 'wait');
  if (!isFence(signal)) throw notAFence(signal, what, 'signal');
}

function notAFence(value: unknown, what: string, role: string): KeelError {
  return invalid(`${what}: ${role} must be a Fence (use Fence.empty for none), got ${describeValue(value)}`);
}

/** The bytes of host memory `view` (an ArrayBufferView, else INVALID_ARGUMENT naming `role`). */
export function hostBytes(view: unknown, what: string, role: string): Uint8Array {
  if (!ArrayBuffer.isView(view)) {
    throw invalid(`${what} ${role}: expected an ArrayBufferView, got ${describeValue(view)}`);
  }
  return view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * Checks a queue operation's direct ref: a ref object (a slot ref is refused: slots exist only in
 * command buffers), an instance of `bufferClass` made by `device`, live, with every bit of `usage`, and
 * a range inside it. An omitted length is `defaultLength` when given (the host array's byteLength, see
 * Device "Lengths"), else the rest of the buffer. Writes the range into `out` and returns the buffer.
 * INVALID_ARGUMENT, FAILED_PRECONDITION (not live) or OUT_OF_RANGE, as `${what} ${role}: …`.
 */
export function checkQueueRef<B extends Buffer>(
  device: Device,
  bufferClass: BufferClass<B>,
  ref: DirectBufferRef,
  usage: number,
  what: string,
  role: string,
  defaultLength: number | undefined,
  out: ByteRange,
): B {
  const buffer = ref !== null && typeof ref === 'object' ? (ref as { buffer?: unknown }).buffer : undefined;
  if (
    buffer instanceof bufferClass &&
    buffer.device === device &&
    buffer.state === 'live' &&
    hasAllBits(buffer.usage, usage)
  ) {
    const offset = ref.offset ?? 0;
    const length = ref.length ?? defaultLength ?? buffer.byteLength - offset;
    if (
      Number.isSafeInteger(offset) &&
      Number.isSafeInteger(length) &&
      offset >= 0 &&
      length >= 0 &&
      offset + length <= buffer.byteLength
    ) {
      out.offset = offset;
      out.length = length;
      return buffer;
    }
  }
  return refError(device, bufferClass, ref, usage, `${what} ${role}`, defaultLength);
}

/** Throws the KeelError that says what is wrong with `ref` (the slow path of checkQueueRef). */
function refError(
  device: Device,
  bufferClass: BufferClass<Buffer>,
  ref: DirectBufferRef,
  usage: number,
  what: string,
  defaultLength: number | undefined,
): never {
  if (ref === null || typeof ref !== 'object') {
    throw invalid(`${what}: expected a buffer ref { buffer, offset?, length? }, got ${describeValue(ref)}`);
  }
  if (looksLikeBuffer(ref)) {
    throw invalid(
      `${what}: got a Buffer itself (${describeBuffer(ref)}); pass a ref { buffer, offset?, length? }, e.g. { buffer }`,
    );
  }
  const buffer = (ref as { buffer?: unknown }).buffer;
  if (buffer === undefined && typeof (ref as { slot?: unknown }).slot === 'number') {
    throw invalid(
      `${what}: queue operations take direct refs; binding-table slots exist only in command buffers`,
    );
  }
  if (!(buffer instanceof bufferClass)) {
    throw invalid(
      `${what}: ref.buffer must be a buffer of a ${device.info.backend} device, got ${describeValue(buffer)}`,
    );
  }
  if (buffer.device !== device) throw invalid(`${what}: ${describeBuffer(buffer)} belongs to another device`);
  assertBufferLive(buffer, what);
  if (!hasAllBits(buffer.usage, usage)) {
    throw invalid(
      `${what}: ${describeBuffer(buffer)} has usage ${describeUsage(buffer.usage)}, the operation needs ${describeUsage(usage)}`,
    );
  }
  resolveRange({ offset: ref.offset, length: ref.length ?? defaultLength }, buffer, what);
  throw new KeelError(ErrorCode.INTERNAL, `${what}: the ref was rejected without a reason`);
}

/** True for a hal Buffer (by shape) passed where a ref `{ buffer, … }` is expected. */
function looksLikeBuffer(value: object): value is Buffer {
  const v = value as Partial<Buffer> & { buffer?: unknown };
  return (
    v.buffer === undefined &&
    typeof v.byteLength === 'number' &&
    typeof v.usage === 'number' &&
    typeof v.device === 'object' &&
    v.device !== null &&
    typeof v.destroy === 'function'
  );
}

/**
 * INVALID_ARGUMENT unless a host transfer's device range has as many bytes as the host array:
 * `${what} target: length L differs from the source's N bytes` (queueUpdate),
 * `${what}: the target range has L bytes, the source N` (queueWrite),
 * `${what}: the source range has L bytes, the target N` (queueRead).
 */
export function checkHostLength(
  kind: 'queueUpdate' | 'queueWrite' | 'queueRead',
  deviceLength: number,
  hostLength: number,
  what: string,
): void {
  if (deviceLength === hostLength) return;
  if (kind === 'queueUpdate') {
    throw invalid(`${what} target: length ${deviceLength} differs from the source's ${hostLength} bytes`);
  }
  const [device, host] = kind === 'queueWrite' ? ['target', 'source'] : ['source', 'target'];
  throw invalid(`${what}: the ${device} range has ${deviceLength} bytes, the ${host} ${hostLength}`);
}

/** INVALID_ARGUMENT unless `patternLength` is 1, 2 or 4 and `pattern` an unsigned integer that fits. */
export function checkFillPattern(pattern: unknown, patternLength: unknown, what: string): void {
  if (patternLength !== 1 && patternLength !== 2 && patternLength !== 4) {
    throw invalid(`${what}: pattern length ${describeValue(patternLength)} is not 1, 2 or 4`);
  }
  if (
    typeof pattern !== 'number' ||
    !Number.isInteger(pattern) ||
    pattern < 0 ||
    pattern >= 2 ** (8 * patternLength)
  ) {
    throw invalid(
      `${what}: pattern ${describeValue(pattern)} is not an unsigned integer that fits in ${patternLength} byte(s)`,
    );
  }
}

/** INVALID_ARGUMENT unless the fill target's offset and length are multiples of the pattern length. */
export function checkFillRange(range: ByteRange, patternLength: number, what: string): void {
  if (range.offset % patternLength !== 0 || range.length % patternLength !== 0) {
    throw invalid(
      `${what} target: offset ${range.offset} and length ${range.length} must be multiples of the pattern length ${patternLength}`,
    );
  }
}

/** INVALID_ARGUMENT unless a copy's lengths match and, within one buffer, its ranges do not overlap. */
export function checkCopyRanges(
  source: Buffer,
  sourceOffset: number,
  sourceLength: number,
  target: Buffer,
  targetOffset: number,
  targetLength: number,
  what: string,
): void {
  if (sourceLength !== targetLength) {
    throw invalid(`${what}: source length ${sourceLength} differs from target length ${targetLength}`);
  }
  if (
    source === target &&
    sourceLength > 0 &&
    sourceOffset < targetOffset + sourceLength &&
    targetOffset < sourceOffset + sourceLength
  ) {
    throw invalid(
      `${what}: source range [${sourceOffset}, ${sourceOffset + sourceLength}) and target range [${targetOffset}, ${targetOffset + sourceLength}) of ${describeBuffer(source)} overlap`,
    );
  }
}

/**
 * Checks the arguments of `queueExecute` on queue `queue` of `device` and validates each submission:
 * arrays (at most one table per command buffer), each entry a command buffer of this device whose
 * affinity includes `queue`, a one-shot buffer at most once, then `validateSubmission(table)` of each.
 * Marks nothing submitted.
 */
export function checkExecuteArguments(
  device: Device,
  queue: number,
  commandBuffers: readonly CommandBuffer[],
  bindingTables: readonly (BindingTable | undefined)[] | undefined,
  what: string,
): void {
  if (!Array.isArray(commandBuffers)) throw invalid(`${what}: commandBuffers must be an array`);
  if (bindingTables !== undefined && bindingTables !== null && !Array.isArray(bindingTables)) {
    throw invalid(`${what}: bindingTables must be an array (one entry per command buffer) or undefined`);
  }
  const count = commandBuffers.length;
  if (bindingTables && bindingTables.length > count) {
    throw invalid(`${what}: ${bindingTables.length} binding tables for ${count} command buffer(s)`);
  }
  for (let i = 0; i < count; i++) {
    const cb = commandBuffers[i];
    if (cb === null || typeof cb !== 'object' || typeof (cb as CommandBuffer).replay !== 'function') {
      throw invalid(`${what}: commandBuffers[${i}] is not a command buffer`);
    }
    if (cb.device !== device) throw invalid(`${what}: commandBuffers[${i}] belongs to another device`);
    if (!QueueAffinity.has(cb.affinity, queue)) {
      throw invalid(
        `${what}: commandBuffers[${i}] was created for queue affinity 0x${(cb.affinity >>> 0).toString(16)}, which excludes queue ${queue}`,
      );
    }
    if (cb.mode === 'one-shot') {
      for (let j = 0; j < i; j++) {
        if (commandBuffers[j] === cb) {
          throw new KeelError(
            ErrorCode.FAILED_PRECONDITION,
            `${what}: one-shot commandBuffers[${i}] appears twice in one submission`,
          );
        }
      }
    }
    cb.validateSubmission(bindingTables?.[i] ?? undefined);
  }
}

/**
 * queueAlloca's `options`: undefined, or a plain object whose only key is `pool` (a string); returns the
 * pool it names ('tlsf' when none). Allocation-free (queueAlloca is on hot paths).
 */
export function allocaPool(options: unknown, what: string): string {
  if (options === undefined) return 'tlsf';
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`${what}: options must be an object ({ pool?: string }), got ${describeValue(options)}`);
  }
  for (const key in options) {
    if (key !== 'pool') throw invalid(`${what}: unknown option '${key}' (known options: pool)`);
  }
  const pool = (options as { pool?: unknown }).pool;
  if (pool === undefined) return 'tlsf';
  if (typeof pool !== 'string') {
    throw invalid(`${what}: option 'pool' must be a pool name (a string), got ${describeValue(pool)}`);
  }
  return pool;
}

/**
 * Checks the buffer of `queueDealloca`: an instance of `bufferClass` made by `device` (INVALID_ARGUMENT),
 * queue-allocated (INVALID_ARGUMENT: release a createBuffer buffer with destroy()) and still live
 * (FAILED_PRECONDITION: released twice).
 */
export function checkDeallocaBuffer<B extends Buffer>(
  device: Device,
  bufferClass: BufferClass<B>,
  buffer: Buffer,
  what: string,
): B {
  if (!(buffer instanceof bufferClass) || buffer.device !== device) {
    throw invalid(`${what}: the buffer is not a buffer of this device`);
  }
  if (!buffer.placement.queueAllocated) throw madeByCreateBuffer(buffer, what);
  if (buffer.state !== 'live') {
    throw new KeelError(
      ErrorCode.FAILED_PRECONDITION,
      `${what}: ${describeBuffer(buffer)} was already released by queueDealloca and cannot be used`,
    );
  }
  return buffer;
}

/** The INVALID_ARGUMENT of a queueDealloca of a buffer that createBuffer made. */
export function madeByCreateBuffer(buffer: Pick<Buffer, 'byteLength' | 'label'>, what: string): KeelError {
  return invalid(`${what}: ${describeBuffer(buffer)} was made by createBuffer; release it with destroy()`);
}
