/**
 * The workgroup-memory GEMM entry points of the WGSL module (tilings of kind 'shared', for GPUs).
 *
 * A workgroup computes a `bm × bn` tile of C = epilogue(alpha · op(A)·op(B) + beta · C). Per slab of
 * `bk` along K, every invocation copies its share of the `bm × bk` slab of op(A) and the `bk × bn` slab
 * of op(B) into workgroup memory (`gemmA` as [k][m], `gemmB` as [k][n], vec4 arrays). The copy walks
 * the matrix's contiguous dimension across consecutive invocations (K for a plain A, M for a transposed
 * one; N for a plain B, K for a transposed one), so global loads coalesce for every transpose; indices
 * are clamped into the matrices and values outside them are stored as 0, so sizes that are not
 * multiples of the tile (10 outputs, K = 784 or 10) need no other case. After a barrier, invocation
 * (tx, ty) accumulates rows `ty·tm ..` and columns `tx·tn ..` of the tile in `tm·tn` registers, reading
 * the slabs as vec4 (one load per 4 rows or columns when tm/tn ≥ 4). Only the stores check bounds,
 * through the entry's fused epilogue (alpha, beta, bias, ReLU, ReLU-gradient mask).
 *
 * Tiles are walked grid-stride over the flattened dispatch grid, so any workgroup count is correct;
 * every barrier sits in loops whose bounds are uniform (workgroup ids, counts, constants).
 */
import type { SharedGemmTiling } from './gemm-tiling';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const ind = (n: number): string => `\n${' '.repeat(n)}`;

/** The workgroup-memory declarations the shared entry points use (once per module). */
export function sharedGemmDeclarations(t: SharedGemmTiling): string {
  return `var<workgroup> gemmA: array<vec4<f32>, ${(t.bk * t.bm) / 4}>; // op(A) slab, [k][m]
var<workgroup> gemmB: array<vec4<f32>, ${(t.bk * t.bn) / 4}>; // op(B) slab, [k][n]
`;
}

/**
 * Reads of one k row of a slab for `count` consecutive elements starting at `start` (WGSL u32
 * expression) of the row `row` (a constant k): scalar WGSL expressions, one per element.
 */
function slabReads(
  slab: 'gemmA' | 'gemmB',
  width: number,
  count: number,
  start: string,
  kk: number,
  prefix: string,
): { lets: string[]; values: string[] } {
  const base = kk * width;
  if (count % 4 === 0) {
    const lets = range(count / 4).map(
      (j) => `let ${prefix}${j} = ${slab}[${base / 4}u + ${start} / 4u + ${j}u];`,
    );
    const values = range(count).map((i) => `${prefix}${Math.floor(i / 4)}[${i % 4}]`);
    return { lets, values };
  }
  const lets = range(count).map((i) => {
    const e = `${base}u + ${start} + ${i}u`;
    return `let ${prefix}${i} = ${slab}[(${e}) / 4u][(${e}) % 4u];`;
  });
  return { lets, values: range(count).map((i) => `${prefix}${i}`) };
}

/** The copy of one slab into workgroup memory: `elements` values over `threads` invocations. */
function slabCopy(
  slab: 'gemmA' | 'gemmB',
  elements: number,
  threads: number,
  body: (i: string) => string[],
): string[] {
  const copies = Math.ceil(elements / threads);
  return range(copies).flatMap((e) => {
    const i = `li + ${e * threads}u`;
    const lines = body(`i${slab}${e}`);
    const guarded = elements % threads !== 0 && e === copies - 1;
    return [
      `${guarded ? `if (${i} < ${elements}u) ` : ''}{`,
      `  let i${slab}${e} = ${i};`,
      ...lines.map((l) => `  ${l}`),
      '}',
    ];
  });
}

/**
 * A matmul-family entry point with workgroup-memory tiling `t` (see the file comment). `store` is the
 * name of the entry's store function (`store_<name>(p, r, c, acc)`, epilogue and bounds check).
 */
export function sharedMatmulEntry(t: SharedGemmTiling, name: string): string {
  const tx = t.bn / t.tn;
  const threads = tx * (t.bm / t.tm);
  const accs = range(t.tm).flatMap((i) => range(t.tn).map((j) => `c${i}_${j}`));
  const copyA = slabCopy('gemmA', t.bm * t.bk, threads, (i) => [
    `let r = select(${i} % ${t.bm}u, ${i} / ${t.bk}u, aKFast);`,
    `let kk = select(${i} / ${t.bm}u, ${i} % ${t.bk}u, aKFast);`,
    'let gr = m0 + r;',
    'let gk = k0 + kk;',
    'let v = in0[min(gr, mLast) * sAr + min(gk, kLast) * sAk];',
    `let e = kk * ${t.bm}u + r;`,
    'gemmA[e / 4u][e % 4u] = select(0.0, v, gr < p.m && gk < p.k);',
  ]);
  const copyB = slabCopy('gemmB', t.bn * t.bk, threads, (i) => [
    `let c = select(${i} / ${t.bk}u, ${i} % ${t.bn}u, bNFast);`,
    `let kk = select(${i} % ${t.bk}u, ${i} / ${t.bn}u, bNFast);`,
    'let gc = n0 + c;',
    'let gk = k0 + kk;',
    'let v = in1[min(gk, kLast) * sBk + min(gc, nLast) * sBc];',
    `let e = kk * ${t.bn}u + c;`,
    'gemmB[e / 4u][e % 4u] = select(0.0, v, gc < p.n && gk < p.k);',
  ]);
  const inner = range(t.bk).flatMap((kk) => {
    const a = slabReads('gemmA', t.bm, t.tm, 'rowA', kk, `a${kk}_`);
    const b = slabReads('gemmB', t.bn, t.tn, 'colB', kk, `b${kk}_`);
    return [
      ...a.lets,
      ...b.lets,
      ...range(t.tm).flatMap((i) =>
        range(t.tn).map((j) => `c${i}_${j} = fma(${a.values[i]}, ${b.values[j]}, c${i}_${j});`),
      ),
    ];
  });
  const stores = range(t.tm).flatMap((i) =>
    range(t.tn).map((j) => `store_${name}(p, m0 + rowA + ${i}u, n0 + colB + ${j}u, c${i}_${j});`),
  );
  return `@compute @workgroup_size(${threads})
fn ${name}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let p = mmParams();
  let transA = (p.flags & FLAG_TRANS_A) != 0u;
  let transB = (p.flags & FLAG_TRANS_B) != 0u;
  // op(A)[r, k] = in0[r * sAr + k * sAk]; op(B)[k, c] = in1[k * sBk + c * sBc].
  let sAr = select(p.k, 1u, transA);
  let sAk = select(1u, p.m, transA);
  let sBk = select(p.n, 1u, transB);
  let sBc = select(1u, p.k, transB);
  // The slab copies walk the contiguous dimension across invocations.
  let aKFast = !transA;
  let bNFast = !transB;
  let mLast = max(p.m, 1u) - 1u;
  let nLast = max(p.n, 1u) - 1u;
  let kLast = max(p.k, 1u) - 1u;
  let rowA = (li / ${tx}u) * ${t.tm}u;
  let colB = (li % ${tx}u) * ${t.tn}u;
  let tilesM = (p.m + ${t.bm - 1}u) / ${t.bm}u;
  let tilesN = (p.n + ${t.bn - 1}u) / ${t.bn}u;
  ${accs.map((c) => `var ${c} = 0.0;`).join(' ')}
  for (var tile = wid.x + nwg.x * (wid.y + nwg.y * wid.z); tile < tilesM * tilesN; tile += nwg.x * nwg.y * nwg.z) {
    let m0 = (tile % tilesM) * ${t.bm}u;
    let n0 = (tile / tilesM) * ${t.bn}u;
    ${accs.map((c) => `${c} = 0.0;`).join(' ')}
    for (var k0 = 0u; k0 < p.k; k0 += ${t.bk}u) {
      ${[...copyA, ...copyB].join(ind(6))}
      workgroupBarrier();
      ${inner.join(ind(6))}
      workgroupBarrier();
    }
    ${stores.join(ind(4))}
  }
}
`;
}
