/**
 * The matmul-family kernels of the CPU device (`matmul`, `linear`, `matmul_relu_grad`,
 * `matmul_bias_grad`: matmul plus D's column sums in JS; semantics,
 * bindings and constants in ../kernel-interface.ts) over the WebAssembly GEMM of wat.ts.
 *
 * Work split: workgroup (x, y) of a dispatch computes the tile of C made of the x-th of `count[0]`
 * equal column blocks (multiples of NR) and the y-th of `count[1]` equal row blocks (multiples of MR),
 * over the whole K; tiles are disjoint, so workers run them in parallel without synchronisation.
 *
 * Two paths per workgroup:
 * - zero-copy (fast path): when every binding exposes the same shared `WebAssembly.Memory`
 *   (`binding.memory`) and the context provides `localMemory` of at least `GEMM_SCRATCH_BYTES`, the
 *   GEMM runs directly on the device's memory (one instance of the module per memory per thread).
 * - copy: otherwise the tile's operands (rows of A, columns of B, the C tile when beta ≠ 0, the mask
 *   tile, the bias slice) are copied into a thread-private shared Wasm memory with `TypedArray.set`,
 *   the GEMM runs there, and the C tile is copied back.
 *
 * Both paths give bit-identical results (same code, same summation order). Bad constants or bindings
 * too small for them throw a RangeError (the device fails the dispatch); nothing is written then.
 */
import { MatmulFlags } from '../kernel-interface';
import { createSharedMemory, ensureMemory, type GemmInstance, instantiateGemm } from './gemm-instance';
import { type MlpCpuKernel, shareOf, type WasmMemoryBinding, type WasmMemoryContext } from './kernel-context';
import { DEFAULT_GEMM_OPTIONS, FLAG_BIAS, FLAG_MASK, FLAG_RELU, scratchBytes } from './wat';

/** Scratch bytes one GEMM call needs (the `localMemory` a zero-copy dispatch must provide). */
export const GEMM_SCRATCH_BYTES = scratchBytes(DEFAULT_GEMM_OPTIONS);
/** Register tile of the built GEMM: tiles are split in multiples of these. */
export const GEMM_MR = DEFAULT_GEMM_OPTIONS.mr;
export const GEMM_NR = DEFAULT_GEMM_OPTIONS.nr;

const Kind = { MATMUL: 0, LINEAR: 1, RELU_GRAD: 2 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

export interface MatmulKernels {
  readonly matmul: MlpCpuKernel;
  readonly linear: MlpCpuKernel;
  readonly matmul_relu_grad: MlpCpuKernel;
  readonly matmul_bias_grad: MlpCpuKernel;
}

export interface MatmulKernelOptions {
  /** Always take the copy path (for measurements and tests). */
  readonly forceCopy?: boolean;
}

/** Per-path counters of this thread's kernels (for tests and benchmarks). */
export interface MatmulKernelStats {
  zeroCopyTiles: number;
  copiedTiles: number;
}

const align64 = (x: number): number => (x + 63) & ~63;

function need(binding: WasmMemoryBinding | undefined, bytes: number, what: string): WasmMemoryBinding {
  if (binding === undefined) throw new RangeError(`mlp matmul: binding '${what}' is missing`);
  if (binding.byteLength < bytes) {
    throw new RangeError(
      `mlp matmul: binding '${what}' has ${binding.byteLength} bytes, the constants need ${bytes}`,
    );
  }
  if ((binding.byteOffset & 3) !== 0) {
    throw new RangeError(`mlp matmul: binding '${what}' offset ${binding.byteOffset} is not 4-byte aligned`);
  }
  return binding;
}

/**
 * Copies a `rows × cols` block whose rows start `srcStride` elements apart from `src` (at `srcStart`)
 * into `dst` at `dstStart`, densely packed (one `set` when the rows are contiguous).
 */
function copyBlock(
  src: Float32Array,
  srcStart: number,
  srcStride: number,
  rows: number,
  cols: number,
  dst: Float32Array,
  dstStart: number,
): void {
  if (cols === srcStride || rows === 1) {
    dst.set(src.subarray(srcStart, srcStart + rows * cols), dstStart);
    return;
  }
  for (let r = 0; r < rows; r++) {
    const s = srcStart + r * srcStride;
    dst.set(src.subarray(s, s + cols), dstStart + r * cols);
  }
}

/** The inverse of copyBlock: a dense block back into strided rows. */
function storeBlock(
  src: Float32Array,
  srcStart: number,
  rows: number,
  cols: number,
  dst: Float32Array,
  dstStart: number,
  dstStride: number,
): void {
  if (cols === dstStride || rows === 1) {
    dst.set(src.subarray(srcStart, srcStart + rows * cols), dstStart);
    return;
  }
  for (let r = 0; r < rows; r++) {
    const s = srcStart + r * cols;
    dst.set(src.subarray(s, s + cols), dstStart + r * dstStride);
  }
}

/**
 * matmul_bias_grad's D (binding 3): `D[c] = alpha · Σ_k op(B)[k, c] + beta · D[c]` (sums in f64) for
 * workgroup (x, y)'s columns: the y-th of `count[1]` equal parts of the x-th column block (the block
 * matmul's C tile uses), so every column is summed once however the rows of C are split.
 */
function biasColumns(ctx: WasmMemoryContext): void {
  const k32 = ctx.constants;
  const n = k32[1]!;
  const k = k32[2]!;
  const transB = (k32[3]! & MatmulFlags.TRANS_B) !== 0;
  const alpha = ctx.constantsF32[4]!;
  const beta = ctx.constantsF32[5]!;
  const b = need(ctx.bindings[1], 4 * k * n, 'B').f32;
  const d = need(ctx.bindings[3], 4 * n, 'D').f32;
  if (ctx.workgroupId[2] !== 0) return;
  const [x0, x1] = shareOf(n, ctx.workgroupCount[0], ctx.workgroupId[0], GEMM_NR);
  const [s0, s1] = shareOf(x1 - x0, ctx.workgroupCount[1], ctx.workgroupId[1]);
  const c0 = x0 + s0;
  const c1 = x0 + s1;
  if (c1 <= c0) return;
  if (columnAcc.length < c1 - c0) columnAcc = new Float64Array(c1 - c0);
  const acc = columnAcc;
  acc.fill(0, 0, c1 - c0);
  if (transB) {
    for (let c = c0; c < c1; c++) {
      let sum = 0;
      for (let i = 0, o = c * k; i < k; i++) sum += b[o + i]!;
      acc[c - c0] = sum;
    }
  } else {
    // Row by row (contiguous reads), the columns' sums in f64.
    for (let i = 0, base = 0; i < k; i++, base += n) {
      for (let c = c0; c < c1; c++) acc[c - c0] = acc[c - c0]! + b[base + c]!;
    }
  }
  for (let c = c0; c < c1; c++) d[c] = Math.fround(alpha * acc[c - c0]!) + (beta === 0 ? 0 : beta * d[c]!);
}

/** biasColumns' column sums (grown once, reused: no allocation per dispatch). */
let columnAcc = new Float64Array(512);

/** Creates this thread's matmul kernels over a compiled GEMM module. */
export function createMatmulKernels(
  module: WebAssembly.Module,
  options: MatmulKernelOptions = {},
): MatmulKernels & { readonly stats: MatmulKernelStats } {
  const stats: MatmulKernelStats = { zeroCopyTiles: 0, copiedTiles: 0 };
  const shared = new WeakMap<WebAssembly.Memory, GemmInstance>();
  let priv: GemmInstance | undefined;
  let privView: Float32Array | undefined;

  const privateF32 = (bytes: number): { instance: GemmInstance; f32: Float32Array } => {
    if (priv === undefined) priv = instantiateGemm(module, createSharedMemory(Math.max(bytes, 4 << 20)));
    ensureMemory(priv.memory, bytes);
    const buffer = priv.memory.buffer;
    if (privView === undefined || privView.buffer !== buffer || privView.length * 4 !== buffer.byteLength) {
      privView = new Float32Array(buffer);
    }
    return { instance: priv, f32: privView };
  };

  const run = (ctx: WasmMemoryContext, kind: Kind): void => {
    const k32 = ctx.constants;
    if (k32.length < 6) throw new RangeError(`mlp matmul: needs 6 constants, got ${k32.length}`);
    const m = k32[0]!;
    const n = k32[1]!;
    const k = k32[2]!;
    const flags = k32[3]!;
    const alpha = ctx.constantsF32[4]!;
    const beta = ctx.constantsF32[5]!;
    const transA = (flags & MatmulFlags.TRANS_A) !== 0;
    const transB = (flags & MatmulFlags.TRANS_B) !== 0;
    const bind = ctx.bindings;
    const a = need(bind[0], 4 * m * k, 'A');
    const b = need(bind[1], 4 * k * n, 'B');
    const extra =
      kind === Kind.MATMUL
        ? undefined
        : need(bind[2], 4 * (kind === Kind.LINEAR ? n : m * n), kind === Kind.LINEAR ? 'bias' : 'H');
    const c = need(bind[kind === Kind.MATMUL ? 2 : 3], 4 * m * n, 'C');
    let wasmFlags = 0;
    if (kind === Kind.LINEAR) wasmFlags = FLAG_BIAS | ((flags & MatmulFlags.RELU) !== 0 ? FLAG_RELU : 0);
    if (kind === Kind.RELU_GRAD) wasmFlags = FLAG_MASK;

    const [n0, n1] = shareOf(n, ctx.workgroupCount[0], ctx.workgroupId[0], GEMM_NR);
    const [m0, m1] = shareOf(m, ctx.workgroupCount[1], ctx.workgroupId[1], GEMM_MR);
    const nt = n1 - n0;
    const mt = m1 - m0;
    if (nt <= 0 || mt <= 0 || ctx.workgroupId[2] !== 0) return;

    const memory = a.memory;
    const local = ctx.localMemory;
    if (
      !options.forceCopy &&
      memory !== undefined &&
      b.memory === memory &&
      c.memory === memory &&
      (extra === undefined || extra.memory === memory) &&
      local !== undefined &&
      local.byteLength >= GEMM_SCRATCH_BYTES
    ) {
      let instance = shared.get(memory);
      if (instance === undefined) {
        instance = instantiateGemm(module, memory);
        shared.set(memory, instance);
      }
      stats.zeroCopyTiles++;
      instance.gemm(
        mt,
        nt,
        k,
        a.byteOffset + 4 * (transA ? m0 : m0 * k),
        transA ? 1 : k,
        transA ? m : 1,
        b.byteOffset + 4 * (transB ? n0 * k : n0),
        transB ? 1 : n,
        transB ? k : 1,
        c.byteOffset + 4 * (m0 * n + n0),
        n,
        alpha,
        beta,
        wasmFlags,
        extra === undefined ? 0 : extra.byteOffset + 4 * n0,
        extra === undefined ? 0 : extra.byteOffset + 4 * (m0 * n + n0),
        n,
        local.byteOffset,
      );
      return;
    }

    // Copy path: [scratch][A tile][B tile][C tile][extra tile], 64-byte aligned.
    const aAt = align64(GEMM_SCRATCH_BYTES);
    const bAt = align64(aAt + 4 * mt * k);
    const cAt = align64(bAt + 4 * k * nt);
    const xAt = align64(cAt + 4 * mt * nt);
    const end = xAt + 4 * mt * nt;
    const { instance, f32 } = privateF32(end);
    stats.copiedTiles++;
    const af = a.f32;
    const bf = b.f32;
    const cf = c.f32;
    if (transA) copyBlock(af, m0, m, k, mt, f32, aAt >> 2);
    else copyBlock(af, m0 * k, k, mt, k, f32, aAt >> 2);
    if (transB) copyBlock(bf, n0 * k, k, nt, k, f32, bAt >> 2);
    else copyBlock(bf, n0, n, k, nt, f32, bAt >> 2);
    if (beta !== 0) copyBlock(cf, m0 * n + n0, n, mt, nt, f32, cAt >> 2);
    if (kind === Kind.LINEAR) f32.set(extra!.f32.subarray(n0, n1), xAt >> 2);
    if (kind === Kind.RELU_GRAD) copyBlock(extra!.f32, m0 * n + n0, n, mt, nt, f32, xAt >> 2);
    instance.gemm(
      mt,
      nt,
      k,
      aAt,
      transA ? 1 : k,
      transA ? mt : 1,
      bAt,
      transB ? 1 : nt,
      transB ? k : 1,
      cAt,
      nt,
      alpha,
      beta,
      wasmFlags,
      xAt,
      xAt,
      nt,
      0,
    );
    storeBlock(f32, cAt >> 2, mt, nt, cf, m0 * n + n0, n);
  };

  return {
    stats,
    matmul: (ctx) => run(ctx, Kind.MATMUL),
    linear: (ctx) => run(ctx, Kind.LINEAR),
    matmul_relu_grad: (ctx) => run(ctx, Kind.RELU_GRAD),
    matmul_bias_grad: (ctx) => {
      need(ctx.bindings[3], 4 * (ctx.constants[1] ?? 0), 'D');
      run(ctx, Kind.MATMUL);
      biasColumns(ctx);
    },
  };
}
