/** `f32Bits` of the MLP exports keeps working, now as hal's `constants.f32` (range-checked). */
import { constants, ErrorCode, KeelError } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { f32Bits } from '../src/index';

describe('f32Bits', () => {
  it('is the f32 bit pattern, as constants.f32', () => {
    expect(f32Bits(1)).toBe(0x3f800000);
    expect(f32Bits(0.05)).toBe(constants.f32(0.05));
    expect(new Float32Array(Uint32Array.of(f32Bits(-2.5)).buffer)[0]).toBe(-2.5);
  });

  it('refuses a finite value beyond the f32 range instead of turning it into Infinity', () => {
    let error: unknown;
    try {
      f32Bits(1e39);
    } catch (e) {
      error = e;
    }
    expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
  });
});
