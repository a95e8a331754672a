/**
 * GEMM tilings of the WGSL kernels: their two families, their names (`gemmTilingName` /
 * `parseGemmTiling`, the spelling `--tilings` of the benchmarks takes), their checks, and the choice
 * per adapter class (`wgslGemmTilingFor`).
 *
 * Promises: `parseGemmTiling(gemmTilingName(t))` equals `t` for every valid tiling; a tiling that
 * breaks a rule (sizes, WebGPU's default limits of 256 invocations and 16 KiB of workgroup memory per
 * entry point)
 * gets a KeelError INVALID_ARGUMENT naming the tiling and the rule, before any WGSL is generated.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';

/**
 * Register tiling (no workgroup memory, no barriers; shaped for software rasterizers such as
 * lavapipe): a 1-D workgroup of `wg` invocations computes a tile of C of `tm` rows × `wg·tn` columns;
 * invocation `i` owns the columns `i + wg·q` (q < tn) of those rows, `tm·tn` accumulators in
 * registers. Swapped for narrow C (see `gemmSwaps`): `wg·tn` rows × `tm` columns. Named `WGxTMxTN`.
 */
export interface RegisterGemmTiling {
  readonly kind?: 'register';
  readonly wg: number;
  readonly tm: number;
  readonly tn: number;
}

/**
 * Workgroup-memory tiling (for GPUs): a workgroup computes a `bm × bn` tile of C; per step of `bk`
 * along K it stages the `bm × bk` slab of op(A) and the `bk × bn` slab of op(B) in workgroup memory
 * (coalesced loads, zero-padded at the matrix edges; double-buffered: two slabs of each operand), then
 * each of its `(bm/tm)·(bn/tn)` invocations accumulates a `tm × tn` block in registers, reading the
 * slabs as vec4 where `tm`/`tn` allow.
 * Split-K inside the workgroup (`ks` > 1, for C with few tiles and a long K): the workgroup is `ks`
 * groups of `(bm/tm)·(bn/tn)` invocations; each step stages `ks·bk` of K and group g multiplies its
 * `bk` rows of it; at the end of a tile the groups' partial sums are added in workgroup memory (no
 * atomics, no second pass) before the one fused epilogue, so bias + ReLU see the full sum.
 * Named `sBMxBNxBK_TMxTN`, or `sBMxBNxBK_TMxTNkKS` when `ks` > 1.
 */
export interface SharedGemmTiling {
  readonly kind: 'shared';
  readonly bm: number;
  readonly bn: number;
  readonly bk: number;
  readonly tm: number;
  readonly tn: number;
  /** Groups splitting K inside the workgroup (default 1). */
  readonly ks?: number;
}

/**
 * Per-shape tiling (for GPUs): each GEMM entry point chooses, from its uniform sizes, `narrow` for a
 * C of at most `narrow.bn` columns (the 10-logit layers: few tiles, so typically split-K) and `wide`
 * for every other C. Both are workgroup-memory tilings with the same number of invocations (the entry
 * point's workgroup size); the workgroup count of a dispatch is the chosen tiling's tile count.
 * Named `WIDE__NARROW`, e.g. `s64x64x16_4x4__s16x16x16_2x2k4`.
 */
export interface PerShapeGemmTiling {
  readonly kind: 'per-shape';
  readonly wide: SharedGemmTiling;
  readonly narrow: SharedGemmTiling;
}

/** A GPU tiling of one GEMM entry point: workgroup memory, one tiling or one per shape. */
export type GpuGemmTiling = SharedGemmTiling | PerShapeGemmTiling;

/**
 * Per-kernel tiling (for GPUs): one GPU tiling per GEMM of the training step, each with its own
 * workgroup size: `forward` for `linear` (X·W: M = batch, K = fan-in), `weightGrad` for
 * `matmul_bias_grad` and `matmul` (Xᵀ·dY: K = batch, a C as large as W), `inputGrad` for
 * `matmul_relu_grad` (dY·Wᵀ: K = fan-out). Named `FORWARD+WEIGHTGRAD+INPUTGRAD`, e.g.
 * `s32x32x8_4x4k4__s16x16x8_4x2k8+s32x32x16_4x4k2__s16x16x8_4x4k8+s32x32x8_4x4k4`.
 */
// The module declares its workgroup memory once, sized for the largest op(A) and op(B) slabs of all
// parts. With power-of-two sizes each part's two slabs of either operand are at most 8 KiB (together
// at most 16 KiB), so any mix of valid parts stays within the 16 KiB WebGPU guarantees.
export interface PerKernelGemmTiling {
  readonly kind: 'per-kernel';
  readonly forward: GpuGemmTiling;
  readonly weightGrad: GpuGemmTiling;
  readonly inputGrad: GpuGemmTiling;
}

/** A GEMM tiling of the WGSL kernels (`mlpWgsl(tiling)`). */
export type GemmTiling = RegisterGemmTiling | SharedGemmTiling | PerShapeGemmTiling | PerKernelGemmTiling;

/** The GEMM entry points of the WGSL module. */
export type GemmEntry = 'matmul' | 'linear' | 'matmul_relu_grad' | 'matmul_bias_grad';

/** Invocations per workgroup WebGPU guarantees (maxComputeInvocationsPerWorkgroup's default). */
const MAX_INVOCATIONS = 256;
/** Workgroup memory WebGPU guarantees per entry point (maxComputeWorkgroupStorageSize's default). */
const MAX_SHARED_BYTES = 16384;

/** Type guard: a workgroup-memory tiling. */
export const isSharedTiling = (t: GemmTiling): t is SharedGemmTiling => t.kind === 'shared';

/** Type guard: a per-shape tiling. */
export const isPerShapeTiling = (t: GemmTiling): t is PerShapeGemmTiling => t.kind === 'per-shape';

/** Type guard: a per-kernel tiling. */
export const isPerKernelTiling = (t: GemmTiling): t is PerKernelGemmTiling => t.kind === 'per-kernel';

/** Whether the GEMMs (and so the reductions) of tiling `t` use workgroup memory (the GPU forms). */
export const usesWorkgroupMemory = (t: GemmTiling): boolean =>
  isSharedTiling(t) || isPerShapeTiling(t) || isPerKernelTiling(t);

/** The tiling GEMM entry point `entry` uses under `t` (a per-kernel tiling's part; else `t`). */
export function gemmTilingOf(
  t: GemmTiling,
  entry: GemmEntry,
): RegisterGemmTiling | SharedGemmTiling | PerShapeGemmTiling {
  if (!isPerKernelTiling(t)) return t;
  if (entry === 'linear') return t.forward;
  return entry === 'matmul_relu_grad' ? t.inputGrad : t.weightGrad;
}

/** The workgroup-memory tiling a per-shape tiling `t` uses for a C of `n` columns. */
export const perShapeChoice = (t: PerShapeGemmTiling, n: number): SharedGemmTiling =>
  n <= t.narrow.bn ? t.narrow : t.wide;

/** Invocations per workgroup of the GEMMs of tiling `t` (per-kernel: of `linear`; see gemmTilingOf). */
export function gemmWorkgroupSize(t: GemmTiling): number {
  if (isPerKernelTiling(t)) return gemmWorkgroupSize(t.forward);
  if (isPerShapeTiling(t)) return gemmWorkgroupSize(t.wide);
  return isSharedTiling(t) ? (t.bm / t.tm) * (t.bn / t.tn) * (t.ks ?? 1) : t.wg;
}

/**
 * The tiling's name: `16x16x8` (register), `s64x64x16_4x4` or `s16x16x16_2x2k4` (workgroup memory),
 * `s64x64x16_4x4__s16x16x16_2x2k4` (per shape: wide, then narrow).
 */
export function gemmTilingName(t: GemmTiling): string {
  if (isPerKernelTiling(t)) {
    return [t.forward, t.weightGrad, t.inputGrad].map(gemmTilingName).join('+');
  }
  if (isPerShapeTiling(t)) return `${gemmTilingName(t.wide)}__${gemmTilingName(t.narrow)}`;
  if (isSharedTiling(t)) {
    const ks = (t.ks ?? 1) === 1 ? '' : `k${t.ks}`;
    return `s${t.bm}x${t.bn}x${t.bk}_${t.tm}x${t.tn}${ks}`;
  }
  return `${t.wg}x${t.tm}x${t.tn}`;
}

/**
 * How many `bm × bn` blocks of split-K partial sums the slabs of `t` hold after its K loop: whole blocks
 * in the two op(A) slabs (`2·ks·bk·bm` values), then in the two op(B) slabs (`2·ks·bk·bn`).
 */
export function splitKBlocks(t: SharedGemmTiling): { readonly inA: number; readonly total: number } {
  const ks = t.ks ?? 1;
  const inA = Math.floor((2 * ks * t.bk * t.bm) / (t.bm * t.bn));
  const inB = Math.floor((2 * ks * t.bk * t.bn) / (t.bm * t.bn));
  return { inA, total: inA + inB };
}

const pow2 = (v: number): boolean => Number.isInteger(v) && v >= 1 && (v & (v - 1)) === 0;

/** Checks `t` (see the file comment); returns it. */
export function checkGemmTiling(t: GemmTiling): GemmTiling {
  const fail = (rule: string): never => {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `GEMM tiling ${describeValue(t)}: ${rule}`);
  };
  if (typeof t !== 'object' || t === null) return fail('must be an object');
  if (isPerKernelTiling(t)) {
    for (const key of ['forward', 'weightGrad', 'inputGrad'] as const) {
      const part = t[key] as GemmTiling | undefined;
      if (typeof part !== 'object' || part === null || !(isSharedTiling(part) || isPerShapeTiling(part))) {
        fail(`${key} must be a workgroup-memory or per-shape tiling (kind 'shared' or 'per-shape')`);
      }
      checkGemmTiling(part as GpuGemmTiling);
    }
    return t;
  }
  if (isPerShapeTiling(t)) {
    for (const key of ['wide', 'narrow'] as const) {
      const part = t[key] as GemmTiling | undefined;
      if (typeof part !== 'object' || part === null || !isSharedTiling(part)) {
        fail(`${key} must be a workgroup-memory tiling (kind 'shared')`);
      }
      checkGemmTiling(part as SharedGemmTiling);
    }
    const [w, n] = [gemmWorkgroupSize(t.wide), gemmWorkgroupSize(t.narrow)];
    if (w !== n) fail(`wide and narrow must have the same invocations per workgroup, got ${w} and ${n}`);
    return t;
  }
  if (isSharedTiling(t)) {
    for (const key of ['bm', 'bn', 'bk', 'tm', 'tn'] as const) {
      if (!pow2(t[key])) fail(`${key} must be a power of two, got ${describeValue(t[key])}`);
    }
    const ks = t.ks ?? 1;
    if (!pow2(ks) || ks > 8) fail(`ks must be a power of two in [1, 8], got ${describeValue(t.ks)}`);
    if (t.tm > 8 || t.tn > 8) fail('tm and tn must be at most 8 (accumulators per invocation)');
    if (t.bm < 4 || t.bn < 4 || t.bm > 128 || t.bn > 128) fail('bm and bn must be in [4, 128]');
    if (t.bk > 32) fail('bk must be at most 32');
    if (t.tm > t.bm || t.tn > t.bn) fail('tm must divide bm and tn must divide bn');
    const threads = gemmWorkgroupSize(t);
    if (threads < 4 || threads > MAX_INVOCATIONS) {
      fail(`(bm/tm)·(bn/tn) = ${threads} invocations must be in [4, ${MAX_INVOCATIONS}]`);
    }
    const bytes = 2 * (t.bm + t.bn) * t.bk * ks * 4;
    if (bytes > MAX_SHARED_BYTES) {
      fail(
        `2·(bm + bn)·bk·ks·4 = ${bytes} bytes of workgroup memory (two slabs per operand) exceed ${MAX_SHARED_BYTES}`,
      );
    }
    if (ks > 1 && splitKBlocks(t).total < ks - 1) {
      fail(
        'the split-K partial sums, ks - 1 blocks of bm·bn values, must fit the slabs (whole blocks in the 2·ks·bk·bm op(A) values, then in the 2·ks·bk·bn op(B) values)',
      );
    }
    return t;
  }
  if (t.kind !== undefined && t.kind !== 'register') {
    fail("kind must be 'register', 'shared', 'per-shape' or 'per-kernel'");
  }
  for (const key of ['wg', 'tm', 'tn'] as const) {
    const v = t[key];
    if (!Number.isInteger(v) || v < 1) fail(`${key} must be a positive integer, got ${describeValue(v)}`);
  }
  if (t.wg > MAX_INVOCATIONS) fail(`wg must be at most ${MAX_INVOCATIONS}`);
  if (t.tm * t.tn > 256) fail('tm·tn must be at most 256 accumulators');
  return t;
}

/**
 * The tiling a name stands for (`16x16x8`, `s64x64x16_4x4`; see `gemmTilingName`), checked. Throws
 * KeelError INVALID_ARGUMENT for anything else.
 */
export function parseGemmTiling(name: string): GemmTiling {
  const kernels = typeof name === 'string' ? name.split('+') : [];
  if (kernels.length === 3) {
    const [forward, weightGrad, inputGrad] = kernels.map(parseGemmTiling) as [
      GpuGemmTiling,
      GpuGemmTiling,
      GpuGemmTiling,
    ];
    return checkGemmTiling({ kind: 'per-kernel', forward, weightGrad, inputGrad });
  }
  const parts = kernels.length === 1 ? name.split('__') : [];
  if (parts.length === 2) {
    const [wide, narrow] = parts.map(parseGemmTiling) as [GemmTiling, GemmTiling];
    return checkGemmTiling({ kind: 'per-shape', wide, narrow } as PerShapeGemmTiling);
  }
  const shared = /^s(\d+)x(\d+)x(\d+)_(\d+)x(\d+)(?:k(\d+))?$/.exec(name);
  if (shared !== null) {
    const [bm, bn, bk, tm, tn] = shared.slice(1, 6).map(Number) as [number, number, number, number, number];
    if (shared[6] === undefined) return checkGemmTiling({ kind: 'shared', bm, bn, bk, tm, tn });
    return checkGemmTiling({ kind: 'shared', bm, bn, bk, tm, tn, ks: Number(shared[6]) });
  }
  const register = /^(\d+)x(\d+)x(\d+)$/.exec(name);
  if (register !== null) {
    const [wg, tm, tn] = register.slice(1).map(Number) as [number, number, number];
    return checkGemmTiling({ wg, tm, tn });
  }
  throw new KeelError(
    ErrorCode.INVALID_ARGUMENT,
    `GEMM tiling ${describeValue(name)}: expected WGxTMxTN (register, e.g. 16x16x8) or sBMxBNxBK_TMxTN[kKS] (workgroup memory, e.g. s64x64x16_4x4 or s16x16x16_2x2k4), or WIDE__NARROW (per shape, e.g. s64x64x16_4x4__s16x16x16_2x2k4), or FORWARD+WEIGHTGRAD+INPUTGRAD (per kernel, three of those GPU forms)`,
  );
}

/**
 * The tiling for lavapipe (Mesa's Vulkan on llvmpipe) and other CPU adapters: few invocations, many
 * accumulators each, no barriers. Also the default of the generators.
 */
export const WGSL_GEMM_TILING: GemmTiling = Object.freeze({ wg: 16, tm: 16, tn: 8 });

/**
 * The tiling for SwiftShader (Chromium's software adapter), whose shader compiler takes minutes on
 * WGSL_GEMM_TILING's 128-accumulator unrolled loop (about 150 s, or Chromium's GPU process gives up):
 * with 16 accumulators the module compiles in about 0.5 s (headless Chromium, bench/RESULTS.md).
 */
export const WGSL_GEMM_TILING_SWIFTSHADER: GemmTiling = Object.freeze({ wg: 16, tm: 4, tn: 4 });

/**
 * The tiling for discrete GPUs (NVIDIA, AMD, Apple): 32×32 tiles of C staged through workgroup
 * memory, 4×4 accumulators per invocation (64 invocations), so that the step's 256×512 outputs make
 * 128 workgroups, about one per streaming multiprocessor of a large GPU.
 */
export const WGSL_GEMM_TILING_GPU: GemmTiling = Object.freeze({
  kind: 'shared',
  bm: 32,
  bn: 32,
  bk: 16,
  tm: 4,
  tn: 4,
});

/** The tiling for other GPUs (integrated, mobile, unknown vendors): 64 invocations, 2×2 each. */
export const WGSL_GEMM_TILING_SMALL_GPU: GemmTiling = Object.freeze({
  kind: 'shared',
  bm: 16,
  bn: 16,
  bk: 16,
  tm: 2,
  tn: 2,
});

/**
 * A per-shape tiling for large GPUs, for the benchmarks to compare with WGSL_GEMM_TILING_GPU (named
 * `s64x64x16_4x4__s16x16x16_2x2k4`): 64×64 tiles, 4×4 per invocation (256 invocations, 8 warps) for
 * the wide GEMMs; for C of at most 16 columns (the 10 logits) 16×16 tiles with K split over 4 groups
 * of 64 invocations inside the workgroup.
 */
export const WGSL_GEMM_TILING_GPU_PER_SHAPE: GemmTiling = Object.freeze({
  kind: 'per-shape',
  wide: Object.freeze({ kind: 'shared', bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 }),
  narrow: Object.freeze({ kind: 'shared', bm: 16, bn: 16, bk: 16, tm: 2, tn: 2, ks: 4 }),
});

/**
 * The tiling for NVIDIA GPUs, one tiling per GEMM of the step (named
 * `s16x32x8_2x4k4__s16x16x8_4x2k8+s64x64x16_4x4__s16x16x16_2x2k4+s32x32x8_4x4k4__s16x16x8_4x2k8`), each
 * kernel's best in the `--tilings` sweep on an H200 (bench/RESULTS.md), all in 256-invocation workgroups
 * (8 warps):
 * - `linear` (forward, K = fan-in 784 or 512, C = 256×512): 16×32 tiles, 2×4 accumulators, K split over
 *   4 groups inside the workgroup: 256 tiles for 132 multiprocessors, a quarter of K per warp;
 * - `matmul_bias_grad` (weight gradient, K = batch 256, C as large as W: 784×512): 64×64 tiles, 4×4
 *   accumulators, no split (C alone has ~100 tiles; K is short);
 * - `matmul_relu_grad` (input gradient, K = fan-out 512, C = 256×512): 32×32 tiles, 4×4 accumulators,
 *   K over 4 groups.
 * C of at most 16 columns (the 10 logits) takes 16×16 tiles with K over 8 (or 4) groups. Every part
 * fits the 16 KiB of workgroup memory WebGPU guarantees.
 */
export const WGSL_GEMM_TILING_NVIDIA: GemmTiling = Object.freeze({
  kind: 'per-kernel',
  forward: Object.freeze({
    kind: 'per-shape',
    wide: Object.freeze({ kind: 'shared', bm: 16, bn: 32, bk: 8, tm: 2, tn: 4, ks: 4 }),
    narrow: Object.freeze({ kind: 'shared', bm: 16, bn: 16, bk: 8, tm: 4, tn: 2, ks: 8 }),
  }),
  weightGrad: Object.freeze({
    kind: 'per-shape',
    wide: Object.freeze({ kind: 'shared', bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 }),
    narrow: Object.freeze({ kind: 'shared', bm: 16, bn: 16, bk: 16, tm: 2, tn: 2, ks: 4 }),
  }),
  inputGrad: Object.freeze({
    kind: 'per-shape',
    wide: Object.freeze({ kind: 'shared', bm: 32, bn: 32, bk: 8, tm: 4, tn: 4, ks: 4 }),
    narrow: Object.freeze({ kind: 'shared', bm: 16, bn: 16, bk: 8, tm: 4, tn: 2, ks: 8 }),
  }),
});

/**
 * Named tilings for large discrete GPUs, for the benchmarks' `--tilings` sweep to compare in one run
 * (each is a valid `parseGemmTiling` name; the first is WGSL_GEMM_TILING_NVIDIA, the second its
 * per-shape predecessor, `s32x32x16_4x4` WGSL_GEMM_TILING_GPU). The sweep traces every candidate's
 * kernels, so each per-kernel entry (`+`) tries another tiling for each of the three GEMMs at once.
 */
export const WGSL_GEMM_TILING_CANDIDATES: readonly string[] = Object.freeze([
  's16x32x8_2x4k4__s16x16x8_4x2k8+s64x64x16_4x4__s16x16x16_2x2k4+s32x32x8_4x4k4__s16x16x8_4x2k8',
  's32x32x8_4x4k4__s16x16x8_4x2k8',
  's16x32x8_2x4k4__s16x16x8_4x2k8',
  's64x64x16_4x4__s16x16x16_2x2k4',
  's32x32x16_4x4',
  's16x16x8_2x2k4__s16x16x8_4x2k8+s64x32x8_4x4k2__s16x16x8_4x2k8+s16x32x8_2x4k4__s16x16x8_4x2k8',
  's32x16x8_4x2k4__s16x16x8_4x2k8+s32x64x8_4x4k2__s16x16x16_2x2k4+s32x32x16_4x4k2__s16x16x8_4x4k8',
  's16x32x16_2x4k2__s16x16x8_4x2k4+s64x64x8_4x4__s16x16x16_2x2k4+s16x16x8_2x2k4__s16x16x8_4x2k8',
]);

/** What `wgslGemmTilingFor` reads of a device: `Device.info` (or just its features). */
export interface AdapterDescription {
  readonly features: readonly string[];
  /** The adapter's name (`Device.info.name`: vendor, architecture, device, description). */
  readonly name?: string;
}

/**
 * The tiling for a device, by adapter class: SwiftShader → WGSL_GEMM_TILING_SWIFTSHADER; other CPU
 * adapters (feature 'software-adapter': lavapipe) → WGSL_GEMM_TILING; NVIDIA GPUs →
 * WGSL_GEMM_TILING_NVIDIA; AMD and Apple GPUs → WGSL_GEMM_TILING_GPU; any other GPU →
 * WGSL_GEMM_TILING_SMALL_GPU. Pass `Device.info`; a bare
 * feature list (the older form) classifies by features alone (a GPU is then a discrete one).
 */
export function wgslGemmTilingFor(device: AdapterDescription | readonly string[]): GemmTiling {
  const features = Array.isArray(device) ? device : (device as AdapterDescription).features;
  const name = Array.isArray(device) ? undefined : (device as AdapterDescription).name;
  if (name !== undefined && /swiftshader/i.test(name)) return WGSL_GEMM_TILING_SWIFTSHADER;
  if (features.includes('software-adapter')) return WGSL_GEMM_TILING;
  if (name !== undefined && /nvidia/i.test(name)) return WGSL_GEMM_TILING_NVIDIA;
  if (name === undefined || /amd|radeon|apple|ati\b/i.test(name)) return WGSL_GEMM_TILING_GPU;
  return WGSL_GEMM_TILING_SMALL_GPU;
}
