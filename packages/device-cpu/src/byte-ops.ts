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
  if (patternLength === 4 && ((offset | length) & 3) === 0) {
    new Uint32Array(memory, offset, length >>> 2).fill(pattern >>> 0);
    return;
  }
  fillView(new Uint8Array(memory), offset, length, pattern, patternLength);
}

/**
 * fillBytes over `bytes`, a view of a whole memory (offsets are the memory's): allocation-free, for
 * callers that keep one view per slab (the main thread's queue fills).
 */
export function fillView(
  bytes: Uint8Array,
  offset: number,
  length: number,
  pattern: number,
  patternLength: number,
): void {
  if (length <= 0) return;
  if (patternLength === 1) {
    bytes.fill(pattern & 0xff, offset, offset + length);
    return;
  }
  // 2- and 4-byte patterns: write one period, then double it with copyWithin (O(log n) native copies).
  const first = Math.min(patternLength, length);
  for (let i = 0; i < first; i++) bytes[offset + i] = (pattern >>> (8 * i)) & 0xff;
  let filled = first;
  while (filled < length) {
    const n = Math.min(filled, length - filled);
    bytes.copyWithin(offset + filled, offset, offset + n);
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
  const bytes = new Uint8Array(target);
  copyView(source === target ? bytes : new Uint8Array(source), sourceOffset, bytes, targetOffset, length);
}

/**
 * copyBytes between `source` and `target`, views of whole memories (offsets are the memories'): within
 * one memory allocation-free; between two, one view of the source range.
 */
export function copyView(
  source: Uint8Array,
  sourceOffset: number,
  target: Uint8Array,
  targetOffset: number,
  length: number,
): void {
  if (length <= 0) return;
  if (source.buffer === target.buffer) {
    target.copyWithin(targetOffset, sourceOffset, sourceOffset + length);
    return;
  }
  target.set(source.subarray(sourceOffset, sourceOffset + length), targetOffset);
}
