/**
 * WGSL compute kernels of the MLP: one module, one entry point per export of ../kernel-interface.ts
 * (same names, bindings, constants and semantics as the CPU kernels).
 *
 * Binding convention (Keel's WebGPU device, device-webgpu/src/wgsl-source.ts): binding i of an export
 * is `@group(0) @binding(i)`, a storage buffer; the constants are `@group(1) @binding(0)`, a uniform
 * buffer of 32-bit words in dispatch order (declared here as `array<vec4<u32>, 2>`, read through
 * `konst(i)`; f32 constants are bit patterns). Inputs are declared `read` (the device binds every
 * storage binding read-write; the code only reads them). Resource variables are shared between entry
 * points by binding number; no entry point uses two variables of one binding.
 *
 * Every kernel accepts any workgroup count: work is walked grid-stride (`num_workgroups`), so the
 * descriptors' counts are the natural ones, not a requirement.
 *
 * The reductions (softmax_ce, colsum, bias_grad_sgd: reductions.ts) follow the GEMM family: with a
 * workgroup-memory tiling (GPUs) they combine partial results in workgroup memory; with a register
 * tiling (CPU adapters) they run one invocation per row or column, without barriers.
 *
 * GEMM: generated for a GemmTiling (gemm-tiling.ts), chosen per adapter class by `wgslGemmTilingFor`.
 * - Register tilings (lavapipe, SwiftShader; shaped for software rasterizers, where each workgroup runs
 *   on a CPU thread with invocations in SIMD lanes, a load at an address uniform over the workgroup is
 *   a scalar load plus broadcast and any other load is a gather; the default 16×16×8): a 1-D workgroup
 *   of `wg` invocations computes a tile of `tm` rows × `wg·tn` columns of C, each invocation `tm × tn`
 *   outputs in registers (columns `lane + wg·q`). Per k, an invocation loads `tn` values of op(B) (its
 *   columns) and `tm` values of op(A) at workgroup-uniform addresses, then does `tm·tn` FMAs; no
 *   workgroup memory, no barriers. Narrow C (2N < wg·tn and M > N: the 10-logit layers) swaps the roles,
 *   so lanes walk rows instead of idling on columns ≥ N. Operand indices are clamped into the matrices
 *   (the extra lanes compute discarded values), so only the stores check bounds.
 * - Workgroup-memory tilings (GPUs): gemm-shared.ts (bm × bn tiles, K in slabs of bk staged in
 *   workgroup memory with coalesced, zero-padded loads; tm × tn outputs per invocation; vec4 reads;
 *   optionally K split over `ks` groups of the workgroup, added in workgroup memory before the
 *   epilogue). Per-shape tilings pick, per dispatch from the uniform N, a narrow tiling for C of at
 *   most `narrow.bn` columns and a wide one otherwise (same workgroup size). Per-kernel tilings give
 *   each GEMM entry point (forward, weight gradient, input gradient) its own tiling and workgroup size.
 * Both walk tiles grid-stride over the whole (flattened) dispatch grid; transposes are strides; the
 * epilogue (alpha, beta, bias, ReLU, ReLU-gradient mask) is fused into the stores, so the forward
 * layer is one dispatch (GEMM + bias + ReLU), the backward data GEMM applies the ReLU-gradient mask, and
 * the weight-gradient GEMM applies the SGD update in place (alpha = -lr, beta = 1: dW is never stored).
 */

import { sharedGemmDeclarations, sharedMatmulEntry } from './gemm-shared';
import {
  checkGemmTiling,
  type GemmEntry,
  type GemmTiling,
  type GpuGemmTiling,
  gemmTilingOf,
  isPerKernelTiling,
  isPerShapeTiling,
  isSharedTiling,
  type PerKernelGemmTiling,
  perShapeChoice,
  type RegisterGemmTiling,
  usesWorkgroupMemory,
  WGSL_GEMM_TILING,
} from './gemm-tiling';
import { reductionsWgsl } from './reductions';

/**
 * Whether the kernels swap the roles of rows and columns for a C of `m × n` (a narrow C, e.g. the
 * 10 logits: invocations then walk rows instead of mostly idle columns). The WGSL evaluates the same rule.
 */
export const gemmSwaps = (t: RegisterGemmTiling, m: number, n: number): boolean =>
  2 * n < t.wg * t.tn && m > n;

/**
 * Tiles of C (the kernels' unit of work, walked grid-stride over the whole dispatch) for `m × n`, with
 * the tiling GEMM entry point `entry` uses (it matters for per-kernel tilings only).
 */
export function gemmTiles(t: GemmTiling, m: number, n: number, entry: GemmEntry = 'matmul'): number {
  if (isPerKernelTiling(t)) return gemmTiles(gemmTilingOf(t, entry), m, n);
  if (isPerShapeTiling(t)) return gemmTiles(perShapeChoice(t, n), m, n);
  if (isSharedTiling(t)) return Math.ceil(m / t.bm) * Math.ceil(n / t.bn);
  const [u, l] = gemmSwaps(t, m, n) ? [n, m] : [m, n];
  return Math.ceil(u / t.tm) * Math.ceil(l / (t.wg * t.tn));
}

/** Invocations per workgroup of the elementwise kernels (and loss_mean; reductions.ts for the others). */
export const WGSL_WORKGROUP = 256;

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/**
 * The tile loop of one orientation. Normal: the uniform dimension (the `tm` values every invocation
 * shares, loaded once per workgroup-uniform address) is the rows of C, read from A (in0); the lane
 * dimension is the columns, read from B (in1). Swapped: columns from B uniform, rows from A per lane.
 * Every tile element is computed (indices are clamped into the matrix, so loads need no bounds checks);
 * only the stores check bounds.
 */
function tileLoop(t: RegisterGemmTiling, name: string, swapped: boolean): string {
  const [uExt, lExt] = swapped ? ['p.n', 'p.m'] : ['p.m', 'p.n'];
  const [uBuf, lBuf] = swapped ? ['in1', 'in0'] : ['in0', 'in1'];
  // Strides of the uniform / lane operand: along its own dimension and along K.
  const [uS, uK, lS, lK] = swapped ? ['sBc', 'sBk', 'sAr', 'sAk'] : ['sAr', 'sAk', 'sBc', 'sBk'];
  const span = t.wg * t.tn;
  const uOffs = range(t.tm).map((i) => `let uo${i} = min(u0 + ${i}u, ${uExt} - 1u) * ${uS};`);
  const lOffs = range(t.tn).map((q) => `let lo${q} = min(l0 + lid.x + ${q * t.wg}u, ${lExt} - 1u) * ${lS};`);
  const body = [
    ...range(t.tn).map((q) => `let y${q} = ${lBuf}[kl + lo${q}];`),
    ...range(t.tm).flatMap((i) => [
      `let x${i} = ${uBuf}[ku + uo${i}];`,
      ...range(t.tn).map((q) => `a${i}_${q} = fma(x${i}, y${q}, a${i}_${q});`),
    ]),
  ];
  const stores = range(t.tm).flatMap((i) =>
    range(t.tn).map((q) => {
      const u = `u0 + ${i}u`;
      const l = `l0 + lid.x + ${q * t.wg}u`;
      return `store_${name}(p, ${swapped ? l : u}, ${swapped ? u : l}, a${i}_${q});`;
    }),
  );
  const reset = range(t.tm).flatMap((i) => range(t.tn).map((q) => `a${i}_${q} = 0.0;`));
  const ind = (n: number) => `\n${' '.repeat(n)}`;
  return `let tilesU = (${uExt} + ${t.tm - 1}u) / ${t.tm}u;
    let tilesL = (${lExt} + ${span - 1}u) / ${span}u;
    for (var tile = wid.x + nwg.x * (wid.y + nwg.y * wid.z); tile < tilesU * tilesL; tile += nwg.x * nwg.y * nwg.z) {
      // Consecutive tiles share the lane operand's slab (K × ${span}, the larger one).
      let u0 = (tile % tilesU) * ${t.tm}u;
      let l0 = (tile / tilesU) * ${span}u;
      ${reset.join(' ')}
      ${[...uOffs, ...lOffs].join(ind(6))}
      for (var k = 0u; k < p.k; k++) {
        let ku = k * ${uK};
        let kl = k * ${lK};
        ${body.join(ind(8))}
      }
      ${stores.join(ind(6))}
    }`;
}

/**
 * A matmul-family entry point: grid-stride over tiles of C (in `output`), then `epilogue` (WGSL
 * statements on `v`, the value of C at row r, column c, flat index o, after alpha and beta). Separate
 * entry points, not one function with a kind switch: a resource a function references counts as used by
 * every entry point calling it, and binding 2 differs between them. Unrolled by the generator: the
 * accumulators are separate f32 variables (no private arrays indexed in loops).
 */
function matmulEntry(all: GemmTiling, name: GemmEntry, output: string, epilogue: string): string {
  const t = gemmTilingOf(all, name);
  return `fn store_${name}(p: MmParams, r: u32, c: u32, acc: f32) {
  if (r < p.m && c < p.n) {
    let o = r * p.n + c;
    var v = p.alpha * acc;
    if (p.beta != 0.0) { v += p.beta * ${output}[o]; }
    ${epilogue}
    ${output}[o] = v;
  }
}

${isSharedTiling(t) || isPerShapeTiling(t) ? sharedMatmulEntry(t, name) : registerMatmulEntry(t, name)}`;
}

/**
 * `matmul_bias_grad` (C in out2, D in out3): workgroup-memory tilings give op(A) a row of ones (row M
 * of the tiles is Σ_k op(B)[k, c], stored to D by the same epilogue); register tilings (CPU adapters)
 * run matmul's tile loop, then walk D's columns grid-stride, one invocation per column summing op(B)'s
 * column serially (no barriers).
 */
function matmulBiasGradEntry(all: GemmTiling): string {
  const t = gemmTilingOf(all, 'matmul_bias_grad');
  const ones = isSharedTiling(t) || isPerShapeTiling(t);
  // Row M is D only with the ones row; the register tile loops compute rows past M that are dropped.
  const store = `fn store_matmul_bias_grad(p: MmParams, r: u32, c: u32, acc: f32) {
  if (c < p.n && r ${ones ? '<=' : '<'} p.m) {
    let o = select(r * p.n + c, c, r == p.m);
    var v = p.alpha * acc;
    if (r < p.m) {
      if (p.beta != 0.0) { v += p.beta * out2[o]; }
      out2[o] = v;
    } else {
      if (p.beta != 0.0) { v += p.beta * out3[o]; }
      out3[o] = v;
    }
  }
}
`;
  if (ones) return `${store}\n${sharedMatmulEntry(t, 'matmul_bias_grad', true)}`;
  const columns = `for (var c = (wid.x + nwg.x * (wid.y + nwg.y * wid.z)) * ${t.wg}u + lid.x; c < p.n; c += nwg.x * nwg.y * nwg.z * ${t.wg}u) {
    var s = 0.0;
    for (var k = 0u; k < p.k; k++) { s += in1[k * sBk + c * sBc]; }
    var v = p.alpha * s;
    if (p.beta != 0.0) { v += p.beta * out3[c]; }
    out3[c] = v;
  }`;
  return `${store}\n${registerMatmulEntry(t, 'matmul_bias_grad', columns)}`;
}

/** The register-tiled entry point (no workgroup memory; see the file comment). */
function registerMatmulEntry(t: RegisterGemmTiling, name: string, tail = ''): string {
  const decl = range(t.tm).flatMap((i) => range(t.tn).map((q) => `var a${i}_${q} = 0.0;`));
  return `@compute @workgroup_size(${t.wg})
fn ${name}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let p = mmParams();
  let transA = (p.flags & FLAG_TRANS_A) != 0u;
  let transB = (p.flags & FLAG_TRANS_B) != 0u;
  // op(A)[r, k] = in0[r * sAr + k * sAk]; op(B)[k, c] = in1[k * sBk + c * sBc].
  let sAr = select(p.k, 1u, transA);
  let sAk = select(1u, p.m, transA);
  let sBk = select(p.n, 1u, transB);
  let sBc = select(1u, p.k, transB);
  ${decl.join(' ')}
  if (2u * p.n < ${t.wg * t.tn}u && p.m > p.n) {
    ${tileLoop(t, name, true)}
  } else {
    ${tileLoop(t, name, false)}
  }
  ${tail}
}
`;
}

function gemmWgsl(t: GemmTiling): string {
  return `${usesWorkgroupMemory(t) ? `\n${sharedGemmDeclarations(t as GpuGemmTiling | PerKernelGemmTiling)}` : ''}
// ---------------------------------------------------------------------------------------------------
// GEMM family: C = epilogue(alpha · op(A)·op(B) + beta · C). Constants [M, N, K, flags, alpha, beta].

const FLAG_TRANS_A: u32 = 1u;
const FLAG_TRANS_B: u32 = 2u;
const FLAG_RELU: u32 = 4u;

struct MmParams {
  m: u32,
  n: u32,
  k: u32,
  flags: u32,
  alpha: f32,
  beta: f32,
}

fn mmParams() -> MmParams {
  return MmParams(konst(0u), konst(1u), konst(2u), konst(3u), konstF32(4u), konstF32(5u));
}

${matmulEntry(t, 'matmul', 'out2', '')}
${matmulEntry(
  t,
  'linear',
  'out3',
  `v += in2[c];
    if ((p.flags & FLAG_RELU) != 0u) { v = max(v, 0.0); }`,
)}
${matmulEntry(t, 'matmul_relu_grad', 'out3', 'if (!(in2[o] > 0.0)) { v = 0.0; }')}
${matmulBiasGradEntry(t)}
`;
}

/** The WGSL module of the MLP kernels with GEMM tiling `t`. */
export function mlpWgsl(t: GemmTiling = WGSL_GEMM_TILING): string {
  checkGemmTiling(t);
  return /* wgsl */ `
// Keel MLP kernels. Bindings: @group(0) @binding(i) = dispatch binding i; constants: @group(1) @binding(0).

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(1) var<storage, read> labels1: array<u32>;
@group(0) @binding(2) var<storage, read> in2: array<f32>;
@group(0) @binding(1) var<storage, read_write> out1: array<f32>;
@group(0) @binding(2) var<storage, read_write> out2: array<f32>;
@group(0) @binding(3) var<storage, read_write> out3: array<f32>;

@group(1) @binding(0) var<uniform> kwords: array<vec4<u32>, 2>;

fn konst(i: u32) -> u32 {
  return kwords[i / 4u][i % 4u];
}

fn konstF32(i: u32) -> f32 {
  return bitcast<f32>(konst(i));
}

${gemmWgsl(t)}// ---------------------------------------------------------------------------------------------------
// Memory-bound kernels: grid-stride over elements (or rows, or columns).

const WG: u32 = ${WGSL_WORKGROUP}u;

fn stride(nwg: vec3<u32>) -> u32 {
  return nwg.x * WG;
}

// The workgroup's index in the flattened dispatch grid, and the grid's size (workgroup-uniform).
fn flatWorkgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + nwg.x * (wid.y + nwg.y * wid.z);
}

fn workgroups(nwg: vec3<u32>) -> u32 {
  return nwg.x * nwg.y * nwg.z;
}

// Row r of softmax cross-entropy over [logits (in0), labels (labels1)]: writes the row's gradient,
// (softmax - one-hot) · scale, to out2 and returns its loss (NaN for a label ≥ classes). Shared by
// softmax_ce_loss and the serial softmax_ce (reductions.ts).
fn softmaxCeRow(r: u32, classes: u32, scale: f32) -> f32 {
  let base = r * classes;
  var mx = in0[base];
  for (var c = 1u; c < classes; c++) { mx = max(mx, in0[base + c]); }
  var sum = 0.0;
  for (var c = 0u; c < classes; c++) { sum += exp(in0[base + c] - mx); }
  let label = labels1[r];
  let inv = 1.0 / sum;
  for (var c = 0u; c < classes; c++) {
    let prob = exp(in0[base + c] - mx) * inv;
    out2[base + c] = (prob - select(0.0, 1.0, c == label)) * scale;
  }
  if (label < classes) { return log(sum) - (in0[base + label] - mx); }
  return bitcast<f32>(0x7fc00000u | (label & 0u)); // NaN (runtime: const NaN is an error)
}

// bias_add: [bias, Y]; constants [rows, cols]. Y[r, c] += bias[c].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn bias_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let cols = konst(1u);
  let count = konst(0u) * cols;
  for (var i = gid.x; i < count; i += stride(nwg)) {
    out1[i] = out1[i] + in0[i % cols];
  }
}

// relu: [X, Y]; constants [count].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn relu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let count = konst(0u);
  for (var i = gid.x; i < count; i += stride(nwg)) {
    out1[i] = max(in0[i], 0.0);
  }
}

// relu_grad: [dY, H, dX]; constants [count].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn relu_grad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let count = konst(0u);
  for (var i = gid.x; i < count; i += stride(nwg)) {
    out2[i] = select(0.0, in0[i], in1[i] > 0.0);
  }
}

${reductionsWgsl(usesWorkgroupMemory(t))}
var<workgroup> partial: array<f32, ${WGSL_WORKGROUP}>;

// loss_mean: [rowLoss, loss]; constants [rows]. Workgroup 0 reduces; others return.
@compute @workgroup_size(${WGSL_WORKGROUP})
fn loss_mean(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  if (wid.x != 0u || wid.y != 0u || wid.z != 0u) { return; }
  let rows = konst(0u);
  var s = 0.0;
  for (var r = lid.x; r < rows; r += WG) { s += in0[r]; }
  partial[lid.x] = s;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half /= 2u) {
    if (lid.x < half) { partial[lid.x] += partial[lid.x + half]; }
    workgroupBarrier();
  }
  if (lid.x == 0u) {
    out1[0] = select(partial[0] / f32(rows), 0.0, rows == 0u);
  }
}

// softmax_ce_loss: [logits, labels, dLogits, loss]; constants [rows, classes]. softmax_ce and loss_mean
// in one dispatch: workgroup 0 walks the rows (one invocation per row, classes serially), sums the row
// losses in workgroup memory and writes their mean; others return. A label ≥ classes gives a NaN loss.
@compute @workgroup_size(${WGSL_WORKGROUP})
fn softmax_ce_loss(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  if (wid.x != 0u || wid.y != 0u || wid.z != 0u) { return; }
  let rows = konst(0u);
  let classes = konst(1u);
  let scale = 1.0 / f32(rows);
  var total = 0.0;
  for (var r = lid.x; r < rows; r += WG) {
    total += softmaxCeRow(r, classes, scale);
  }
  partial[lid.x] = total;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half /= 2u) {
    if (lid.x < half) { partial[lid.x] += partial[lid.x + half]; }
    workgroupBarrier();
  }
  if (lid.x == 0u) {
    out3[0] = select(partial[0] / f32(rows), 0.0, rows == 0u);
  }
}

// sgd: [grad, param]; constants [count, lr].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn sgd(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let count = konst(0u);
  let lr = konstF32(1u);
  for (var i = gid.x; i < count; i += stride(nwg)) {
    out1[i] = out1[i] - lr * in0[i];
  }
}

`;
}

export const MLP_WGSL = mlpWgsl();
