/**
 * The WGSL reductions of the MLP module (softmax_ce, colsum, bias_grad_sgd), in two styles, and their
 * workgroup shapes. Same contracts as ../kernel-interface.ts in both; both walk a flattened grid
 * (`flatWorkgroup`, `workgroups`: wgsl.ts), so any workgroup count, 3-D included, is correct.
 *
 * - Parallel (GPUs: modules with a workgroup-memory GEMM tiling). colsum and bias_grad_sgd: a workgroup
 *   of 16 columns × 16 row slices; invocation (x, y) sums rows y, y + 16, ... of its column (four
 *   accumulators in flight; a row's 16 columns are consecutive, so reads coalesce), the partial sums are
 *   added in workgroup memory, one invocation per column writes. softmax_ce: 16 rows × 16 lanes per
 *   workgroup (lane x takes classes x, x + 16, ...), the row's max and sum of exponentials reduced in
 *   workgroup memory. Barriers sit in uniform control flow (loops over workgroups, bounds from
 *   constants): no extension needed.
 * - Serial (CPU adapters: register tilings; lavapipe and SwiftShader run each workgroup on a CPU thread,
 *   where barriers cost more than the parallelism gains: measured 0.13 → 0.53 ms per 256×512 colsum on
 *   lavapipe): one invocation per column (colsum, bias_grad_sgd) or per row (softmax_ce), no barriers.
 */

/** softmax_ce's parallel workgroup: WGSL_SOFTMAX_ROWS rows × WGSL_SOFTMAX_LANES invocations per row. */
export const WGSL_SOFTMAX_LANES = 16;
export const WGSL_SOFTMAX_ROWS = 16;
/** The parallel column reductions' workgroup: WGSL_COLSUM_COLS columns × WGSL_COLSUM_SLICES row slices. */
export const WGSL_COLSUM_COLS = 16;
export const WGSL_COLSUM_SLICES = 16;
/** Invocations per workgroup of the serial reductions (one column or row each). */
export const WGSL_SERIAL_WORKGROUP = 64;

/** A workgroup shape and the count for a workload (`[rows]` for softmax_ce, `[cols]` for the others). */
export interface ReductionShape {
  readonly size: readonly [number, number, number];
  /** Workgroups needed to give every row (column) its own share, before any cap. */
  readonly per: number;
}

export type ReductionKernel = 'softmax_ce' | 'colsum' | 'bias_grad_sgd';

/** The workgroup shapes of the reductions in the given style. */
export function reductionShapes(parallel: boolean): Readonly<Record<ReductionKernel, ReductionShape>> {
  if (!parallel) {
    const serial: ReductionShape = { size: [WGSL_SERIAL_WORKGROUP, 1, 1], per: WGSL_SERIAL_WORKGROUP };
    return { softmax_ce: serial, colsum: serial, bias_grad_sgd: serial };
  }
  const columns: ReductionShape = { size: [WGSL_COLSUM_COLS, WGSL_COLSUM_SLICES, 1], per: WGSL_COLSUM_COLS };
  return {
    softmax_ce: { size: [WGSL_SOFTMAX_LANES, WGSL_SOFTMAX_ROWS, 1], per: WGSL_SOFTMAX_ROWS },
    colsum: columns,
    bias_grad_sgd: columns,
  };
}

const SERIAL = /* wgsl */ `
// Serial reductions: one invocation per row (softmax_ce) or column (colsum, bias_grad_sgd).
const SR_WG: u32 = ${WGSL_SERIAL_WORKGROUP}u;

// softmax_ce: [logits, labels, dLogits, rowLoss]; constants [rows, classes]. A label ≥ classes gives a NaN loss.
@compute @workgroup_size(${WGSL_SERIAL_WORKGROUP})
fn softmax_ce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let classes = konst(1u);
  let scale = 1.0 / f32(rows);
  for (var r = flatWorkgroup(wid, nwg) * SR_WG + lid.x; r < rows; r += workgroups(nwg) * SR_WG) {
    out3[r] = softmaxCeRow(r, classes, scale); // wgsl.ts
  }
}

// colsum: [X, out]; constants [rows, cols].
@compute @workgroup_size(${WGSL_SERIAL_WORKGROUP})
fn colsum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  for (var c = flatWorkgroup(wid, nwg) * SR_WG + lid.x; c < cols; c += workgroups(nwg) * SR_WG) {
    var s = 0.0;
    for (var r = 0u; r < rows; r++) { s += in0[r * cols + c]; }
    out1[c] = s;
  }
}

// bias_grad_sgd: [dY, bias]; constants [rows, cols, lr].
@compute @workgroup_size(${WGSL_SERIAL_WORKGROUP})
fn bias_grad_sgd(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  let lr = konstF32(2u);
  for (var c = flatWorkgroup(wid, nwg) * SR_WG + lid.x; c < cols; c += workgroups(nwg) * SR_WG) {
    var s = 0.0;
    for (var r = 0u; r < rows; r++) { s += in0[r * cols + c]; }
    out1[c] = out1[c] - lr * s;
  }
}
`;

const PARALLEL = /* wgsl */ `
// softmax_ce: [logits, labels, dLogits, rowLoss]; constants [rows, classes]. A label ≥ classes gives a NaN loss.
// A workgroup holds SM_ROWS rows, SM_LANES invocations per row (lane x takes classes x, x + SM_LANES, ...);
// the row's max and sum of exponentials are reduced over its lanes in workgroup memory.
const SM_LANES: u32 = ${WGSL_SOFTMAX_LANES}u;
const SM_ROWS: u32 = ${WGSL_SOFTMAX_ROWS}u;
var<workgroup> rowpart: array<f32, ${WGSL_SOFTMAX_LANES * WGSL_SOFTMAX_ROWS}>;

// The max (isMax) or sum of v over the SM_LANES lanes of row slot lid.y, in every lane. Uniform control flow only.
fn row_reduce(v: f32, lid: vec3<u32>, isMax: bool) -> f32 {
  let slot = lid.y * SM_LANES;
  rowpart[slot + lid.x] = v;
  workgroupBarrier();
  var t = rowpart[slot];
  for (var i = 1u; i < SM_LANES; i++) {
    let w = rowpart[slot + i];
    t = select(t + w, max(t, w), isMax);
  }
  workgroupBarrier(); // the next call overwrites rowpart
  return t;
}

@compute @workgroup_size(${WGSL_SOFTMAX_LANES}, ${WGSL_SOFTMAX_ROWS})
fn softmax_ce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let classes = konst(1u);
  let scale = 1.0 / f32(rows);
  let groups = (rows + SM_ROWS - 1u) / SM_ROWS;
  for (var g = flatWorkgroup(wid, nwg); g < groups; g += workgroups(nwg)) {
    let r = g * SM_ROWS + lid.y;
    let live = r < rows && classes > 0u;
    let base = r * classes;
    var mx = 0.0;
    if (live) {
      mx = in0[base];
      for (var c = lid.x; c < classes; c += SM_LANES) { mx = max(mx, in0[base + c]); }
    }
    mx = row_reduce(mx, lid, true);
    var sum = 0.0;
    if (live) {
      for (var c = lid.x; c < classes; c += SM_LANES) { sum += exp(in0[base + c] - mx); }
    }
    sum = row_reduce(sum, lid, false);
    if (live) {
      let label = labels1[r];
      let inv = 1.0 / sum;
      for (var c = lid.x; c < classes; c += SM_LANES) {
        let prob = exp(in0[base + c] - mx) * inv;
        out2[base + c] = (prob - select(0.0, 1.0, c == label)) * scale;
      }
      if (lid.x == 0u) {
        if (label < classes) {
          out3[r] = log(sum) - (in0[base + label] - mx);
        } else {
          out3[r] = bitcast<f32>(0x7fc00000u | (label & 0u)); // NaN (runtime: const NaN is an error)
        }
      }
    }
  }
}

// Column reductions (colsum, bias_grad_sgd): a workgroup of CS_COLS columns × CS_SLICES row slices;
// workgroup g takes columns g·CS_COLS ... (grid-stride). Invocation (x, y) sums rows y, y + CS_SLICES, ...
// of its column (four accumulators, so loads overlap; a row's CS_COLS columns are consecutive: coalesced),
// then the slices' partial sums are added in workgroup memory.
const CS_COLS: u32 = ${WGSL_COLSUM_COLS}u;
const CS_SLICES: u32 = ${WGSL_COLSUM_SLICES}u;
var<workgroup> colpart: array<f32, ${WGSL_COLSUM_COLS * WGSL_COLSUM_SLICES}>;

// Σ_r in0[r, c] (0 for c ≥ cols) in every invocation of column lane lid.x. Uniform control flow only.
fn column_sum(c: u32, rows: u32, cols: u32, lid: vec3<u32>) -> f32 {
  var s0 = 0.0;
  var s1 = 0.0;
  var s2 = 0.0;
  var s3 = 0.0;
  if (c < cols) {
    var r = lid.y;
    for (; r + 3u * CS_SLICES < rows; r += 4u * CS_SLICES) {
      s0 += in0[r * cols + c];
      s1 += in0[(r + CS_SLICES) * cols + c];
      s2 += in0[(r + 2u * CS_SLICES) * cols + c];
      s3 += in0[(r + 3u * CS_SLICES) * cols + c];
    }
    for (; r < rows; r += CS_SLICES) { s0 += in0[r * cols + c]; }
  }
  colpart[lid.y * CS_COLS + lid.x] = (s0 + s1) + (s2 + s3);
  workgroupBarrier();
  var t = colpart[lid.x];
  for (var y = 1u; y < CS_SLICES; y++) { t += colpart[y * CS_COLS + lid.x]; }
  workgroupBarrier(); // the next call overwrites colpart
  return t;
}

// colsum: [X, out]; constants [rows, cols].
@compute @workgroup_size(${WGSL_COLSUM_COLS}, ${WGSL_COLSUM_SLICES})
fn colsum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  let groups = (cols + CS_COLS - 1u) / CS_COLS;
  for (var g = flatWorkgroup(wid, nwg); g < groups; g += workgroups(nwg)) {
    let c = g * CS_COLS + lid.x;
    let s = column_sum(c, rows, cols, lid);
    if (lid.y == 0u && c < cols) { out1[c] = s; }
  }
}

// bias_grad_sgd: [dY, bias]; constants [rows, cols, lr]. The column reduction of colsum, then the update.
@compute @workgroup_size(${WGSL_COLSUM_COLS}, ${WGSL_COLSUM_SLICES})
fn bias_grad_sgd(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = konst(0u);
  let cols = konst(1u);
  let lr = konstF32(2u);
  let groups = (cols + CS_COLS - 1u) / CS_COLS;
  for (var g = flatWorkgroup(wid, nwg); g < groups; g += workgroups(nwg)) {
    let c = g * CS_COLS + lid.x;
    let s = column_sum(c, rows, cols, lid);
    if (lid.y == 0u && c < cols) { out1[c] = out1[c] - lr * s; }
  }
}
`;

/**
 * The WGSL of softmax_ce, colsum and bias_grad_sgd in the parallel or serial style (text for wgsl.ts's
 * module: uses its bindings, `konst`, `konstF32`, `flatWorkgroup` and `workgroups`).
 */
export function reductionsWgsl(parallel: boolean): string {
  return parallel ? PARALLEL : SERIAL;
}
