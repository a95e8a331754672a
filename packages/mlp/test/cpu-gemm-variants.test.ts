/**
 * Both builds of the WebAssembly GEMM (plain SIMD, and relaxed SIMD with `f32x4.relaxed_madd`) on edge
 * shapes (sizes that are not multiples of the 4×8 register tile, the 128×256 packing blocks or the K
 * chunk), through the matmul kernels (copy and zero-copy paths, the descriptors' default tiles),
 * against the plain-JS matmul of reference.ts; the variant choice; the even tile counts.
 *
 * Node 20's V8 compiles relaxed SIMD only behind `--experimental-wasm-relaxed-simd`; this file turns
 * the flag on (`v8.setFlagsFromString`) so both builds run here. Where the engine still refuses, the
 * relaxed cases are skipped, and the test says so.
 */
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileGemmWasm, relaxedSimdSupported } from '../scripts/mlp-wasm';
import { createMlpCpuKernels, type MlpCpuKernels } from '../src/cpu/create-kernels';
import { MLP_CPU_EXPORTS } from '../src/cpu/descriptors';
import { chooseGemm } from '../src/cpu/gemm-variant';
import { GEMM_SCRATCH_BYTES } from '../src/cpu/matmul-kernels';
import { DEFAULT_GEMM_OPTIONS, RELAXED_GEMM_OPTIONS } from '../src/cpu/wat';
import { matmulConstants } from '../src/kernel-interface';
import { Prng } from '../src/prng';
import {
  Arena,
  dispatch,
  GEMM_KINDS,
  gemmBindings,
  gemmCase,
  gemmUpdates,
  maxRelativeError,
  TRANSPOSES,
} from './helpers';

const wasRelaxed = relaxedSimdSupported();
if (!wasRelaxed) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const relaxedAvailable = relaxedSimdSupported();

const built: Partial<
  Record<'simd' | 'relaxed-simd', { bytes: Uint8Array<ArrayBuffer>; kernels: MlpCpuKernels }>
> = {};

beforeAll(async () => {
  for (const [variant, options] of [
    ['simd', DEFAULT_GEMM_OPTIONS],
    ['relaxed-simd', RELAXED_GEMM_OPTIONS],
  ] as const) {
    const { bytes } = await compileGemmWasm(options);
    if (variant === 'relaxed-simd' && !relaxedAvailable) continue;
    built[variant] = { bytes, kernels: createMlpCpuKernels(await WebAssembly.compile(bytes)) };
  }
});

// Leaves the engine as this file found it (a worker process may run other test files afterwards).
afterAll(() => {
  if (!wasRelaxed) v8.setFlagsFromString('--no-experimental-wasm-relaxed-simd');
});

function countOf(name: string, workload: readonly number[]): [number, number, number] {
  const c = MLP_CPU_EXPORTS.find((e) => e.name === name)!.workgroupCount!(workload);
  return [c[0], c[1], c[2]];
}

/** Shapes around the block sizes: mr 4, nr 8, mc 128, nc 256, kc chunks of ≤ 1024. */
const EDGE_SHAPES: readonly (readonly [m: number, n: number, k: number])[] = [
  [1, 1, 1],
  [3, 7, 5],
  [5, 9, 3],
  [129, 257, 33],
  [131, 263, 17],
  [257, 10, 13],
  [6, 515, 9],
  [7, 6, 1030],
];

describe.each(['simd', 'relaxed-simd'] as const)('GEMM build %s on edge shapes', (variant) => {
  const skip = variant === 'relaxed-simd' && !relaxedAvailable;
  for (const kind of GEMM_KINDS) {
    it.skipIf(skip)(`${kind} equals the JS matmul (copy and zero-copy, every transpose)`, () => {
      const ks = built[variant]!.kernels;
      const prng = new Prng(kind.length * 31 + variant.length);
      for (const [m, n, k] of EDGE_SHAPES) {
        for (const [transA, transB] of TRANSPOSES) {
          const relu = kind === 'linear';
          const beta = gemmUpdates(kind) ? 1 : 0;
          const alpha = gemmUpdates(kind) ? -0.05 : 1;
          const { a, b, c0, extra, want, wantD } = gemmCase(prng, kind, {
            m,
            n,
            k,
            transA,
            transB,
            relu,
            alpha,
            beta,
          });
          const constants = matmulConstants({ m, n, k, transA, transB, relu, alpha, beta });
          for (const zeroCopy of [false, true]) {
            const arena = new Arena(
              4 * (2 * m * k + 2 * k * n + 3 * m * n + n) + 4096,
              zeroCopy,
              zeroCopy ? GEMM_SCRATCH_BYTES : 0,
            );
            const out = arena.binding(c0);
            const d = arena.binding(extra);
            const bindings = gemmBindings(kind, arena.binding(a), arena.binding(b), out, d);
            dispatch(ks[kind], countOf(kind, [n, m]), bindings, constants, arena.localMemory);
            const err = maxRelativeError(out.f32, Float32Array.from(want));
            expect(
              err,
              `${variant} ${kind} ${m}x${n}x${k} ${transA}/${transB} zeroCopy=${zeroCopy}`,
            ).toBeLessThan(1e-5 * Math.max(1, Math.sqrt(k)));
            expect(maxRelativeError(d.f32.slice(0, wantD.length), wantD)).toBeLessThan(
              1e-5 * Math.max(1, Math.sqrt(k)),
            );
          }
        }
      }
    });
  }
});

describe('GEMM build choice', () => {
  it.skipIf(!relaxedAvailable)(
    'takes the relaxed build where the engine validates it, else the plain one',
    () => {
      const relaxed = built['relaxed-simd']!.bytes;
      const plain = built.simd!.bytes;
      expect(chooseGemm(relaxed, plain).variant).toBe('relaxed-simd');
      expect(chooseGemm(relaxed, plain).bytes).toBe(relaxed);
      v8.setFlagsFromString('--no-experimental-wasm-relaxed-simd');
      try {
        // Node 22+ ships relaxed SIMD (the flag may be gone): the choice then stays relaxed.
        const expected = WebAssembly.validate(relaxed) ? 'relaxed-simd' : 'simd';
        expect(chooseGemm(relaxed, plain).variant).toBe(expected);
        if (expected === 'simd') expect(chooseGemm(relaxed, plain).bytes).toBe(plain);
      } finally {
        v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
      }
    },
  );

  it('the relaxed build really uses relaxed_madd and the plain one does not', async () => {
    expect((await compileGemmWasm(RELAXED_GEMM_OPTIONS)).wat).toContain('f32x4.relaxed_madd');
    expect((await compileGemmWasm(DEFAULT_GEMM_OPTIONS)).wat).not.toContain('relaxed');
  });
});

describe('CPU GEMM tiles', () => {
  it('split rows into an even number (≥ 2) of tiles of ≤ 256 rows: equal halves for two workers', () => {
    expect(countOf('linear', [512, 256])).toEqual([1, 2, 1]);
    expect(countOf('matmul', [512, 784])).toEqual([1, 4, 1]);
    expect(countOf('matmul', [10, 512])).toEqual([1, 2, 1]);
    expect(countOf('matmul_relu_grad', [512, 100])).toEqual([1, 2, 1]);
    expect(countOf('linear', [600, 1100])).toEqual([2, 6, 1]);
    expect(countOf('linear', [8, 64])).toEqual([1, 1, 1]);
  });
});
