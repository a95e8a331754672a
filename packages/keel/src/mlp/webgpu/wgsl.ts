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
 * GEMM: a 64×64 tile of C per workgroup of 16×16 invocations, each computing 4×4 outputs (rows
 * `ty + 16i`, columns `tx + 16j`: coalesced loads of B and stores of C, broadcast reads of A), K in steps
 * of 16 staged through workgroup memory as k-major tiles; transposed operands are handled in the tile
 * loads (coalesced along the stored layout's contiguous dimension). The epilogue (alpha, beta, bias,
 * ReLU, ReLU-gradient mask) is fused.
 */

/** Side of the square C tile of one matmul workgroup. */
export const WGSL_MATMUL_TILE = 64;
/** Invocations per workgroup of the elementwise kernels (and loss_mean, colsum, bias_grad_sgd). */
export const WGSL_WORKGROUP = 256;
/** Invocations (rows) per workgroup of softmax_ce. */
export const WGSL_SOFTMAX_WORKGROUP = 64;

/**
 * A matmul-family entry point: grid-stride over 64×64 tiles of C (in `output`), the shared GEMM tile,
 * then `epilogue` (WGSL statements on \`v\`, the value of C at row r, column c, flat index o, after
 * alpha and beta). Separate entry points, not one function with a kind switch: a resource a function
 * references counts as used by every entry point calling it, and binding 2 differs between them.
 */
function matmulEntry(name: string, output: string, epilogue: string): string {
  return `@compute @workgroup_size(16, 16)
fn ${name}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  if (wid.z != 0u) { return; }
  let p = mmParams();
  let tilesX = (p.n + TILE - 1u) / TILE;
  let tilesY = (p.m + TILE - 1u) / TILE;
  for (var ty = wid.y; ty < tilesY; ty += nwg.y) {
    for (var tx = wid.x; tx < tilesX; tx += nwg.x) {
      let acc = mmTile(p, ty * TILE, tx * TILE, lid.x, lid.y);
      for (var i = 0u; i < 4u; i++) {
        let r = ty * TILE + lid.y + 16u * i;
        for (var j = 0u; j < 4u; j++) {
          let c = tx * TILE + lid.x + 16u * j;
          if (r < p.m && c < p.n) {
            let o = r * p.n + c;
            var v = p.alpha * acc[i][j];
            if (p.beta != 0.0) { v += p.beta * ${output}[o]; }
            ${epilogue}
            ${output}[o] = v;
          }
        }
      }
    }
  }
}
`;
}

export const MLP_WGSL = /* wgsl */ `
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

// ---------------------------------------------------------------------------------------------------
// GEMM family: C = epilogue(alpha · op(A)·op(B) + beta · C). Constants [M, N, K, flags, alpha, beta].

const TILE: u32 = ${WGSL_MATMUL_TILE}u;
const KT: u32 = 16u;
const FLAG_TRANS_A: u32 = 1u;
const FLAG_TRANS_B: u32 = 2u;
const FLAG_RELU: u32 = 4u;

var<workgroup> tileA: array<f32, 1024>; // [KT][TILE]: tileA[kk * TILE + r] = op(A)[row0 + r, k0 + kk]
var<workgroup> tileB: array<f32, 1024>; // [KT][TILE]: tileB[kk * TILE + c] = op(B)[k0 + kk, col0 + c]

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

// The 4×4 sums of invocation (tx, ty) for the tile at (row0, col0): acc[i][j] = C[row0 + ty + 16i, col0 + tx + 16j].
fn mmTile(p: MmParams, row0: u32, col0: u32, tx: u32, ty: u32) -> array<vec4<f32>, 4> {
  var acc: array<vec4<f32>, 4>;
  let t = ty * 16u + tx;
  let transA = (p.flags & FLAG_TRANS_A) != 0u;
  let transB = (p.flags & FLAG_TRANS_B) != 0u;
  for (var k0 = 0u; k0 < p.k; k0 += KT) {
    for (var e = 0u; e < 4u; e++) {
      let idx = t + 256u * e;
      var r: u32;
      var ka: u32;
      if (transA) { ka = idx / TILE; r = idx % TILE; } else { r = idx / KT; ka = idx % KT; }
      let gr = row0 + r;
      let gka = k0 + ka;
      var av = 0.0;
      if (gr < p.m && gka < p.k) {
        if (transA) { av = in0[gka * p.m + gr]; } else { av = in0[gr * p.k + gka]; }
      }
      tileA[ka * TILE + r] = av;
      var c: u32;
      var kb: u32;
      if (transB) { c = idx / KT; kb = idx % KT; } else { kb = idx / TILE; c = idx % TILE; }
      let gc = col0 + c;
      let gkb = k0 + kb;
      var bv = 0.0;
      if (gc < p.n && gkb < p.k) {
        if (transB) { bv = in1[gc * p.k + gkb]; } else { bv = in1[gkb * p.n + gc]; }
      }
      tileB[kb * TILE + c] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < KT; kk++) {
      let base = kk * TILE;
      let b = vec4<f32>(tileB[base + tx], tileB[base + tx + 16u], tileB[base + tx + 32u], tileB[base + tx + 48u]);
      acc[0] += tileA[base + ty] * b;
      acc[1] += tileA[base + ty + 16u] * b;
      acc[2] += tileA[base + ty + 32u] * b;
      acc[3] += tileA[base + ty + 48u] * b;
    }
    workgroupBarrier();
  }
  return acc;
}

${matmulEntry('matmul', 'out2', '')}
${matmulEntry(
  'linear',
  'out3',
  `v += in2[c];
              if ((p.flags & FLAG_RELU) != 0u) { v = max(v, 0.0); }`,
)}
${matmulEntry('matmul_relu_grad', 'out3', 'if (!(in2[o] > 0.0)) { v = 0.0; }')}
// ---------------------------------------------------------------------------------------------------
// Memory-bound kernels: grid-stride over elements (or rows, or columns).

const WG: u32 = ${WGSL_WORKGROUP}u;

fn stride(nwg: vec3<u32>) -> u32 {
  return nwg.x * WG;
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

// softmax_ce: [logits, labels, dLogits, rowLoss]; constants [rows, classes]. A label ≥ classes gives a NaN loss.
@compute @workgroup_size(${WGSL_SOFTMAX_WORKGROUP})
fn softmax_ce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let rows = konst(0u);
  let classes = konst(1u);
  let scale = 1.0 / f32(rows);
  for (var r = gid.x; r < rows; r += nwg.x * ${WGSL_SOFTMAX_WORKGROUP}u) {
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
    if (label < classes) {
      out3[r] = log(sum) - (in0[base + label] - mx);
    } else {
      out3[r] = bitcast<f32>(0x7fc00000u | (label & 0u)); // NaN (runtime: const NaN is an error)
    }
  }
}

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

// colsum: [X, out]; constants [rows, cols].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn colsum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  for (var c = gid.x; c < cols; c += stride(nwg)) {
    var s = 0.0;
    for (var r = 0u; r < rows; r++) { s += in0[r * cols + c]; }
    out1[c] = s;
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

// bias_grad_sgd: [dY, bias]; constants [rows, cols, lr].
@compute @workgroup_size(${WGSL_WORKGROUP})
fn bias_grad_sgd(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  let lr = konstF32(2u);
  for (var c = gid.x; c < cols; c += stride(nwg)) {
    var s = 0.0;
    for (var r = 0u; r < rows; r++) { s += in0[r * cols + c]; }
    out1[c] = out1[c] - lr * s;
  }
}
`;
