/** The WebAssembly GEMM (wat.ts) called directly, against reference.ts's matmul plus epilogue. */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GemmInstance, instantiateGemm } from '../src/cpu/gemm-instance';
import { FLAG_BIAS, FLAG_MASK, FLAG_RELU, scratchBytes } from '../src/cpu/wat';
import { Prng } from '../src/prng';
import { matmul } from '../src/reference';
import { gemmModule, maxRelativeError, randomArray } from './helpers';

interface Case {
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  flags: number;
  seed: number;
}

let gemm: GemmInstance;
const MEMORY_BYTES = 64 << 20;

beforeAll(async () => {
  const memory = new WebAssembly.Memory({
    initial: MEMORY_BYTES / 65536,
    maximum: MEMORY_BYTES / 65536,
    shared: true,
  });
  gemm = instantiateGemm(await gemmModule(), memory);
});

/** Runs one case in the module's memory and returns [kernel result, reference result]. */
function runCase(c: Case, padA = 0, padB = 0): [Float32Array, Float32Array] {
  const prng = new Prng(c.seed);
  const { m, n, k } = c;
  // Row strides may exceed the logical width (padA/padB): views into larger matrices.
  const aRows = c.transA ? k : m;
  const aCols = (c.transA ? m : k) + padA;
  const bRows = c.transB ? n : k;
  const bCols = (c.transB ? k : n) + padB;
  const a = randomArray(prng, aRows * aCols);
  const b = randomArray(prng, bRows * bCols);
  const c0 = randomArray(prng, m * n);
  const bias = randomArray(prng, n);
  const mask = randomArray(prng, m * n);
  // Dense copies for the reference.
  const ad = new Float32Array(aRows * (aCols - padA));
  for (let r = 0; r < aRows; r++) ad.set(a.subarray(r * aCols, r * aCols + aCols - padA), r * (aCols - padA));
  const bd = new Float32Array(bRows * (bCols - padB));
  for (let r = 0; r < bRows; r++) bd.set(b.subarray(r * bCols, r * bCols + bCols - padB), r * (bCols - padB));
  const want = Float64Array.from(c0);
  matmul(ad, bd, want, m, n, k, { transA: c.transA, transB: c.transB, alpha: c.alpha, beta: c.beta });
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let v = want[i * n + j]!;
      if (c.flags & FLAG_BIAS) v += bias[j]!;
      if (c.flags & FLAG_RELU) v = Math.max(v, 0);
      if (c.flags & FLAG_MASK) v = mask[i * n + j]! > 0 ? v : 0;
      want[i * n + j] = v;
    }
  }
  const f32 = new Float32Array(gemm.memory.buffer);
  let at = 256;
  const put = (x: Float32Array): number => {
    const p = at;
    f32.set(x, p >> 2);
    at = (at + x.byteLength + 64) & ~63;
    return p;
  };
  const pa = put(a);
  const pb = put(b);
  const pc = put(c0);
  const pbias = put(bias);
  const pmask = put(mask);
  const scratch = at;
  expect(scratch + scratchBytes()).toBeLessThan(MEMORY_BYTES);
  gemm.gemm(
    m,
    n,
    k,
    pa,
    c.transA ? 1 : aCols,
    c.transA ? aCols : 1,
    pb,
    c.transB ? 1 : bCols,
    c.transB ? bCols : 1,
    pc,
    n,
    c.alpha,
    c.beta,
    c.flags,
    pbias,
    pmask,
    n,
    scratch,
  );
  return [f32.slice(pc >> 2, (pc >> 2) + m * n), Float32Array.from(want)];
}

const caseArb = fc.record({
  m: fc.integer({ min: 1, max: 70 }),
  n: fc.integer({ min: 1, max: 70 }),
  k: fc.integer({ min: 0, max: 70 }),
  transA: fc.boolean(),
  transB: fc.boolean(),
  alpha: fc.constantFrom(1, -0.05, 2.5),
  beta: fc.constantFrom(0, 1, -0.5),
  flags: fc.constantFrom(0, FLAG_BIAS, FLAG_BIAS | FLAG_RELU, FLAG_MASK, FLAG_RELU),
  seed: fc.integer({ min: 0, max: 1 << 30 }),
});

describe('wasm GEMM', () => {
  it('matches the reference on random shapes, transposes and epilogues', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const [got, want] = runCase(c);
        expect(maxRelativeError(got, want)).toBeLessThan(1e-5 * Math.max(1, Math.sqrt(c.k)));
      }),
      { numRuns: 300, seed: 20240611 },
    );
  });

  it('handles strided views (row stride larger than the width)', () => {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const [got, want] = runCase(
          { m: 13, n: 21, k: 9, transA, transB, alpha: 1, beta: 0, flags: 0, seed: 3 },
          5,
          3,
        );
        expect(maxRelativeError(got, want)).toBeLessThan(1e-5);
      }
    }
  });

  it('handles K above one packing chunk and tiles larger than one block', () => {
    const [got, want] = runCase({
      m: 131,
      n: 263,
      k: 1100,
      transA: false,
      transB: false,
      alpha: 1,
      beta: 1,
      flags: FLAG_BIAS | FLAG_RELU,
      seed: 9,
    });
    expect(maxRelativeError(got, want)).toBeLessThan(1e-4);
    const [got2, want2] = runCase({
      m: 70,
      n: 40,
      k: 2051,
      transA: true,
      transB: true,
      alpha: -0.5,
      beta: 0,
      flags: FLAG_MASK,
      seed: 10,
    });
    expect(maxRelativeError(got2, want2)).toBeLessThan(1e-4);
  });

  it('computes the reference MLP shapes', () => {
    for (const [m, n, k, transA, transB] of [
      [256, 512, 784, false, false],
      [256, 512, 512, false, true],
      [784, 512, 256, true, false],
      [256, 10, 512, false, false],
    ] as const) {
      const [got, want] = runCase({ m, n, k, transA, transB, alpha: 1, beta: 0, flags: 0, seed: m + n + k });
      expect(maxRelativeError(got, want)).toBeLessThan(1e-4);
    }
  });
});
