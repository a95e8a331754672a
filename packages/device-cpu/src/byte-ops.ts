/**
 * Byte-level fill and copy over device memory, shared by the main thread (sync mode, queue transfers)
 * and workers (command-buffer transfers). Patterns are little-endian: a 2-byte pattern 0x1234 writes
 * the bytes 34 12 34 12 ... Callers validate ranges; these functions trust them. Also where device
 * memory comes from: a SharedArrayBuffer in task mode, an ArrayBuffer in sync mode.
 */

/** New zeroed memory: shared with workers (task mode) or not (sync mode). */
export function newMemory(byteLength: number, shared: boolean): ArrayBufferLike {
  return shared ? new SharedArrayBuffer(byteLength) : new ArrayBuffer(byteLength);
}

/** Writes `pattern` (1, 2 or 4 bytes, little-endian) over bytes [offset, offset + length) of `memory`. */
export function fillBytes(
  memory: ArrayBufferLike,
  offset: number,
  length: number,
  pattern: number,
  patternLength: number,
): void {
  if (length <= 0) return;
  if (patternLength === 1) {
    new Uint8Array(memory, offset, length).fill(pattern & 0xff);
    return;
  }
  if (patternLength === 4 && ((offset | length) & 3) === 0) {
    new Uint32Array(memory, offset, length >>> 2).fill(pattern >>> 0);
    return;
  }
  // Otherwise (2-byte patterns, unaligned ranges): write one period, then double it with copyWithin
  // (O(log n) native copies).
  const bytes = new Uint8Array(memory, offset, length);
  const first = Math.min(patternLength, length);
  for (let i = 0; i < first; i++) bytes[i] = (pattern >>> (8 * i)) & 0xff;
  let filled = first;
  while (filled < length) {
    const n = Math.min(filled, length - filled);
    bytes.copyWithin(filled, 0, n);
    filled += n;
  }
}

/** Copies `length` bytes between two memories (ranges of one memory must not overlap). */
export function copyBytes(
  source: ArrayBufferLike,
  sourceOffset: number,
  target: ArrayBufferLike,
  targetOffset: number,
  length: number,
): void {
  if (length <= 0) return;
  if (source === target) {
    new Uint8Array(target).copyWithin(targetOffset, sourceOffset, sourceOffset + length);
    return;
  }
  new Uint8Array(target, targetOffset, length).set(new Uint8Array(source, sourceOffset, length));
}
