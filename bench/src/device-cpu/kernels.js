// CPU kernels of the device-cpu benchmark (loaded by URL in the device's workers).

/** Does nothing: measures per-dispatch overhead. */
export function empty() {}

/** Output tile of one matmul workgroup: TILE_M rows × TILE_N columns. */
export const TILE_M = 32;
export const TILE_N = 128;

/** C[i][j] for one element (edges of tiles that are not multiples of 4). */
function dot(a, b, k, n, i, j) {
  let s = 0;
  for (let kk = 0, ai = i * k, bi = j; kk < k; kk++, bi += n) s += a[ai + kk] * b[bi];
  return s;
}

/**
 * C = A · B for row-major f32 matrices: A is M×K, B is K×N, C is M×N; constants [M, N, K].
 * One workgroup per TILE_M × TILE_N tile of C (workgroupId = [tile column, tile row, 0]).
 *
 * Cache blocking: a tile reads a TILE_M-row panel of A (TILE_M × K) and a TILE_N-column panel of B
 * (K × TILE_N: 256 KiB for K = 512), which stay in L2 while the tile is computed. Register blocking:
 * each 4×4 block of C is accumulated in 16 locals (f64) over the whole K, reading 4 values of A and 4 of
 * B per step (16 multiply-adds per 8 loads).
 */
export function matmul(ctx) {
  const a = ctx.bindings[0].f32;
  const b = ctx.bindings[1].f32;
  const c = ctx.bindings[2].f32;
  const m = ctx.constants[0];
  const n = ctx.constants[1];
  const k = ctx.constants[2];
  const j0 = ctx.workgroupId[0] * TILE_N;
  const i0 = ctx.workgroupId[1] * TILE_M;
  const iEnd = Math.min(m, i0 + TILE_M);
  const jEnd = Math.min(n, j0 + TILE_N);
  const i4 = i0 + ((iEnd - i0) & ~3);
  const j4 = j0 + ((jEnd - j0) & ~3);
  for (let i = i0; i < i4; i += 4) {
    const a0 = i * k;
    const a1 = a0 + k;
    const a2 = a1 + k;
    const a3 = a2 + k;
    for (let j = j0; j < j4; j += 4) {
      let s00 = 0,
        s01 = 0,
        s02 = 0,
        s03 = 0;
      let s10 = 0,
        s11 = 0,
        s12 = 0,
        s13 = 0;
      let s20 = 0,
        s21 = 0,
        s22 = 0,
        s23 = 0;
      let s30 = 0,
        s31 = 0,
        s32 = 0,
        s33 = 0;
      for (let kk = 0, bi = j; kk < k; kk++, bi += n) {
        const b0 = b[bi];
        const b1 = b[bi + 1];
        const b2 = b[bi + 2];
        const b3 = b[bi + 3];
        let x = a[a0 + kk];
        s00 += x * b0;
        s01 += x * b1;
        s02 += x * b2;
        s03 += x * b3;
        x = a[a1 + kk];
        s10 += x * b0;
        s11 += x * b1;
        s12 += x * b2;
        s13 += x * b3;
        x = a[a2 + kk];
        s20 += x * b0;
        s21 += x * b1;
        s22 += x * b2;
        s23 += x * b3;
        x = a[a3 + kk];
        s30 += x * b0;
        s31 += x * b1;
        s32 += x * b2;
        s33 += x * b3;
      }
      let o = i * n + j;
      c[o] = s00;
      c[o + 1] = s01;
      c[o + 2] = s02;
      c[o + 3] = s03;
      o += n;
      c[o] = s10;
      c[o + 1] = s11;
      c[o + 2] = s12;
      c[o + 3] = s13;
      o += n;
      c[o] = s20;
      c[o + 1] = s21;
      c[o + 2] = s22;
      c[o + 3] = s23;
      o += n;
      c[o] = s30;
      c[o + 1] = s31;
      c[o + 2] = s32;
      c[o + 3] = s33;
    }
    for (let j = j4; j < jEnd; j++) for (let r = i; r < i + 4; r++) c[r * n + j] = dot(a, b, k, n, r, j);
  }
  for (let i = i4; i < iEnd; i++) for (let j = j0; j < jEnd; j++) c[i * n + j] = dot(a, b, k, n, i, j);
}

/** Spins for constants[0] milliseconds (keeps a worker busy). */
export function busy(ctx) {
  const until = performance.now() + ctx.constants[0];
  while (performance.now() < until) {}
}
