/**
 * Growth of typed arrays by doubling: the recorder calls these only when an array is full, so recording
 * allocates amortized O(1) per command and nothing in the common case.
 */

function nextCapacity(current: number, needed: number): number {
  let capacity = Math.max(current, 16);
  while (capacity < needed) capacity *= 2;
  return capacity;
}

/** A Float64Array of at least `needed` elements holding the first `used` elements of `array`. */
export function growFloat64(array: Float64Array, used: number, needed: number): Float64Array<ArrayBuffer> {
  const next = new Float64Array(nextCapacity(array.length, needed));
  next.set(array.subarray(0, used));
  return next;
}

/** A Uint32Array of at least `needed` elements holding the first `used` elements of `array`. */
export function growUint32(array: Uint32Array, used: number, needed: number): Uint32Array<ArrayBuffer> {
  const next = new Uint32Array(nextCapacity(array.length, needed));
  next.set(array.subarray(0, used));
  return next;
}

/** An Int32Array of at least `needed` elements holding the first `used` elements of `array`. */
export function growInt32(array: Int32Array, used: number, needed: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(nextCapacity(array.length, needed));
  next.set(array.subarray(0, used));
  return next;
}

/** A Uint8Array of at least `needed` bytes holding the first `used` bytes of `array`. */
export function growUint8(array: Uint8Array, used: number, needed: number): Uint8Array<ArrayBuffer> {
  const next = new Uint8Array(nextCapacity(array.length, needed));
  next.set(array.subarray(0, used));
  return next;
}
