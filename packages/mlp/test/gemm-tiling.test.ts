/**
 * GEMM tilings: names round-trip, bad tilings are refused with the rule they break, and the tiling is
 * chosen by adapter class (SwiftShader must not get the tiling that takes minutes to compile there).
 */
import { KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { mlpWebgpuExports, mlpWgslExecutableSource } from '../src/webgpu/descriptors';
import {
  gemmTilingName,
  gemmTilingOf,
  gemmWorkgroupSize,
  parseGemmTiling,
  type SharedGemmTiling,
  splitKBlocks,
  WGSL_GEMM_TILING,
  WGSL_GEMM_TILING_CANDIDATES,
  WGSL_GEMM_TILING_GPU,
  WGSL_GEMM_TILING_GPU_PER_SHAPE,
  WGSL_GEMM_TILING_NVIDIA,
  WGSL_GEMM_TILING_SMALL_GPU,
  WGSL_GEMM_TILING_SWIFTSHADER,
  wgslGemmTilingFor,
} from '../src/webgpu/gemm-tiling';
import { gemmTiles } from '../src/webgpu/wgsl';

describe('GEMM tilings', () => {
  it('names round-trip through parseGemmTiling', () => {
    for (const t of [
      WGSL_GEMM_TILING,
      WGSL_GEMM_TILING_SWIFTSHADER,
      WGSL_GEMM_TILING_GPU,
      WGSL_GEMM_TILING_SMALL_GPU,
      WGSL_GEMM_TILING_GPU_PER_SHAPE,
    ]) {
      const parsed = parseGemmTiling(gemmTilingName(t));
      expect(gemmTilingName(parsed)).toBe(gemmTilingName(t));
      expect(parsed).toMatchObject(t);
    }
    expect(parseGemmTiling('s64x32x8_8x2')).toEqual({ kind: 'shared', bm: 64, bn: 32, bk: 8, tm: 8, tn: 2 });
    expect(parseGemmTiling('128x2x2')).toEqual({ wg: 128, tm: 2, tn: 2 });
    expect(gemmWorkgroupSize(parseGemmTiling('s64x32x8_8x2'))).toBe(128);
    expect(parseGemmTiling('s16x16x16_2x2k4')).toEqual({
      kind: 'shared',
      bm: 16,
      bn: 16,
      bk: 16,
      tm: 2,
      tn: 2,
      ks: 4,
    });
    expect(gemmWorkgroupSize(parseGemmTiling('s16x16x16_2x2k4'))).toBe(256);
    // ks = 1 is the plain tiling and spelled without the suffix.
    expect(gemmTilingName(parseGemmTiling('s32x32x16_4x4k1'))).toBe('s32x32x16_4x4');
    const perShape = parseGemmTiling('s64x64x16_4x4__s16x16x16_2x2k4');
    expect(perShape).toMatchObject(WGSL_GEMM_TILING_GPU_PER_SHAPE);
    expect(gemmTilingName(perShape)).toBe('s64x64x16_4x4__s16x16x16_2x2k4');
    expect(gemmWorkgroupSize(perShape)).toBe(256);
    // Per kernel: forward + weight gradient + input gradient, each with its own workgroup size.
    const perKernel = parseGemmTiling('s32x32x8_4x4k4__s16x16x8_4x2k8+s32x32x16_4x4k2+s16x16x16_2x2');
    expect(perKernel).toMatchObject({
      kind: 'per-kernel',
      forward: {
        kind: 'per-shape',
        wide: { kind: 'shared', bm: 32, bn: 32, bk: 8, tm: 4, tn: 4, ks: 4 },
        narrow: { kind: 'shared', bm: 16, bn: 16, bk: 8, tm: 4, tn: 2, ks: 8 },
      },
      weightGrad: { kind: 'shared', bm: 32, bn: 32, bk: 16, tm: 4, tn: 4, ks: 2 },
      inputGrad: { kind: 'shared', bm: 16, bn: 16, bk: 16, tm: 2, tn: 2 },
    });
    expect(gemmTilingName(perKernel)).toBe('s32x32x8_4x4k4__s16x16x8_4x2k8+s32x32x16_4x4k2+s16x16x16_2x2');
    expect(gemmWorkgroupSize(gemmTilingOf(perKernel, 'linear'))).toBe(256);
    expect(gemmWorkgroupSize(gemmTilingOf(perKernel, 'matmul_bias_grad'))).toBe(128);
    expect(gemmWorkgroupSize(gemmTilingOf(perKernel, 'matmul'))).toBe(128);
    expect(gemmWorkgroupSize(gemmTilingOf(perKernel, 'matmul_relu_grad'))).toBe(64);
    const sizes = new Map(mlpWebgpuExports(perKernel).map((e) => [e.name, e.workgroupSize?.[0]]));
    expect([sizes.get('linear'), sizes.get('matmul_bias_grad'), sizes.get('matmul_relu_grad')]).toEqual([
      256, 128, 64,
    ]);
    // Every sweep candidate is a valid name that round-trips.
    for (const name of WGSL_GEMM_TILING_CANDIDATES) expect(gemmTilingName(parseGemmTiling(name))).toBe(name);
    expect(WGSL_GEMM_TILING_CANDIDATES[0]).toBe(gemmTilingName(WGSL_GEMM_TILING_NVIDIA));
    // NVIDIA's tiling is per kernel, each part in 256-invocation workgroups.
    expect(gemmTilingName(WGSL_GEMM_TILING_NVIDIA)).toBe(
      's16x32x8_2x4k4__s16x16x8_4x2k8+s64x64x16_4x4__s16x16x16_2x2k4+s32x32x8_4x4k4__s16x16x8_4x2k8',
    );
    for (const entry of ['linear', 'matmul_bias_grad', 'matmul', 'matmul_relu_grad'] as const) {
      expect(gemmWorkgroupSize(gemmTilingOf(WGSL_GEMM_TILING_NVIDIA, entry))).toBe(256);
    }
  });

  it('split-K partial sums fill the op(A) slabs, then the op(B) ones', () => {
    // s32x32x8_4x4k4: 3 blocks of 32·32 partial sums; the op(A) slabs hold 2·4·8·32 = 2 blocks.
    expect(splitKBlocks(parseGemmTiling('s32x32x8_4x4k4') as SharedGemmTiling)).toEqual({ inA: 2, total: 4 });
    expect(splitKBlocks(parseGemmTiling('s16x16x8_4x2k8') as SharedGemmTiling)).toEqual({
      inA: 8,
      total: 16,
    });
  });

  it('matmul_bias_grad counts the ones row with workgroup memory (one more row of tiles when M fills them)', () => {
    const count = (t: Parameters<typeof mlpWebgpuExports>[0], n: number, m: number) =>
      mlpWebgpuExports(t).find((e) => e.name === 'matmul_bias_grad')!.workgroupCount!([n, m]);
    const t = parseGemmTiling('s32x32x8_4x4k4__s16x16x8_4x2k8');
    expect(count(t, 512, 512)).toEqual([17 * 16, 1, 1]);
    expect(count(t, 512, 784)).toEqual([25 * 16, 1, 1]); // 784 + 1 fits 25 rows
    expect(count(t, 10, 512)).toEqual([33, 1, 1]); // narrow: 16-row tiles
    expect(gemmTiles(t, 256, 512)).toBe(8 * 16);
    // NVIDIA's weight-gradient GEMM: 64×64 tiles (512 + 1 rows: 9 rows of tiles × 8).
    expect(count(WGSL_GEMM_TILING_NVIDIA, 512, 512)).toEqual([9 * 8, 1, 1]);
  });

  it('per-shape tilings count the tiles of the tiling N picks', () => {
    const t = WGSL_GEMM_TILING_GPU_PER_SHAPE;
    expect(gemmTiles(t, 256, 10)).toBe(16); // narrow: 16 × 16 tiles
    expect(gemmTiles(t, 256, 16)).toBe(16);
    expect(gemmTiles(t, 256, 17)).toBe(4 * 1); // wide: 64 × 64 tiles
    expect(gemmTiles(t, 256, 512)).toBe(4 * 8);
  });

  it('refuses names and tilings that break a rule, naming it', () => {
    const cases: [string, RegExp][] = [
      ['64x64', /expected WGxTMxTN .* or sBMxBNxBK_TMxTN/],
      ['s64x64x16', /expected/],
      ['s48x64x16_4x4', /bm must be a power of two, got 48/],
      ['s128x128x16_4x4', /1024 invocations must be in \[4, 256\]/],
      ['s128x128x32_8x8', /65536 bytes of workgroup memory .*exceed 16384/],
      ['s128x64x16_8x8', /24576 bytes of workgroup memory/],
      ['s64x64x16_16x4', /tm and tn must be at most 8/],
      ['512x1x1', /wg must be at most 256/],
      ['0x1x1', /wg must be a positive integer, got 0/],
      ['s16x16x16_2x2k3', /ks must be a power of two in \[1, 8\], got 3/],
      ['s16x16x16_4x4k8', /32768 bytes of workgroup memory/],
      ['s32x32x4_4x4k4', /partial sums, ks - 1 blocks of bm·bn values, must fit the slabs/],
      ['s64x64x16_4x4__s16x16x16_2x2', /same invocations per workgroup, got 256 and 64/],
      ['s64x64x16_4x4__16x16x8', /narrow must be a workgroup-memory tiling/],
      ['s64x64x16_4x4__s16x16x16_2x2__s8x8x8_1x1', /expected/],
      ['s32x32x16_4x4+16x16x8+s32x32x16_4x4', /weightGrad must be a workgroup-memory or per-shape tiling/],
      ['s32x32x16_4x4+s32x32x16_4x4', /expected/],
    ];
    for (const [name, message] of cases) {
      let error: unknown;
      try {
        parseGemmTiling(name);
      } catch (e) {
        error = e;
      }
      expect(KeelError.is(error, 'INVALID_ARGUMENT'), name).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
    expect(() => mlpWgslExecutableSource({ kind: 'shared', bm: 32, bn: 32, bk: 3, tm: 4, tn: 4 })).toThrow(
      /bk must be a power of two, got 3/,
    );
  });

  it('chooses by adapter class', () => {
    const sw = ['software-adapter'];
    expect(wgslGemmTilingFor({ features: sw, name: 'google swiftshader' })).toBe(
      WGSL_GEMM_TILING_SWIFTSHADER,
    );
    expect(wgslGemmTilingFor({ features: sw, name: 'SwiftShader Device (Subzero)' })).toBe(
      WGSL_GEMM_TILING_SWIFTSHADER,
    );
    expect(wgslGemmTilingFor({ features: sw, name: 'llvmpipe (LLVM 15.0.6, 256 bits) (Mesa 25.0.7)' })).toBe(
      WGSL_GEMM_TILING,
    );
    expect(wgslGemmTilingFor(sw)).toBe(WGSL_GEMM_TILING);
    const gpu = ['timestamp-query', 'subgroups'];
    expect(wgslGemmTilingFor({ features: gpu, name: 'nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)' })).toBe(
      WGSL_GEMM_TILING_NVIDIA,
    );
    expect(wgslGemmTilingFor({ features: gpu, name: 'AMD Radeon RX 7900 XTX' })).toBe(WGSL_GEMM_TILING_GPU);
    expect(wgslGemmTilingFor({ features: gpu, name: 'apple metal-3' })).toBe(WGSL_GEMM_TILING_GPU);
    expect(wgslGemmTilingFor({ features: gpu, name: 'intel gen-12lp' })).toBe(WGSL_GEMM_TILING_SMALL_GPU);
    expect(wgslGemmTilingFor(gpu)).toBe(WGSL_GEMM_TILING_GPU);
    // SwiftShader's tiling is small enough to compile fast: 16 accumulators, not 128.
    const s = WGSL_GEMM_TILING_SWIFTSHADER as { tm: number; tn: number };
    expect(s.tm * s.tn).toBeLessThanOrEqual(16);
  });
});
