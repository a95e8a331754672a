/**
 * Growable typed arrays for device plan builders: push values, read `array` (valid up to `length`),
 * take a trimmed copy with `toArray()`. Capacity doubles, so pushes are amortized O(1).
 */

/** The element kinds a TypedArrayBuilder grows. */
export type TypedArrayKind = 'Uint8' | 'Int32' | 'Uint32' | 'Float64';

type TypedArrayOf<K extends TypedArrayKind> = K extends 'Uint8'
  ? Uint8Array
  : K extends 'Int32'
    ? Int32Array
    : K extends 'Uint32'
      ? Uint32Array
      : Float64Array;

const CONSTRUCTORS = {
  Uint8: Uint8Array,
  Int32: Int32Array,
  Uint32: Uint32Array,
  Float64: Float64Array,
} as const;

/** A growable Uint8Array, Int32Array, Uint32Array or Float64Array. */
/** A typed array of the kind of `array`. */
type Growable = Uint8Array | Int32Array | Uint32Array | Float64Array;

/**
 * A typed array of the same kind as `array`, of at least `needed` elements (capacity doubles, at least
 * 16), holding the first `used` elements of `array`. The one growth rule of the kit: TypedArrayBuilder
 * uses it, and so do recorders that keep raw arrays with their own fill counts.
 */
export function growTypedArray<T extends Growable>(array: T, used: number, needed: number): T {
  let size = Math.max(array.length * 2, 16);
  while (size < needed) size *= 2;
  const grown = new (array.constructor as new (size: number) => T)(size);
  grown.set(array.subarray(0, used) as never);
  return grown;
}

export class TypedArrayBuilder<K extends TypedArrayKind> {
  array: TypedArrayOf<K>;
  length = 0;

  constructor(kind: K, capacity = 64) {
    const ctor = CONSTRUCTORS[kind] as unknown as new (size: number) => TypedArrayOf<K>;
    this.array = new ctor(Math.max(1, capacity));
  }

  /** Makes room for `count` more values (the array may be replaced). */
  reserve(count: number): void {
    const needed = this.length + count;
    if (needed <= this.array.length) return;
    this.array = growTypedArray(this.array, this.length, needed);
  }

  push(value: number): void {
    if (this.length === this.array.length) this.reserve(1);
    this.array[this.length++] = value;
  }

  /** Appends `values` (all of them). */
  append(values: ArrayLike<number>): void {
    this.reserve(values.length);
    this.array.set(values as never, this.length);
    this.length += values.length;
  }

  /** A copy of the values pushed so far. */
  toArray(): TypedArrayOf<K> {
    return this.array.slice(0, this.length) as TypedArrayOf<K>;
  }
}
