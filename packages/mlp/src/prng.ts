/**
 * A small deterministic pseudo-random generator shared by Keel and the TensorFlow.js benchmark, so that
 * both train on bit-identical data and initial weights: xoshiro128** seeded through splitmix32.
 *
 * Contract: the same seed always yields the same sequence on every platform (only 32-bit integer
 * arithmetic through `Math.imul` and `>>>`); `nextFloat()` is uniform in [0, 1) with 24 random bits, so
 * every value is exactly representable as an f32.
 */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** @param seed any 32-bit integer; streams of different seeds are independent for our purposes. */
  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** The next 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1), a multiple of 2^-24. */
  nextFloat(): number {
    return (this.nextU32() >>> 8) / 16777216;
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.nextFloat();
  }

  /** Uniform integer in [0, n) for 0 < n ≤ 2^32 (multiply-shift; bias below 2^-32·n, irrelevant here). */
  nextInt(n: number): number {
    return Math.floor((this.nextU32() / 4294967296) * n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Mixes a seed and a stream index into a new seed (so batch i has its own reproducible stream). */
export function deriveSeed(seed: number, stream: number): number {
  let z = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul((stream + 1) >>> 0, 0x85ebca77)) >>> 0;
  z = Math.imul(z ^ (z >>> 15), 0x2c1b3c6d) >>> 0;
  z = Math.imul(z ^ (z >>> 12), 0x297a2d39) >>> 0;
  return (z ^ (z >>> 15)) >>> 0;
}
