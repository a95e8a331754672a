import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { constants, packConstants } from '../src/index';

function errorOf(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (e) {
    expect(KeelError.is(e)).toBe(true);
    return e as KeelError;
  }
  throw new Error('did not throw');
}

describe('constants', () => {
  it('f32 gives the IEEE-754 bit pattern, rounded to nearest f32', () => {
    expect(constants.f32(1)).toBe(0x3f800000);
    expect(constants.f32(-2.5)).toBe(0xc0200000);
    expect(constants.f32(0)).toBe(0);
    expect(constants.f32(-0)).toBe(0x80000000);
    expect(constants.f32(Number.POSITIVE_INFINITY)).toBe(0x7f800000);
    expect(constants.f32(Number.NaN)).toBe(0x7fc00000);
    expect(constants.f32(0.1)).toBe(new Uint32Array(new Float32Array([0.1]).buffer)[0]);
    expect(constants.f32(3.4028234663852886e38)).toBe(0x7f7fffff);
  });

  it('f32 refuses non-numbers and finite values beyond the f32 range', () => {
    const big = errorOf(() => constants.f32(1e39));
    expect(big.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(big.message).toMatch(/constants\.f32: 1e\+39 is outside the f32 range/);
    const str = errorOf(() => constants.f32('1' as unknown as number));
    expect(str.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(str.message).toMatch(/constants\.f32: "1" is not a number/);
  });

  it('i32 gives the two-complement pattern of integers in [-2^31, 2^31)', () => {
    expect(constants.i32(-1)).toBe(0xffffffff);
    expect(constants.i32(-0x80000000)).toBe(0x80000000);
    expect(constants.i32(0x7fffffff)).toBe(0x7fffffff);
    for (const bad of [0x80000000, -0x80000001, 1.5, Number.NaN]) {
      const e = errorOf(() => constants.i32(bad));
      expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(e.message).toMatch(/constants\.i32: .* is not an i32/);
    }
  });

  it('u32 accepts integers in [0, 2^32) as they are', () => {
    expect(constants.u32(0)).toBe(0);
    expect(constants.u32(0xffffffff)).toBe(0xffffffff);
    for (const bad of [-1, 2 ** 32, 0.5, Number.POSITIVE_INFINITY]) {
      const e = errorOf(() => constants.u32(bad));
      expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(e.message).toMatch(/constants\.u32: .* is not a u32/);
    }
  });
});

describe('packConstants', () => {
  it('packs bit patterns and tagged values into a Uint32Array', () => {
    const packed = packConstants([{ f32: 0.5 }, { i32: -2 }, { u32: 7 }, constants.f32(2), 9]);
    expect(packed).toBeInstanceOf(Uint32Array);
    expect([...packed]).toEqual([0x3f000000, 0xfffffffe, 7, 0x40000000, 9]);
    expect(new Float32Array(packed.buffer)[0]).toBe(0.5);
    expect(new Int32Array(packed.buffer)[1]).toBe(-2);
    expect(packConstants([]).length).toBe(0);
  });

  it('names the index and the rule of a bad entry', () => {
    const cases: [unknown, RegExp][] = [
      [[1, -1], /packConstants: constant 1: -1 is not a u32/],
      [[{ f32: 1e40 }], /packConstants: constant 0 \(f32\): 1e\+40 is outside the f32 range/],
      [[0, { i32: 2 ** 31 }], /packConstants: constant 1 \(i32\): 2147483648 is not an i32/],
      [[{ u32: -3 }], /packConstants: constant 0 \(u32\): -3 is not a u32/],
      [[{ f64: 1 }], /packConstants: constant 0: .* must be a u32 bit pattern or one of/],
      [[{ f32: 1, u32: 2 }], /packConstants: constant 0: .* must be a u32 bit pattern or one of/],
      [['3'], /packConstants: constant 0: "3" must be a u32 bit pattern/],
      [new Uint32Array(2), /packConstants: values must be an array/],
    ];
    for (const [values, message] of cases) {
      const e = errorOf(() => packConstants(values as never));
      expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(e.message).toMatch(message);
    }
  });
});
