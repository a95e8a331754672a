/**
 * Dispatch constants: every backend receives a dispatch's constants as 32-bit words (a `Uint32Array` on
 * the CPU, a uniform of `u32` on WebGPU), so floats and signed integers travel as their bit patterns.
 * Contract: `constants.f32(x)` is the u32 bit pattern of `x` rounded to the nearest f32 (NaN and ±Infinity
 * allowed; a finite number beyond the f32 range is INVALID_ARGUMENT, not a silent Infinity);
 * `constants.i32(x)` the two's-complement pattern of an integer in [-2^31, 2^31); `constants.u32(x)` an
 * integer in [0, 2^32) as it is. `packConstants(values)` packs a list of bit patterns (plain numbers,
 * checked as u32) and tagged values (`{ f32 }`, `{ i32 }`, `{ u32 }`) into a new Uint32Array. Every bad
 * value throws KeelError INVALID_ARGUMENT naming the helper, the index and the rule. Runs at record time,
 * never on a replay path.
 */
import { describeValue, type KeelError } from '@keel/fence';
import { invalid } from './driver/invalid';

/** One entry of `packConstants`: a u32 bit pattern, or a value tagged with its 32-bit type. */
export type ConstantValue =
  | number
  | { readonly f32: number }
  | { readonly i32: number }
  | { readonly u32: number };

const scratch = new DataView(new ArrayBuffer(4));
const F32_MAX = 3.4028234663852886e38;

function f32Bits(what: string, x: unknown): number {
  if (typeof x !== 'number') {
    throw invalid(`${what}: ${describeValue(x)} is not a number`);
  }
  if (Number.isFinite(x) && !Number.isFinite(Math.fround(x))) {
    throw invalid(`${what}: ${describeValue(x)} is outside the f32 range (magnitude at most ${F32_MAX})`);
  }
  scratch.setFloat32(0, x, true);
  return scratch.getUint32(0, true);
}

function i32Bits(what: string, x: unknown): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < -0x80000000 || x > 0x7fffffff) {
    throw invalid(`${what}: ${describeValue(x)} is not an i32 (an integer in [-2147483648, 2147483647])`);
  }
  return x >>> 0;
}

function u32Bits(what: string, x: unknown): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 0xffffffff) {
    throw invalid(`${what}: ${describeValue(x)} is not a u32 (an integer in [0, 4294967295])`);
  }
  return x;
}

/** Bit-pattern helpers for dispatch constants; each returns the u32 word a kernel receives. */
export const constants = Object.freeze({
  /** The u32 bit pattern of `x` as an f32 (rounded to nearest; NaN and ±Infinity allowed). */
  f32(x: number): number {
    return f32Bits('constants.f32', x);
  },
  /** The u32 bit pattern of the i32 `x` (two's complement): an integer in [-2^31, 2^31). */
  i32(x: number): number {
    return i32Bits('constants.i32', x);
  },
  /** `x` itself, checked to be an integer in [0, 2^32). */
  u32(x: number): number {
    return u32Bits('constants.u32', x);
  },
});

/**
 * Packs dispatch constants into a new Uint32Array. Plain numbers are u32 bit patterns (e.g. from
 * `constants.f32`); `{ f32 }`, `{ i32 }` and `{ u32 }` are converted. INVALID_ARGUMENT names the index.
 *
 * @example packConstants([{ f32: 0.05 }, { u32: 256 }, constants.i32(-1)])
 */
export function packConstants(values: readonly ConstantValue[]): Uint32Array {
  if (!Array.isArray(values)) {
    throw invalid(`packConstants: values must be an array, got ${describeValue(values)}`);
  }
  const out = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v: unknown = values[i];
    const what = `packConstants: constant ${i}`;
    if (typeof v === 'number') {
      out[i] = u32Bits(what, v);
    } else if (typeof v === 'object' && v !== null && Object.keys(v).length === 1) {
      if ('f32' in v) out[i] = f32Bits(`${what} (f32)`, v.f32);
      else if ('i32' in v) out[i] = i32Bits(`${what} (i32)`, v.i32);
      else if ('u32' in v) out[i] = u32Bits(`${what} (u32)`, v.u32);
      else throw badEntry(what, v);
    } else {
      throw badEntry(what, v);
    }
  }
  return out;
}

function badEntry(what: string, v: unknown): KeelError {
  return invalid(
    `${what}: ${describeValue(v)} must be a u32 bit pattern or one of { f32 }, { i32 }, { u32 }`,
  );
}
